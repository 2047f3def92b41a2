//! Concurrent writers on one team's files: every change survives, every claim race has one
//! winner. Each writer opens the team on its own (its own lock file descriptor), as two
//! processes would.

use std::sync::{Arc, Barrier};

use pretty_assertions::assert_eq;
use serde_json::Map;
use subagent_teams::{Member, MemberStatus, TaskStatus, TeamStore};

fn store() -> (tempfile::TempDir, TeamStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = TeamStore::new(dir.path().join("teams"));
    let team = store.create("race", "").unwrap();
    for name in ["alice", "bob", "carol", "dave"] {
        team.add_member(Member {
            name: name.into(),
            agent_type: None,
            provider: "spawn".into(),
            status: MemberStatus::Idle,
            session_id: None,
            cwd: None,
            plan_mode_required: false,
            plan_request: None,
        })
        .unwrap();
    }
    (dir, store)
}

#[test]
fn two_writers_lose_no_message_and_no_task() {
    let (dir, _store) = store();
    let root = dir.path().join("teams");
    let barrier = Arc::new(Barrier::new(2));
    let writers: Vec<_> = ["alice", "bob"]
        .into_iter()
        .map(|from| {
            let root = root.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let team = TeamStore::new(root).open("race").unwrap();
                barrier.wait();
                for i in 0..50 {
                    team.send(from, "carol", &format!("{from} {i}"), None, None)
                        .unwrap();
                    team.tasks(|list| {
                        Ok(list.create(format!("{from} {i}"), String::new(), None, Map::new()))
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let team = TeamStore::new(&root).open("race").unwrap();
    let inbox = team.unread("carol").unwrap();
    assert_eq!(inbox.len(), 100);
    let ids: Vec<u64> = inbox.iter().map(|m| m.id).collect();
    assert_eq!(
        ids,
        (1..=100).collect::<Vec<_>>(),
        "ids unique and in order"
    );
    for from in ["alice", "bob"] {
        let mine: Vec<String> = inbox
            .iter()
            .filter(|m| m.from == from)
            .map(|m| m.text.clone())
            .collect();
        let expected: Vec<String> = (0..50).map(|i| format!("{from} {i}")).collect();
        assert_eq!(mine, expected, "each writer's messages in its order");
    }
    let list = team.task_list().unwrap();
    assert_eq!(list.tasks.len(), 100);
    let mut task_ids: Vec<u64> = list.tasks.iter().map(|t| t.id.parse().unwrap()).collect();
    task_ids.sort_unstable();
    assert_eq!(task_ids, (1..=100).collect::<Vec<_>>());
}

#[test]
fn a_claim_race_has_exactly_one_winner() {
    let (dir, store) = store();
    let root = dir.path().join("teams");
    let team = store.open("race").unwrap();
    for round in 0..20 {
        let id = team
            .tasks(|list| Ok(list.create(format!("t{round}"), String::new(), None, Map::new())))
            .unwrap()
            .id;
        let claimers = ["alice", "bob", "carol", "dave"];
        let barrier = Arc::new(Barrier::new(claimers.len()));
        let handles: Vec<_> = claimers
            .into_iter()
            .map(|who| {
                let (root, id, barrier) = (root.clone(), id.clone(), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    let team = TeamStore::new(root).open("race").unwrap();
                    barrier.wait();
                    team.tasks(|list| list.claim(&id, who))
                        .map(|_| who)
                        .map_err(|e| e.code().as_str())
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let winners: Vec<&str> = results.iter().filter_map(|r| r.ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        let refused: Vec<&str> = results.iter().filter_map(|r| r.err()).collect();
        assert_eq!(refused, ["TASK_ALREADY_CLAIMED"; 3]);
        let task = team.task_list().unwrap().get(&id).unwrap().clone();
        assert_eq!(task.owner.as_deref(), Some(winners[0]));
        assert_eq!(task.status, TaskStatus::InProgress);
    }
}

#[test]
fn concurrent_takers_of_one_inbox_get_each_message_once() {
    let (dir, store) = store();
    let root = dir.path().join("teams");
    let team = store.open("race").unwrap();
    let barrier = Arc::new(Barrier::new(3));
    let sender = {
        let (root, barrier) = (root.clone(), Arc::clone(&barrier));
        std::thread::spawn(move || {
            let team = TeamStore::new(root).open("race").unwrap();
            barrier.wait();
            for i in 0..200 {
                team.send("alice", "bob", &i.to_string(), None, None)
                    .unwrap();
            }
        })
    };
    let takers: Vec<_> = (0..2)
        .map(|_| {
            let (root, barrier) = (root.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let team = TeamStore::new(root).open("race").unwrap();
                barrier.wait();
                let mut got = Vec::new();
                for _ in 0..400 {
                    got.extend(team.take_unread("bob").unwrap().into_iter().map(|m| m.id));
                }
                got
            })
        })
        .collect();
    sender.join().unwrap();
    let mut all: Vec<u64> = takers.into_iter().flat_map(|t| t.join().unwrap()).collect();
    all.extend(team.take_unread("bob").unwrap().into_iter().map(|m| m.id));
    all.sort_unstable();
    assert_eq!(
        all,
        (1..=200).collect::<Vec<_>>(),
        "every message taken exactly once"
    );
}
