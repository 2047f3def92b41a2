// Blob output (`wait_with_output`) and the model-keys-only environment policy.

use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_process::{CancellationToken, ProcessSpec, Scrub, StopCause, StopPolicy};

use super::helpers::{CWD, Death, group_members};

/// A spec for `program`, under the guardian or not, as the including module says.
fn spec(program: impl Into<std::path::PathBuf>, cwd: impl Into<std::path::PathBuf>) -> ProcessSpec {
    super::helpers::spec(GUARDED, program, cwd)
}

fn sh(script: &str) -> ProcessSpec {
    spec("sh", CWD).args(["-c", script])
}

#[tokio::test]
async fn output_is_captured_byte_exact_and_bounded_per_stream() {
    let child = sh("printf 'out\\r\\nno newline'; printf 'err\\n' >&2; exit 4")
        .capture_output(64)
        .spawn()
        .unwrap();
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(
        (
            out.exit.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.stdout_truncated,
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.stderr_truncated,
        ),
        (
            Some(4),
            "out\r\nno newline".to_owned(),
            false,
            "err\n".to_owned(),
            false
        )
    );

    // 100,000 bytes without a newline: no line bound applies, the capture keeps its first 1,000.
    let child =
        sh("head -c 100000 /dev/zero | tr '\\0' a; head -c 5000 /dev/zero | tr '\\0' b >&2")
            .capture_output(1000)
            .spawn()
            .unwrap();
    let out = child.wait_with_output().await.unwrap();
    assert!(out.exit.success());
    assert_eq!(out.stdout, vec![b'a'; 1000]);
    assert_eq!(out.stderr, vec![b'b'; 1000]);
    assert!(out.stdout_truncated && out.stderr_truncated);
}

#[tokio::test]
async fn without_a_capture_bound_nothing_is_kept() {
    let out = sh("echo hi; echo there >&2")
        .spawn()
        .unwrap()
        .wait_with_output()
        .await
        .unwrap();
    assert_eq!(
        (
            out.stdout,
            out.stdout_truncated,
            out.stderr,
            out.stderr_truncated
        ),
        (Vec::new(), true, Vec::new(), true)
    );
    assert_eq!(out.exit.stderr_tail, "there\n");
}

#[tokio::test]
async fn a_timeout_while_capturing_stops_the_whole_group_and_keeps_what_came() {
    let child = sh("sleep 300 & echo $!; echo started; wait")
        .capture_output(1024)
        .overall_timeout(Some(Duration::from_millis(300)))
        .stop_policy(StopPolicy::default().grace(Duration::from_secs(2)))
        .spawn()
        .unwrap();
    let leader = i32::try_from(child.pid()).unwrap();
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.exit.stopped, Some(StopCause::OverallTimeout));
    let text = String::from_utf8(out.stdout).unwrap();
    let (grandchild, rest) = text.split_once('\n').unwrap();
    assert_eq!(rest, "started\n");
    Death::watch(grandchild.parse().unwrap())
        .wait(Duration::from_secs(5))
        .await;
    assert!(group_members(leader).is_empty());
}

#[tokio::test]
async fn cancel_while_capturing_reports_the_cancel() {
    let cancel = CancellationToken::new();
    let child = sh("echo ready; exec sleep 300")
        .capture_output(1024)
        .cancel(cancel.clone())
        .spawn()
        .unwrap();
    cancel.cancel();
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.exit.stopped, Some(StopCause::Cancelled));
}

#[tokio::test]
async fn the_model_keys_policy_keeps_the_users_environment() {
    let out = spec("env", CWD)
        .base_env([
            ("PATH", "/usr/bin:/bin"),
            ("GITHUB_TOKEN", "ghp"),
            ("DB_PASSWORD", "pw"),
            ("ANTHROPIC_API_KEY", "sk-ant-real"),
            ("OPENAI_BASE_URL", "http://x"),
        ])
        .scrub(Scrub::ModelKeys)
        .capture_output(4096)
        .spawn()
        .unwrap()
        .wait_with_output()
        .await
        .unwrap();
    let mut env: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    env.sort();
    assert_eq!(
        env,
        ["DB_PASSWORD=pw", "GITHUB_TOKEN=ghp", "PATH=/usr/bin:/bin"]
    );
}
