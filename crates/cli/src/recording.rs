//! The record of runs this process writes (crate `subagent-runs`): one recorder per process,
//! installed in every registry a command builds, so every run, child, teammate and background
//! task of `run`, `delegate`, `serve`, `mcp`, `acp` and `worker` is in
//! `<state dir>/subagents/runs` as it happens; `run`'s parent is recorded the same way. Finished
//! runs are pruned when the first recorder of a process opens the record
//! (`SUBAGENT_RUNS_KEEP`, a count, and `SUBAGENT_RUNS_KEEP_DAYS`, defaults 1,000 and 7).
//!
//! Deliberately not here: the commands that read the record (`commands::runs`).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use subagent_core::Run;
use subagent_core::registry::{RunRecorder, StartedRun};
use subagent_runs::{Keep, Recorder, Runs};

/// What started this process's top-level runs (the subcommand), set once by the dispatcher.
static KIND: OnceLock<&'static str> = OnceLock::new();
/// The process's recorder (`None`: no state dir, or the record cannot be made).
static RECORDER: OnceLock<Option<Arc<Recorder>>> = OnceLock::new();

/// The variable a `--bg` launcher names its run's output file in.
pub(crate) const OUTPUT_ENV: &str = "SUBAGENT_BG_OUTPUT";

/// Says which subcommand this process runs (its top-level runs' kind).
pub(crate) fn set_kind(kind: &'static str) {
    let _ = KIND.set(kind);
}

/// Where every command keeps its state: `$XDG_STATE_HOME/subagents` (when absolute), else
/// `$HOME/.local/state/subagents`; `None` when neither variable is absolute.
pub(crate) fn state_root(get: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let absolute = |name: &str| get(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let state = absolute("XDG_STATE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".local/state")))?;
    Some(state.join("subagents"))
}

/// The record of this user's runs, when there is a state dir.
pub(crate) fn runs() -> Option<Runs> {
    let root = state_root(&|name| subagent_session::env::var(name))?;
    Runs::open(root.join("runs"))
        .map(|runs| runs.keeping(keep()))
        .map_err(|error| tracing::warn!("runs are not recorded: {error}"))
        .ok()
}

/// This process's recorder: opened (and the record pruned) once.
pub(crate) fn recorder() -> Option<Arc<Recorder>> {
    RECORDER
        .get_or_init(|| {
            let runs = runs()?;
            runs.prune(runs.keep());
            let output = subagent_session::env::var(OUTPUT_ENV).map(PathBuf::from);
            Some(Recorder::new(
                runs,
                KIND.get().copied().unwrap_or("run"),
                output,
            ))
        })
        .clone()
}

/// How many finished runs are kept, and how long: the variables', else the defaults.
fn keep() -> Keep {
    let mut keep = Keep::default();
    if let Some(count) =
        subagent_session::env::var("SUBAGENT_RUNS_KEEP").and_then(|v| v.parse().ok())
    {
        keep.count = count;
    }
    if let Some(days) =
        subagent_session::env::var("SUBAGENT_RUNS_KEEP_DAYS").and_then(|v| v.parse::<u64>().ok())
    {
        keep.age = std::time::Duration::from_secs(days.saturating_mul(24 * 3600));
    }
    keep
}

/// Records a top-level run a command started itself (not through a registry: `run`'s parent).
pub(crate) fn record_top(
    run: Run,
    provider: &str,
    description: &str,
    cwd: &std::path::Path,
) -> Run {
    match recorder() {
        Some(recorder) => recorder.record(
            StartedRun {
                provider: provider.to_owned(),
                description: subagent_core::default_description(description),
                lineage: Vec::new(),
                cwd: cwd.to_owned(),
                agent_type: None,
                teammate: None,
                background: false,
            },
            run,
        ),
        None => run,
    }
}
