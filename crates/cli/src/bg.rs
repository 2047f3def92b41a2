//! `run --bg` and `delegate --bg`: the command starts itself again without `--bg`, detached
//! from the terminal (its own process group, stdin from `/dev/null`, stdout and stderr into
//! an output file under the record of runs), waits until the record shows its run, prints the
//! run's id and returns. The detached process ignores SIGINT and SIGHUP (a closed terminal, a
//! Ctrl-C of the shell) and stops on SIGTERM or `subagent stop ID`; its children run under its
//! guardian as in the foreground.
//!
//! Deliberately not here: the record (`crate::recording`), reading it (`commands::runs`).

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use subagent_runs::Runs;

use crate::{EXIT_COMPLETED, Refusal, RefusalCode};

/// How long the launcher waits for the detached run to be recorded.
const RECORDED_WITHIN: Duration = Duration::from_secs(60);

/// Whether this process is a detached `--bg` run.
pub(crate) fn detached() -> bool {
    subagent_session::env::var(crate::recording::OUTPUT_ENV).is_some()
}

/// The record's run whose output goes to `output`, once it is recorded.
fn recorded(runs: &Runs, output: &Path) -> Option<subagent_runs::Record> {
    runs.live()
        .into_iter()
        .chain(runs.done())
        .find(|record| record.output.as_deref() == Some(output))
}

fn unavailable(message: String) -> Refusal {
    Refusal::new(RefusalCode::Runs("RUNS_UNAVAILABLE"), message)
}

/// Starts this command again in the background and prints its run's id (`json`: as JSON).
/// `stdin_prompt`: the prompt the command read from stdin (`-`), handed on.
pub(crate) async fn launch(stdin_prompt: Option<String>, json: bool) -> Result<ExitCode, Refusal> {
    let runs = crate::recording::runs().ok_or_else(|| {
        unavailable(
            "--bg needs a state dir, where its record and output are kept (set HOME or XDG_STATE_HOME to an absolute path)".to_owned(),
        )
    })?;
    let outputs = runs.root().join("output");
    subagent_session::private::create_dir_all(&outputs)
        .map_err(|e| unavailable(format!("cannot make {}: {e}", outputs.display())))?;
    let output: PathBuf = outputs.join(format!("{}.log", subagent_core::RunId::new()));
    let file = subagent_session::private::create_file(&output)
        .map_err(|e| unavailable(format!("cannot write {}: {e}", output.display())))?;
    let err = file
        .try_clone()
        .map_err(|e| unavailable(format!("cannot write {}: {e}", output.display())))?;
    let program = std::env::current_exe()
        .map_err(|e| unavailable(format!("cannot find this program to start it again: {e}")))?;
    let args: Vec<std::ffi::OsString> = std::env::args_os()
        .skip(1)
        .filter(|arg| arg != "--bg")
        .collect();
    let mut command = std::process::Command::new(program);
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    // Its environment is ours as we read it (the keys `main` withdrew from this process's
    // block included: the new process withdraws them from its own in turn).
    let mut child = command
        .env_clear()
        .envs(subagent_session::env::vars_os())
        .args(&args)
        .env(crate::recording::OUTPUT_ENV, &output)
        .stdin(if stdin_prompt.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::from(file))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| unavailable(format!("cannot start the background run: {e}")))?;
    if let (Some(text), Some(mut stdin)) = (stdin_prompt, child.stdin.take()) {
        use std::io::Write as _;
        stdin.write_all(text.as_bytes()).map_err(|e| {
            unavailable(format!("cannot hand the prompt to the background run: {e}"))
        })?;
    }
    let started = Instant::now();
    loop {
        if let Some(record) = recorded(&runs, &output) {
            if json {
                outln!(
                    "{}",
                    serde_json::json!({"id": record.id, "pid": child.id(), "output": output})
                );
            } else {
                outln!("{}", record.id);
                eprintln!(
                    "running in the background: `subagent logs -f {}` follows it, `subagent stop {}` stops it; its output goes to {}",
                    record.id.short(),
                    record.id.short(),
                    output.display()
                );
            }
            return Ok(ExitCode::from(EXIT_COMPLETED));
        }
        // Refused before its run started: what it said, and how it ended.
        if let Ok(Some(status)) = child.try_wait() {
            let said = subagent_session::read_user_text(&output, 1 << 20).unwrap_or_default();
            eprint!("{said}");
            let _ = std::fs::remove_file(&output);
            return Ok(ExitCode::from(
                status
                    .code()
                    .and_then(|c| u8::try_from(c).ok())
                    .unwrap_or(1),
            ));
        }
        if started.elapsed() > RECORDED_WITHIN {
            return Err(unavailable(format!(
                "the background run (process {}) was not recorded within {} s; its output so far is in {}",
                child.id(),
                RECORDED_WITHIN.as_secs(),
                output.display()
            )));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
