//! The run's end against a stand-in `codex` (a shell script printing `exec --json` events):
//! races that the real CLI makes too short to hit on purpose.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_codex::{CodexConfig, CodexProvider};
use subagent_core::{RunEvent, StartRequest, StopReason, SubagentProvider};
use subagent_test_support::runs;

fn fake_codex(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("codex");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

async fn cancel_after_usage(body: &str) -> subagent_core::Outcome {
    let dir = tempfile::tempdir().unwrap();
    let provider = CodexProvider::new(
        "codex",
        CodexConfig {
            binary: fake_codex(dir.path(), body),
            grace_ms: 2000,
            ..CodexConfig::default()
        },
    )
    .unwrap();
    let run = provider
        .start(StartRequest::new("say hi", dir.path()))
        .await
        .unwrap();
    let at = |event: &RunEvent| matches!(event, RunEvent::Usage { .. } | RunEvent::Progress { .. });
    runs::cancel_at(run, at, Duration::from_secs(30)).await
}

#[tokio::test]
async fn a_cancel_after_the_completed_turn_keeps_the_completed_outcome() {
    // codex printed `turn.completed` and is still on its way out when the cancel lands.
    let outcome = cancel_after_usage(
        r#"echo '{"type":"thread.started","thread_id":"t1"}'
echo '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"all done"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":2}}'
exec sleep 300"#,
    )
    .await;
    assert_eq!(
        (outcome.status, outcome.text.as_str(), outcome.diagnostic),
        (StopReason::Completed, "all done", None)
    );
}

#[tokio::test]
async fn a_cancel_before_the_turn_ends_is_cancelled() {
    let outcome = cancel_after_usage(
        r#"echo '{"type":"thread.started","thread_id":"t1"}'
echo '{"type":"error","message":"something odd"}'
exec sleep 300"#,
    )
    .await;
    assert_eq!(outcome.status, StopReason::Cancelled);
}
