//! A `subagent worker` SIGKILLed mid-run: `subagent delegate` through a `kind: nats` row waits
//! for its job while the worker holding it is killed at a random point and a new worker is
//! started; the job comes back after the ack wait (1 s) and runs again (execution is at least
//! once, see docs/scale.md). Counted: jobs lost (no outcome reached the caller, or the events
//! stream holds none), jobs doubled (the events stream holds two outcomes for one run: the
//! caller would see one, a second is a defect), outcomes wrong, and processes the killed worker
//! left (its guardians must end its runs' trees).
//!
//! Then, on a fresh server, a forger (`subagent_nats::forger`: another client with the same
//! rights) publishes forged envelopes for every run it sees start — outcomes for other runs'
//! ids, envelopes of no run, made-up seals, refusals, newer attempts, replays of the run's own
//! sealed envelopes — and jobs of its own under the run's id on other jobs' subjects. Counted:
//! runs lost, runs whose outcome or events were not their own worker's (wrong), runs a worker
//! took twice (a forged job run under their id: doubled).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use subagent_nats::forger::{FORGED, Forger, KINDS};

use super::process::{Delegate, Remote};
use super::reaper;
use super::rows::{self, Provider};
use super::{Line, Plan, Rng, assert_clean, report, start_model};

pub(super) fn run(plan: &Plan) {
    let (rt, model) = start_model(&rows::scenarios());
    let home = tempfile::tempdir().unwrap();
    let mut remote = Remote::start(Provider::Nats, home.path(), &model.url());
    let mut rng = Rng::new(plan.seed);
    let mut line = Line::new(
        "nats (worker)",
        "worker SIGKILLed mid-run, another takes over",
    );
    let mut details = Vec::new();
    let mut again = 0;
    for round in 0..plan.rounds_or(1) {
        let dir = tempfile::tempdir_in(home.path()).unwrap();
        let preset = rows::caller_preset(dir.path(), &model.url(), Provider::Nats, &remote.remotes);
        let mut delegate = Delegate::start(
            dir.path(),
            &preset,
            Provider::Nats,
            Provider::Nats.short_prompt(),
        );
        line.runs += 1;
        if !delegate.wait_first_event(Duration::from_secs(60)) {
            line.wrong += 1;
            details.push(format!(
                "round {round}: no event: {}",
                delegate.finish(Duration::ZERO).describe()
            ));
            continue;
        }
        // The run takes ~0.4 s on the worker: kill points from its start to past its end.
        let pause = rng.millis(600);
        std::thread::sleep(pause);
        let mut keep: BTreeSet<i32> = remote.pids().into_iter().collect();
        let worker = remote.host().map(|p| i32::try_from(p).unwrap());
        keep.insert(i32::try_from(delegate.pid()).unwrap());
        remote.kill_worker();
        if let Some(worker) = worker {
            keep.remove(&worker);
        }
        let left = reaper::settle(&keep, Duration::from_secs(10));
        if !left.is_empty() {
            line.left += u32::try_from(left.len()).unwrap();
            details.push(format!(
                "round {round} (+{pause:?}): the killed worker left {left:?}"
            ));
        }
        remote.start_worker();
        let ended = delegate.finish(Duration::from_secs(60));
        match ended.outcome() {
            None => {
                line.lost += 1;
                details.push(format!(
                    "round {round} (+{pause:?}): no outcome: {}",
                    ended.describe()
                ));
            }
            Some(outcome) => {
                let text = outcome["text"].as_str().unwrap_or_default();
                if ended.code() != Some(0)
                    || outcome["status"] != "completed"
                    || !text.contains(rows::DONE)
                {
                    line.wrong += 1;
                    details.push(format!(
                        "round {round} (+{pause:?}): wrong outcome: {}",
                        ended.describe()
                    ));
                }
            }
        }
        if ended.lines.iter().any(|l| l.contains("superseded")) {
            again += 1;
        }
    }
    let url = remote.remotes.nats.clone().unwrap();
    let tally = rt.block_on(subagent_nats::testing::tally(&url)).unwrap();
    for (run, counts) in &tally {
        match counts.outcomes {
            0 => {
                line.lost += 1;
                details.push(format!(
                    "run {run}: no outcome in the events stream: {counts:?}"
                ));
            }
            1 => {}
            n => {
                line.doubled += u32::try_from(n - 1).unwrap();
                details.push(format!(
                    "run {run}: {n} outcomes in the events stream: {counts:?}"
                ));
            }
        }
    }
    line.note = format!(
        "kill points 0–600 ms after the run's first event; {again} jobs ran a second time after the kill (at least once), {} runs in the events stream",
        tally.len()
    );
    // A fresh server and worker: the forger's envelopes stay out of the tally above.
    remote.restart(Provider::Nats);
    let forged = forged(plan, &rt, &remote, &model.url(), home.path(), &mut details);
    drop(remote);
    reaper::settle(&BTreeSet::new(), Duration::from_secs(10));
    let lines = [line, forged];
    report(plan, "nats", &lines);
    assert_clean(&lines, &details);
}

/// Runs that end by themselves while a forger forges for each (see the module docs).
fn forged(
    plan: &Plan,
    rt: &tokio::runtime::Runtime,
    remote: &Remote,
    model: &str,
    home: &Path,
    details: &mut Vec<String>,
) -> Line {
    let url = remote.remotes.nats.clone().unwrap();
    let forger = rt
        .block_on(Forger::start(&url, "spawn", plan.seed, 4))
        .unwrap();
    let mut line = Line::new(
        "nats (forger)",
        "forged envelopes and jobs for every run, from another client",
    );
    for round in 0..plan.rounds_or(2) {
        let dir = tempfile::tempdir_in(home).unwrap();
        let preset = rows::caller_preset(dir.path(), model, Provider::Nats, &remote.remotes);
        let delegate = Delegate::start(
            dir.path(),
            &preset,
            Provider::Nats,
            Provider::Nats.short_prompt(),
        );
        line.runs += 1;
        let ended = delegate.finish(Duration::from_secs(60));
        let Some(outcome) = ended.outcome() else {
            line.lost += 1;
            details.push(format!(
                "forged round {round}: no outcome: {}",
                ended.describe()
            ));
            continue;
        };
        let text = outcome["text"].as_str().unwrap_or_default();
        if ended.code() != Some(0)
            || outcome["status"] != "completed"
            || !text.contains(rows::DONE)
            || ended.lines.iter().any(|l| l.contains(FORGED))
        {
            line.wrong += 1;
            details.push(format!(
                "forged round {round}: not the run's own outcome or events: {}",
                ended.describe()
            ));
        }
    }
    let tally = rt.block_on(subagent_nats::testing::tally(&url)).unwrap();
    for (run, counts) in &tally {
        let taken = counts.workers.iter().filter(|w| *w != "forger").count();
        if taken > 1 {
            line.doubled += u32::try_from(taken - 1).unwrap();
            details.push(format!("run {run}: taken {taken} times: {counts:?}"));
        }
    }
    line.note = format!(
        "{} forgeries stored for {} of the runs, 4 of {} kinds each: {}",
        forger.published(),
        forger.runs(),
        KINDS.len(),
        KINDS.join("; ")
    );
    line
}
