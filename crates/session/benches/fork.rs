//! Forking logs of 10, 10,000 and 1,000,000 events: the cost must be flat.

use subagent_session::{EventLog, Message, SessionEvent};

fn main() {
    divan::main();
}

fn log_of(n: usize) -> EventLog {
    let event = SessionEvent::message(Message::user("x"));
    let mut log = EventLog::new();
    for _ in 0..n {
        log.append(event.clone());
    }
    log
}

#[divan::bench(args = [10, 10_000, 1_000_000])]
fn fork(bencher: divan::Bencher, n: usize) {
    let log = log_of(n);
    bencher.bench_local(|| divan::black_box(&log).fork());
}

#[divan::bench(args = [10, 10_000, 1_000_000])]
fn fork_and_append(bencher: divan::Bencher, n: usize) {
    let log = log_of(n);
    let event = std::sync::Arc::new(SessionEvent::message(Message::user("child")));
    bencher.bench_local(|| {
        let mut child = divan::black_box(&log).fork();
        child.append_shared(event.clone());
        child
    });
}
