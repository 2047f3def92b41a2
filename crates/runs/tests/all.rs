#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The record through a registry: a run's record while it runs and after, its events, a stop
//! request, a lost owner, pruning and a corrupt file.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use subagent_core::registry::Registry;
use subagent_core::{Capabilities, Outcome, Run, RunEvent, StartRequest, SubagentProvider, Usage};
use subagent_runs::{Keep, Lookup, Owner, Recorder, Runs, Status};

/// Says a word, counts ten tokens, then waits for `release` (or its cancel).
struct Waiting {
    release: tokio::sync::watch::Receiver<bool>,
}

#[async_trait]
impl SubagentProvider for Waiting {
    fn name(&self) -> &str {
        "waiting"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }

    async fn start(&self, request: StartRequest) -> subagent_core::Result<Run> {
        let (sender, run) = Run::channel("waiting", &request);
        let mut release = self.release.clone();
        tokio::spawn(async move {
            sender.emit(RunEvent::Text {
                text: "hello".into(),
                parent_tool_use_id: None,
            });
            let usage = Usage {
                input_tokens: 7,
                output_tokens: 3,
                ..Usage::default()
            };
            sender.emit(RunEvent::Usage {
                usage,
                parent_tool_use_id: None,
            });
            let cancel = sender.cancel_token().clone();
            tokio::select! {
                _ = release.wait_for(|go| *go) => {
                    let mut outcome = Outcome::completed("done");
                    outcome.usage = usage;
                    sender.finish(outcome);
                }
                () = cancel.cancelled() => sender.finish(Outcome::cancelled()),
            }
        });
        Ok(run)
    }
}

