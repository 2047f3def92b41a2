//! A hostile ACP agent behind an `acp` row (`crates/acp/tests/fixtures/hostile-agent.sh`, a
//! shell script: no adapter needed), driven by the real `subagent delegate`: one that floods
//! `session/update`s and never answers its prompt, one that asks permission in a loop whatever
//! it is told, one that never answers `session/close` and ignores SIGTERM. Each run gets
//! SIGINT, SIGTERM or SIGKILL at a random point, or is left to end by itself (the row's
//! `timeout_secs`, `max_permission_requests`, `grace_ms`). Counted: processes left (the agent
//! and what it started), runs that ended the wrong way. Part of the `signals` test.

use std::path::Path;
use std::time::Duration;

use rustix::process::Signal;

use super::process::{Delegate, Ended};
use super::reaper;
use super::rows::Provider;
use super::{Line, Plan, Rng};
use crate::suite::support::{root, write_file};

const BEHAVIOURS: [(&str, &str); 3] = [
    ("flood", "floods updates, never answers its prompt"),
    ("permissions", "asks permission in a loop"),
    ("no-close", "never answers session/close, ignores SIGTERM"),
];

/// How a round ends: a signal to `subagent delegate` (with the exit code it promises), or by
/// itself.
const ENDINGS: [(Option<Signal>, &str, i32); 4] = [
    (Some(Signal::INT), "SIGINT", 130),
    (Some(Signal::TERM), "SIGTERM", 143),
    (Some(Signal::KILL), "SIGKILL", 0),
    (None, "by itself", 0),
];

const EXIT_LIMIT: Duration = Duration::from_secs(60);
const SETTLE: Duration = Duration::from_secs(10);

fn preset(dir: &Path, model: &str, behaviour: &str) -> std::path::PathBuf {
    let agent = root().join("crates/acp/tests/fixtures/hostile-agent.sh");
    write_file(
        dir,
        "hostile.yaml",
        format!(
            "version: 1\nmodel: {{kind: anthropic, name: fake-model, base_url: \"{model}\", api_key_env: FAKE_KEY, retry: {{max_retries: 0}}}}\nproviders:\n  - name: acp\n    kind: acp\n    config:\n      command: \"{}\"\n      env: {{HOSTILE: {behaviour}}}\n      grace_ms: 500\n      timeout_secs: 5\n      max_permission_requests: 5\n",
            agent.display()
        ),
    )
}

/// Why the run's end is not what the ending promises, if it is not.
fn wrong_end(ended: &Ended, behaviour: &str, signal: Option<Signal>, code: i32) -> Option<String> {
    if ended.status.is_none() {
        return Some(format!("still running {EXIT_LIMIT:?} after the ending"));
    }
    if signal == Some(Signal::KILL) {
        return (ended.killed_by() != Some(9)).then(|| "not ended by SIGKILL".to_owned());
    }
    let Some(outcome) = ended.outcome() else {
        return Some("no outcome printed".to_owned());
    };
    let status = outcome["status"].as_str().unwrap_or_default();
    let diagnostic = outcome["diagnostic"].as_str().unwrap_or_default();
    let text = outcome["text"].as_str().unwrap_or_default();
    // The no-close agent answers at once: a signal may come after its answer.
    let completed = behaviour == "no-close" && status == "completed" && text == "done";
    // A run may also have ended by itself before the signal came (the permission loop reaches
    // its bound within milliseconds).
    let by_itself = match behaviour {
        "flood" => status == "failed" && diagnostic.contains("timeout_secs"),
        "permissions" => status == "failed" && diagnostic.contains("max_permission_requests"),
        _ => completed && ended.code() == Some(0),
    };
    let expected = match signal {
        Some(_) => (ended.code() == Some(code) && status == "cancelled") || by_itself || completed,
        None => by_itself,
    };
    (!expected).then(|| format!("ended {status} (exit {:?}): {diagnostic}", ended.code()))
}

/// The lines of the hostile ACP agent, one per behaviour; the short version (`cargo xtask
/// test`) gives each behaviour one round with a random ending, a long run every ending
/// `rounds` times.
pub(super) fn run(plan: &Plan, model: &str, rng: &mut Rng, details: &mut Vec<String>) -> Vec<Line> {
    let home = tempfile::tempdir().unwrap();
    let keep = std::collections::BTreeSet::new();
    let mut lines = Vec::new();
    for (behaviour, what) in BEHAVIOURS {
        let mut line = Line::new("acp (hostile agent)", what);
        let endings: Vec<usize> = match plan.rounds {
            Some(rounds) => (0..ENDINGS.len())
                .flat_map(|ending| std::iter::repeat_n(ending, rounds as usize))
                .collect(),
            None => vec![rng.below(ENDINGS.len() as u64 - 1) as usize],
        };
        // How the rounds ended, signalled or not: cancelled by the signal, killed by it, failed
        // at the row's bound or completed (a signalled round may end so before the signal is
        // taken).
        let mut how = std::collections::BTreeMap::<String, u32>::new();
        for (round, ending) in endings.into_iter().enumerate() {
            let (signal, name, code) = ENDINGS[ending];
            let dir = tempfile::tempdir_in(home.path()).unwrap();
            let preset = preset(dir.path(), model, behaviour);
            let mut delegate = Delegate::start(dir.path(), &preset, Provider::Acp, "say hi");
            let pause = rng.millis(300);
            if let Some(signal) = signal {
                delegate.wait_first_event(EXIT_LIMIT);
                std::thread::sleep(pause);
                reaper::signal(delegate.pid(), signal);
            }
            let ended = delegate.finish(EXIT_LIMIT);
            let left = reaper::settle(&keep, SETTLE);
            line.runs += 1;
            let end = if ended.killed_by() == Some(9) {
                "killed by SIGKILL"
            } else {
                match ended
                    .outcome()
                    .as_ref()
                    .and_then(|o| o["status"].as_str().map(str::to_owned))
                {
                    Some(status) if status == "cancelled" => "cancelled",
                    Some(status) if status == "completed" => "completed",
                    Some(status) if status == "failed" => "failed at the row's bound",
                    _ => "other",
                }
            };
            let key = if signal.is_some() {
                format!("signalled, {end}")
            } else {
                format!("no signal, {end}")
            };
            *how.entry(key).or_default() += 1;
            if let Some(why) = wrong_end(&ended, behaviour, signal, code) {
                line.wrong += 1;
                details.push(format!(
                    "acp {behaviour} {name} round {round} (+{pause:?}): {why}: {}",
                    ended.describe()
                ));
            }
            if !left.is_empty() {
                line.left += u32::try_from(left.len()).unwrap();
                details.push(format!(
                    "acp {behaviour} {name} round {round} (+{pause:?}): left {left:?}"
                ));
            }
        }
        let how: Vec<String> = how.iter().map(|(end, n)| format!("{end}: {n}")).collect();
        line.note = format!(
            "SIGINT, SIGTERM, SIGKILL 0–300 ms after the first event, or no signal \
             (timeout_secs 5, max_permission_requests 5, grace_ms 500): {}",
            how.join(", ")
        );
        lines.push(line);
    }
    lines
}
