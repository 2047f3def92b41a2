//! A hook runs under the process owner: killed at its timeout or on cancellation, nothing it
//! started outlives it, its output is bounded, a big stdin never deadlocks.

use std::path::Path;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};
use subagent_runtime::hooks::{MAX_STDERR_BYTES, MAX_STDOUT_BYTES};
use subagent_runtime::{HookBase, HookRunner, HookVerdict, Secrets};
use subagent_settings::{HookEvent, Hooks, Scope};
use subagent_test_support::procs;
use tokio_util::sync::CancellationToken;

use super::{fire, fire_alone, fire_event, fire_in, fire_tool, map, on, ran, runner, script};

/// Waits (bounded: the kernel finishes a SIGKILL on its own time) until no live process has
/// its working directory in `dir`, where every hook of these tests runs.
fn assert_none_left(dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<String> = procs::live()
            .iter()
            .filter(|p| p.runs_in(dir))
            .map(procs::Proc::line)
            .collect();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "left running: {left:?}");
        std::thread::yield_now();
    }
}

/// Whether `pid` is gone (or a zombie nobody reaped yet).
fn gone(pid: u32) -> bool {
    procs::all()
        .iter()
        .find(|p| p.pid == pid)
        .is_none_or(|p| !p.live())
}

/// Fires `PreToolUse` for a Write with `input` under `hooks`, whose reader writes its stdin to
/// `got.json` in `dir`: the verdict, and the length of the content `got.json` holds.
async fn write_through(
    dir: &Path,
    hooks: Value,
    input: Map<String, Value>,
) -> (HookVerdict, Option<usize>) {
    let verdict = fire_in(dir, hooks, HookEvent::PreToolUse, Some("Write"), input).await;
    let got: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("got.json")).unwrap()).unwrap();
    let length = got["tool_input"]["content"].as_str().map(str::len);
    (verdict, length)
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_and_reported_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let slow = script(dir.path(), "slow.sh", "sleep 100");
    let fast = script(dir.path(), "fast.sh", "echo 'fast one' >&2; exit 2");
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": slow, "timeout": 1},
        {"type": "command", "command": fast},
    ]}]});
    let verdict = fire_tool(dir.path(), hooks, HookEvent::PreToolUse, "Bash").await;
    assert_eq!(
        verdict,
        HookVerdict {
            blocked: Some(format!("PreToolUse:Bash hook error: [{fast}]: fast one\n")),
            errors: vec![format!(
                "PreToolUse hook [{slow}] timed out after 1 s; killed"
            )],
            ..ran(2)
        }
    );
    assert_none_left(dir.path());
}

#[tokio::test]
async fn a_hook_that_forks_leaves_nothing_running() {
    let dir = tempfile::tempdir().unwrap();
    // One child keeps the hook's stdout open, one does not; both outlive the script.
    let fork = script(
        dir.path(),
        "fork.sh",
        "sleep 100 & echo $! > held.pid\nsleep 100 > /dev/null 2>&1 < /dev/null & echo $! > free.pid\necho '{\"systemMessage\": \"forked\"}'",
    );
    let hooks = on("PostToolUse", None, &[&fork]);
    let verdict = fire_tool(dir.path(), hooks, HookEvent::PostToolUse, "Bash").await;
    assert_eq!(verdict.system_messages, vec!["forked"], "{verdict:?}");
    for file in ["held.pid", "free.pid"] {
        let pid: u32 = std::fs::read_to_string(dir.path().join(file))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !gone(pid) {
            assert!(Instant::now() < deadline, "{file}: {pid} survived the hook");
            std::thread::yield_now();
        }
    }
    assert_none_left(dir.path());
}

#[tokio::test]
async fn a_hook_printing_megabytes_is_cut_at_the_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let flood = script(
        dir.path(),
        "flood.sh",
        "head -c 50000000 /dev/zero | tr '\\0' a",
    );
    let verdict = fire_alone(dir.path(), HookEvent::UserPromptSubmit, &[&flood]).await;
    assert_eq!(verdict.additional_context.len(), 1, "{:?}", verdict.errors);
    assert_eq!(verdict.additional_context[0].len(), MAX_STDOUT_BYTES);
    let flood_err = script(
        dir.path(),
        "flood-err.sh",
        "head -c 50000000 /dev/zero | tr '\\0' b >&2; exit 2",
    );
    let hooks = on("PreToolUse", None, &[&flood_err]);
    let verdict = fire_tool(dir.path(), hooks, HookEvent::PreToolUse, "Bash").await;
    let prefix = format!("PreToolUse:Bash hook error: [{flood_err}]: ");
    let blocked = verdict.blocked.unwrap();
    assert!(blocked.starts_with(&prefix));
    assert_eq!(blocked.len(), prefix.len() + MAX_STDERR_BYTES);
    assert_none_left(dir.path());
}

