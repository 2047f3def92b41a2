//! Forks share their history instead of copying it, and never see each other's appends.

use std::sync::Arc;

use subagent_session::{EventLog, Message, SessionEvent, StopReason};

fn big_log(n: usize) -> EventLog {
    let mut log = EventLog::new();
    for i in 0..n {
        if i % 3 == 2 {
            log.append(SessionEvent::TurnEnd {
                stop_reason: StopReason::Completed,
            });
        } else {
            log.append(SessionEvent::message(Message::user(format!("event {i}"))));
        }
    }
    log
}

#[test]
fn forks_of_a_100k_event_log_share_every_event() {
    let parent = big_log(100_000);
    let forks: Vec<EventLog> = (0..100).map(|_| parent.fork()).collect();
    for fork in &forks {
        assert_eq!(fork.len(), 100_000);
    }
    for seq in 0..parent.len() {
        let event = parent.get(seq).unwrap();
        // One reference held by the shared segment and one by `event`: 100 forks copied nothing.
        assert_eq!(Arc::strong_count(&event), 2, "event {seq} was copied");
        assert!(forks[99].shares_event(&parent, seq));
    }
}

#[test]
fn appends_do_not_leak_between_forks() {
    let mut parent = big_log(100_000);
    let mut a = parent.fork();
    let mut b = parent.fork();
    a.append(SessionEvent::message(Message::user("only a")));
    b.append(SessionEvent::message(Message::user("only b")));
    b.append(SessionEvent::message(Message::user("b again")));
    parent.append(SessionEvent::message(Message::user("only parent")));

    assert_eq!(
        (parent.len(), a.len(), b.len()),
        (100_001, 100_001, 100_002)
    );
    let text = |log: &EventLog, seq| log.get(seq).unwrap().as_message().unwrap().text();
    assert_eq!(text(&a, 100_000), "only a");
    assert_eq!(text(&b, 100_000), "only b");
    assert_eq!(text(&b, 100_001), "b again");
    assert_eq!(text(&parent, 100_000), "only parent");
    assert!(parent.get(100_001).is_none());

    // A fork of a fork still shares the root history and diverges on its own.
    let mut c = b.fork();
    c.append(SessionEvent::message(Message::user("only c")));
    assert_eq!(b.len(), 100_002);
    assert!(c.shares_event(&parent, 99_999));
    assert!(c.shares_event(&b, 100_001));
    assert_eq!(c.iter().count(), 100_003);
    assert_eq!(
        c.iter().last().unwrap().as_message().unwrap().text(),
        "only c"
    );
    // Iteration yields seq order.
    let collected = a.to_vec();
    for (seq, event) in collected.iter().enumerate() {
        assert!(Arc::ptr_eq(event, &a.get(seq).unwrap()));
    }
}

#[test]
fn completed_turn_prefix_of_a_big_log_is_shared() {
    let mut log = big_log(100_000);
    log.append(SessionEvent::TurnStart { turn: 7 });
    log.append(SessionEvent::message(Message::user("half a turn")));
    let prefix = log.completed_turn_prefix();
    // big_log ends its turns at every third event: the last turn_end is at seq 99_998.
    assert_eq!(prefix.len(), 99_999);
    assert!(matches!(
        *prefix.last().unwrap(),
        SessionEvent::TurnEnd { .. }
    ));
    assert!(prefix.shares_event(&log, 99_998));
}