fn registry(runs: &Runs) -> (Registry, tokio::sync::watch::Sender<bool>) {
    let (go, release) = tokio::sync::watch::channel(false);
    let mut registry = Registry::new();
    registry.set_recorder(Recorder::new(runs.clone(), "delegate", None));
    registry.register(Arc::new(Waiting { release })).unwrap();
    (registry, go)
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("never: {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_recorded_while_it_runs_and_after() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Runs::open(dir.path().join("runs")).unwrap();
    let (registry, go) = registry(&runs);
    let mut run = registry
        .start("waiting", StartRequest::new("say hello", dir.path()))
        .await
        .unwrap();
    let id = run.id();
    let mut events = run.take_events().unwrap();
    // The caller still gets every event.
    let mut seen = Vec::new();
    while let Some(event) = futures::StreamExt::next(&mut events).await {
        let usage = matches!(event, RunEvent::Usage { .. });
        seen.push(event);
        if usage {
            break;
        }
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    // A running run's record is written once it has run half a second.
    eventually("the live record", || runs.live().len() == 1).await;
    let live = runs.live();
    assert_eq!(live[0].id, id);
    assert_eq!(live[0].status, Status::Running);
    assert_eq!(live[0].kind, "delegate");
    assert_eq!(live[0].provider, "waiting");
    assert_eq!(live[0].description, "say hello");
    assert_eq!(live[0].owner, Owner::this());
    go.send(true).unwrap();
    // The record has what the caller takes: the rest of the stream, then the outcome.
    while futures::StreamExt::next(&mut events).await.is_some() {}
    let outcome = run.outcome().await;
    assert!(outcome.is_completed(), "{outcome:?}");
    eventually("the record ends", || runs.live().is_empty()).await;
    let Lookup::Found(done) = runs.find(&id.short()) else {
        panic!("not found by its short id")
    };
    assert_eq!(done.status, Status::Completed);
    assert_eq!(done.usage.input_tokens, 7);
    assert!(done.ended_ms.is_some());
    let (events, _) = runs.events_from(&done, 0, u64::MAX);
    let kinds: Vec<String> = std::iter::once(Runs::started(&done))
        .chain(events)
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(&line).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(kinds, ["started", "text", "usage", "finished"]);
    // Private to the user.
    use std::os::unix::fs::PermissionsExt as _;
    for path in [runs.root().join("done"), runs.events_path(&done)] {
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert!(
            mode == 0o700 || mode == 0o600,
            "{}: {mode:o}",
            path.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_request_cancels_the_run_through_its_owner() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Runs::open(dir.path().join("runs")).unwrap();
    let (registry, _go) = registry(&runs);
    let run = registry
        .start("waiting", StartRequest::new("wait", dir.path()))
        .await
        .unwrap();
    let id = run.id();
    // Another process's view of the same record asks.
    Runs::open(runs.root()).unwrap().request_stop(id).unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(10), run.outcome())
        .await
        .expect("stopped");
    assert_eq!(outcome.status, subagent_core::StopReason::Cancelled);
    eventually(
        "the record says cancelled",
        || matches!(runs.find(&id.to_string()), Lookup::Found(r) if r.status == Status::Cancelled),
    )
    .await;
    assert!(runs.stop_requests().is_empty());
}

#[test]
fn a_lost_owner_a_corrupt_file_and_pruning() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Runs::open(dir.path()).unwrap();
    let record = |minutes_ago: u64, status: Status, owner: Owner| subagent_runs::Record {
        id: subagent_core::RunId::new(),
        parent: None,
        root: subagent_core::RunId::new(),
        kind: "run".into(),
        provider: "spawn".into(),
        description: "d".into(),
        agent_type: None,
        teammate: None,
        background: false,
        cwd: dir.path().to_owned(),
        status,
        started_ms: 1_000_000 + (10_000 - minutes_ago) * 60_000,
        ended_ms: (status != Status::Running)
            .then_some(1_000_000 + (10_000 - minutes_ago) * 60_000),
        usage: Usage::default(),
        owner,
        output: None,
        session: None,
        diagnostic: None,
        journal: None,
    };
    // A live record whose owner is gone.
    let gone = Owner {
        pid: u32::MAX - 1,
        start_ticks: 1,
    };
    let lost = record(1, Status::Running, gone);
    runs.write(&lost).unwrap();
    assert_eq!(runs.live()[0].status, Status::Lost);
    // A corrupt file is skipped, nothing else lost.
    std::fs::write(runs.root().join("live/garbage.json"), "{not json").unwrap();
    assert_eq!(runs.live().len(), 1);
    // Five finished ones of five processes that are gone (a journal each), keep three (by age
    // they all are recent enough).
    let dead = |n: u32| Owner {
        pid: u32::MAX - 2 - n,
        start_ticks: 1,
    };
    for minutes in 0..5 {
        runs.write(&record(minutes, Status::Completed, dead(minutes as u32)))
            .unwrap();
    }
    // A corrupt line in a journal is skipped (and named in a warning), nothing else lost.
    let journal = runs.root().join(format!("done/{}-0.jsonl", dead(0).key()));
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.insert_str(0, "{not json\n");
    std::fs::write(&journal, text).unwrap();
    assert_eq!(runs.done().len(), 5);
    // This process's own journal, the oldest of all, is kept while it runs.
    runs.write(&record(100, Status::Completed, Owner::this()))
        .unwrap();
    let keep = Keep {
        count: 3,
        age: Duration::from_secs(u64::MAX / 4_000),
    };
    // The lost one is finished first (seven done, the newest), then the journals past the
    // newest three runs go, but for this process's.
    assert_eq!(runs.prune(keep), 3);
    assert!(runs.live().is_empty());
    let kept: Vec<Owner> = runs.done().iter().map(|r| r.owner).collect();
    assert_eq!(kept.len(), 4, "{kept:?}");
    assert!(kept.contains(&gone) && kept.contains(&dead(0)) && kept.contains(&dead(1)));
    assert!(kept.contains(&Owner::this()));
}

/// Waits for room first (`Queued`), then runs until `release`.
struct Queuing {
    admit: tokio::sync::watch::Receiver<bool>,
    release: tokio::sync::watch::Receiver<bool>,
}

#[async_trait]
impl SubagentProvider for Queuing {
    fn name(&self) -> &str {
        "queuing"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }

    async fn start(&self, request: StartRequest) -> subagent_core::Result<Run> {
        let (sender, run) = Run::channel("queuing", &request);
        let (mut admit, mut release) = (self.admit.clone(), self.release.clone());
        tokio::spawn(async move {
            sender.emit(RunEvent::Queued { ahead: 0 });
            let _ = admit.wait_for(|go| *go).await;
            sender.emit(RunEvent::Text {
                text: "started".into(),
                parent_tool_use_id: None,
            });
            let _ = release.wait_for(|go| *go).await;
            sender.finish(Outcome::completed("done"));
        });
        Ok(run)
    }
}

/// A child waiting for room reads `queued` in the record, then `running` once it starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_run_reads_queued_until_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Runs::open(dir.path().join("runs")).unwrap();
    let (admit_tx, admit) = tokio::sync::watch::channel(false);
    let (release_tx, release) = tokio::sync::watch::channel(false);
    let mut registry = Registry::new();
    registry.set_recorder(Recorder::new(runs.clone(), "delegate", None));
    registry
        .register(Arc::new(Queuing { admit, release }))
        .unwrap();
    let mut run = registry
        .start("queuing", StartRequest::new("wait your turn", dir.path()))
        .await
        .unwrap();
    // The caller takes the events (the record has what the caller takes).
    let mut events = run.take_events().unwrap();
    let drained =
        tokio::spawn(async move { while futures::StreamExt::next(&mut events).await.is_some() {} });
    let status = |runs: &Runs| runs.live().first().map(|record| record.status);
    eventually("the queued record", || {
        status(&runs) == Some(Status::Queued)
    })
    .await;
    assert!(runs.live()[0].running(), "a queued run has not ended");
    admit_tx.send(true).unwrap();
    eventually("the running record", || {
        status(&runs) == Some(Status::Running)
    })
    .await;
    release_tx.send(true).unwrap();
    drained.await.unwrap();
    assert!(run.outcome().await.is_completed());
    eventually("the record ends", || runs.live().is_empty()).await;
}
