//! Signals to `subagent delegate` mid-run (processes left, runs that ended the wrong way) and
//! cancels (SIGINT) at random points of a run that ends by itself (outcomes missing or wrong).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use rustix::process::Signal;

use super::process::{Delegate, Ended, Remote};
use super::reaper::{self, Live};
use super::rows::{self, Provider};
use super::{Line, Plan, Rng, assert_clean, report, start_model};

/// How long a killed delegate may take to exit (a polite signal waits out the provider's grace
/// period before the tree is killed).
const EXIT_LIMIT: Duration = Duration::from_secs(60);
/// How long the guardians and the kernel get to end what a dead `subagent` leaves.
const SETTLE: Duration = Duration::from_secs(10);
/// The random wait after the run's first event (or first tool call) before the signal, at most (the short version
/// in `cargo xtask test` waits less: its rounds are few and it must stay quick).
const MID_RUN_MS: u64 = 2_000;
const SHORT_MID_RUN_MS: u64 = 500;

const SIGNALS: [(Signal, &str, i32); 4] = [
    (Signal::INT, "SIGINT", 130),
    (Signal::TERM, "SIGTERM", 143),
    (Signal::HUP, "SIGHUP", 129),
    (Signal::KILL, "SIGKILL", 0),
];

/// A fresh project directory for one round (claude and codex keep state per directory).
fn project(home: &Path) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("round-")
        .tempdir_in(home)
        .unwrap()
}

fn keep(remote: &Remote) -> BTreeSet<i32> {
    remote.pids().into_iter().collect()
}

fn describe(left: &[Live]) -> String {
    left.iter()
        .map(|l| format!("{} {}", l.pid, l.cmdline))
        .collect::<Vec<_>>()
        .join("; ")
}