#[tokio::test]
async fn a_stdin_larger_than_the_pipe_buffer_reaches_readers_and_spares_non_readers() {
    let dir = tempfile::tempdir().unwrap();
    let reader = script(dir.path(), "reader.sh", "cat > got.json");
    let late = script(dir.path(), "late.sh", "head -c 10 > /dev/null");
    let deaf = script(dir.path(), "deaf.sh", "exit 0");
    let big = "x".repeat(4 * 1024 * 1024);
    let input = map(json!({"tool_name": "Write", "tool_input": {"content": big}}));
    let hooks = on("PreToolUse", None, &[&reader, &late, &deaf]);
    let (verdict, got) = write_through(dir.path(), hooks, input).await;
    assert_eq!(verdict, ran(3));
    assert_eq!(got, Some(big.len()));
}

#[tokio::test]
async fn cancelling_kills_the_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let slow = script(dir.path(), "slow.sh", "sleep 100");
    let runner = runner(dir.path(), on("Stop", None, &[&slow]));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let verdict = runner
        .run(&HookEvent::Stop, None, Map::new(), &cancel)
        .await;
    assert_eq!(
        verdict.errors,
        vec![format!("Stop hook [{slow}] cancelled; killed")]
    );
    assert_none_left(dir.path());
}

#[tokio::test]
async fn a_hook_that_cannot_start_is_a_non_blocking_error() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = Hooks::from_value(&on("Stop", None, &["true"]), Scope::User, None, "t").unwrap();
    let runner = HookRunner::new(
        hooks,
        HookBase {
            session_id: "s".into(),
            transcript_path: None,
            cwd: dir.path().join("missing"),
            project_dir: dir.path().to_path_buf(),
            permission_mode: "default".into(),
            secrets: Secrets::new(),
        },
    );
    let verdict = fire(&runner, HookEvent::Stop, None, Map::new()).await;
    assert_eq!(verdict.ran, 1);
    assert_eq!(verdict.errors.len(), 1, "{verdict:?}");
    assert!(
        verdict.errors[0].starts_with("Stop hook [true] cannot start: "),
        "{verdict:?}"
    );
}

#[tokio::test]
async fn the_hooks_of_an_event_run_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    procs::mkfifo(&dir.path().join("gate.fifo"));
    // Opening a FIFO blocks until the other end is opened: each hook finishes only if the other
    // runs at the same time (one after the other, the first would wait for its timeout).
    let writer = script(dir.path(), "writer.sh", "echo open > gate.fifo");
    let reader = script(dir.path(), "reader.sh", "cat gate.fifo");
    let hooks = json!({"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": writer, "timeout": 30},
        {"type": "command", "command": reader, "timeout": 30},
    ]}]});
    let verdict = fire_event(dir.path(), hooks, HookEvent::UserPromptSubmit).await;
    assert_eq!(
        verdict,
        HookVerdict {
            additional_context: vec!["open".into()],
            ..ran(2)
        }
    );
}

#[tokio::test]
async fn a_hook_that_floods_stdout_before_reading_stdin_does_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    // Both pipes full at once: the hook blocks on stdout until someone reads it, while its
    // stdin still waits to be written.
    let hook = script(
        dir.path(),
        "flood-first.sh",
        "head -c 4000000 /dev/zero; cat > got.json",
    );
    let hooks = json!({"PreToolUse": [{"hooks": [
        {"type": "command", "command": hook, "timeout": 30},
    ]}]});
    let big = "y".repeat(4 * 1024 * 1024);
    let input = map(json!({"tool_input": {"content": big}}));
    let (verdict, got) = write_through(dir.path(), hooks, input).await;
    assert_eq!(verdict, ran(1));
    assert_eq!(got, Some(big.len()));
}

#[tokio::test]
async fn the_runs_secrets_are_withheld_from_hooks() {
    assert!(
        std::env::var_os("HOME").is_some(),
        "the test needs HOME set"
    );
    let dir = tempfile::tempdir().unwrap();
    let hook = script(dir.path(), "env.sh", "echo \"home=${HOME-withheld}\"");
    let hooks =
        Hooks::from_value(&on("SessionStart", None, &[&hook]), Scope::User, None, "t").unwrap();
    let runner = HookRunner::new(
        hooks,
        HookBase {
            session_id: "s".into(),
            transcript_path: None,
            cwd: dir.path().to_path_buf(),
            project_dir: dir.path().to_path_buf(),
            permission_mode: "default".into(),
            secrets: Secrets::from_names(["HOME"], |_| None),
        },
    );
    let verdict = fire(&runner, HookEvent::SessionStart, None, Map::new()).await;
    assert_eq!(verdict.additional_context, vec!["home=withheld"]);
}
