//! The run's end against a stand-in `claude` (a shell script printing stream-json): races that
//! the real CLI makes too short to hit on purpose.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_claude_code::{ClaudeCodeConfig, ClaudeCodeProvider};
use subagent_core::{Outcome, RunEvent, StartRequest, StopReason, SubagentProvider};
use subagent_test_support::runs;

fn fake_claude(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("claude");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Runs a stand-in `claude` of `body` in `dir`, cancels the run at the first event `at` holds
/// for, and returns the outcome (within 30 s).
async fn cancel_at(dir: &Path, body: &str, at: impl Fn(&RunEvent) -> bool) -> Outcome {
    let binary = fake_claude(dir, body);
    let provider = ClaudeCodeProvider::new(
        "cc",
        ClaudeCodeConfig {
            binary,
            grace_ms: 2000,
            ..ClaudeCodeConfig::default()
        },
    )
    .unwrap();
    let run = provider.start(StartRequest::new("hi", dir)).await.unwrap();
    runs::cancel_at(run, at, Duration::from_secs(30)).await
}

#[tokio::test]
async fn a_cancel_after_the_success_result_keeps_the_completed_outcome() {
    // claude printed its successful result and is still on its way out when the cancel lands.
    let dir = tempfile::tempdir().unwrap();
    // The result's usage is the last event before the end.
    let outcome = cancel_at(
        dir.path(),
        r#"cat >/dev/null
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"all done","session_id":"s1","usage":{"input_tokens":3,"output_tokens":2}}'
exec sleep 300"#,
        |event| matches!(event, RunEvent::Usage { .. }),
    )
    .await;
    assert_eq!(
        (outcome.status, outcome.text.as_str(), outcome.diagnostic),
        (StopReason::Completed, "all done", None)
    );
}

#[tokio::test]
async fn a_cancel_before_the_result_is_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = cancel_at(
        dir.path(),
        r#"cat >/dev/null
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
exec sleep 300"#,
        |event| matches!(event, RunEvent::Progress { .. }),
    )
    .await;
    assert_eq!(outcome.status, StopReason::Cancelled);
}