pub(super) fn run(plan: &Plan) {
    let (_rt, model) = start_model(&rows::scenarios());
    let mut rng = Rng::new(plan.seed);
    let mid_run = if plan.rounds.is_some() {
        MID_RUN_MS
    } else {
        SHORT_MID_RUN_MS
    };
    let mut lines = Vec::new();
    let mut details = Vec::new();
    for provider in Provider::ALL.into_iter().filter(|p| plan.has(*p)) {
        // The short version: two rounds of each signal in process, one through a product CLI.
        let rounds = plan.rounds_or(if provider == Provider::Spawn { 2 } else { 1 });
        let home = tempfile::tempdir().unwrap();
        let mut remote = Remote::start(provider, home.path(), &model.url());
        for (signal, name, code) in SIGNALS {
            let mut line = Line::new(provider.name(), &format!("{name} mid-run"));
            let mut trees = Vec::new();
            for round in 0..rounds {
                let dir = project(home.path());
                let preset =
                    rows::caller_preset(dir.path(), &model.url(), provider, &remote.remotes);
                let keep = keep(&remote);
                let mut delegate =
                    Delegate::start(dir.path(), &preset, provider, provider.long_prompt());
                // Half the rounds count from the run's first event, half from its first tool
                // call (the shell command about to start), so that the model's answer, the
                // tool's start and the tool running all get hit.
                let under_way = if rng.below(1) == 0 {
                    delegate.wait_first_event(EXIT_LIMIT)
                } else {
                    delegate.wait_event(EXIT_LIMIT, |line| line.contains(r#""type":"tool_call""#))
                };
                let pause = rng.millis(mid_run);
                std::thread::sleep(pause);
                // What the signal hits: the processes under subagent (and under the remote
                // host), for the note.
                let pid = i32::try_from(delegate.pid()).unwrap();
                let under = reaper::tree(pid).len().saturating_sub(1) + remote.runs_alive().len();
                trees.push(under);
                reaper::signal(delegate.pid(), signal);
                let ended = delegate.finish(EXIT_LIMIT);
                let left = reaper::settle(&keep, SETTLE);
                line.runs += 1;
                let wrong = wrong_end(&ended, signal, code, under_way);
                if let Some(why) = &wrong {
                    line.wrong += 1;
                    details.push(format!(
                        "{} {name} round {round} (+{pause:?}): {why}: {}",
                        provider.name(),
                        ended.describe()
                    ));
                }
                if !left.is_empty() {
                    line.left += u32::try_from(left.len()).unwrap();
                    details.push(format!(
                        "{} {name} round {round} (+{pause:?}): left {}",
                        provider.name(),
                        describe(&left)
                    ));
                }
                if provider.remote() {
                    if signal == Signal::KILL {
                        // By design the run belongs to the server or worker, which was not told:
                        // it goes on. Start afresh for the next round.
                        if !remote.runs_alive().is_empty() {
                            line.note = "the remote run goes on after its caller's SIGKILL (by design); not counted".to_owned();
                        }
                        remote.restart(provider);
                        reaper::settle(&self::keep(&remote), SETTLE);
                    } else {
                        let still = remote.settle_runs(SETTLE);
                        if !still.is_empty() {
                            line.left += u32::try_from(still.len()).unwrap();
                            details.push(format!(
                                "{} {name} round {round} (+{pause:?}): left on the remote {}",
                                provider.name(),
                                describe(&still)
                            ));
                            remote.restart(provider);
                            reaper::settle(&self::keep(&remote), SETTLE);
                        }
                    }
                }
            }
            trees.sort_unstable();
            let hit = trees.iter().filter(|n| **n > 0).count();
            let tree_note = format!(
                "processes under subagent at the signal: {}–{} (median {}), a tree in {hit} of {} rounds",
                trees.first().unwrap_or(&0),
                trees.last().unwrap_or(&0),
                trees.get(trees.len() / 2).unwrap_or(&0),
                trees.len()
            );
            line.note = if line.note.is_empty() {
                tree_note
            } else {
                format!("{tree_note}; {}", line.note)
            };
            lines.push(line);
        }
    }
    lines.extend(super::hostile_acp::run(
        plan,
        &model.url(),
        &mut rng,
        &mut details,
    ));
    report(plan, "signals", &lines);
    assert_clean(&lines, &details);
}

/// Why the delegate's end is not what the signal promises, if it is not.
fn wrong_end(ended: &Ended, signal: Signal, code: i32, under_way: bool) -> Option<String> {
    if !under_way {
        return Some("no event before the signal".to_owned());
    }
    if ended.status.is_none() {
        return Some(format!("still running {EXIT_LIMIT:?} after the signal"));
    }
    if signal == Signal::KILL {
        return (ended.killed_by() != Some(9)).then(|| "not ended by SIGKILL".to_owned());
    }
    if ended.code() != Some(code) {
        return Some(format!("exit code not {code}"));
    }
    let status = ended.outcome().map(|o| o["status"].clone());
    (status != Some("cancelled".into())).then(|| "outcome not cancelled".to_owned())
}

/// Cancels: SIGINT at a random point from the start of `subagent delegate` to a little past
/// the run's own end (measured once per provider): every run must end with its outcome,
/// `completed` with the right text or `cancelled`, and leave nothing.
pub(super) fn cancels(plan: &Plan) {
    let (_rt, model) = start_model(&rows::scenarios());
    let mut rng = Rng::new(plan.seed);
    let rounds = plan.rounds_or(2);
    let mut lines = Vec::new();
    let mut details = Vec::new();
    for provider in Provider::ALL.into_iter().filter(|p| plan.has(*p)) {
        let home = tempfile::tempdir().unwrap();
        let remote = Remote::start(provider, home.path(), &model.url());
        let mut line = Line::new(provider.name(), "SIGINT at a random point");
        // The run's own length, uncancelled.
        let dir = project(home.path());
        let preset = rows::caller_preset(dir.path(), &model.url(), provider, &remote.remotes);
        let keep = keep(&remote);
        let delegate = Delegate::start(dir.path(), &preset, provider, provider.short_prompt());
        let started = delegate.started;
        let ended = delegate.finish(EXIT_LIMIT);
        let length = started.elapsed();
        assert_eq!(
            verdict(&ended),
            Verdict::Completed,
            "{}: the uncancelled run: {}",
            provider.name(),
            ended.describe()
        );
        reaper::settle(&keep, SETTLE);
        let span = u64::try_from(length.as_millis() * 6 / 5).unwrap();
        let (mut completed, mut cancelled, mut before) = (0, 0, 0);
        for round in 0..rounds {
            let dir = project(home.path());
            let preset = rows::caller_preset(dir.path(), &model.url(), provider, &remote.remotes);
            let delegate = Delegate::start(dir.path(), &preset, provider, provider.short_prompt());
            let at = rng.millis(span);
            std::thread::sleep(at.saturating_sub(delegate.started.elapsed()));
            reaper::signal(delegate.pid(), Signal::INT);
            let ended = delegate.finish(EXIT_LIMIT);
            let left = reaper::settle(&keep, SETTLE);
            let remote_left = remote.settle_runs(SETTLE);
            line.runs += 1;
            match verdict(&ended) {
                Verdict::Completed => completed += 1,
                Verdict::Cancelled => cancelled += 1,
                Verdict::BeforeStart => before += 1,
                Verdict::Missing => {
                    line.lost += 1;
                    details.push(format!(
                        "{} cancel round {round} at {at:?}: no outcome: {}",
                        provider.name(),
                        ended.describe()
                    ));
                }
                Verdict::Wrong => {
                    line.wrong += 1;
                    details.push(format!(
                        "{} cancel round {round} at {at:?}: wrong outcome: {}",
                        provider.name(),
                        ended.describe()
                    ));
                }
            }
            let all: Vec<Live> = left.into_iter().chain(remote_left).collect();
            if !all.is_empty() {
                line.left += u32::try_from(all.len()).unwrap();
                details.push(format!(
                    "{} cancel round {round} at {at:?}: left {}",
                    provider.name(),
                    describe(&all)
                ));
            }
        }
        line.note = format!(
            "cancel points over 0–{span} ms (run ≈ {} ms): {cancelled} cancelled, {completed} completed first, {before} ended by the signal before the CLI took it (nothing started)",
            length.as_millis()
        );
        lines.push(line);
    }
    report(plan, "cancels", &lines);
    assert_clean(&lines, &details);
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Completed,
    Cancelled,
    /// SIGINT's default action ended the process before `subagent` installed its handler: no
    /// event was printed, so no run had started.
    BeforeStart,
    Missing,
    Wrong,
}

fn verdict(ended: &Ended) -> Verdict {
    let Some(outcome) = ended.outcome() else {
        if ended.lines.is_empty() && ended.killed_by() == Some(2) {
            return Verdict::BeforeStart;
        }
        return Verdict::Missing;
    };
    let text = outcome["text"].as_str().unwrap_or_default();
    match (ended.code(), outcome["status"].as_str()) {
        (Some(0), Some("completed")) if text.contains(rows::DONE) => Verdict::Completed,
        (Some(130), Some("cancelled")) => Verdict::Cancelled,
        _ => Verdict::Wrong,
    }
}
