//! `Process::settle`: waiting for what the program started to end by itself before it is
//! stopped (claude-agent-acp's `claude` writing its transcript on the way out).

use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_process::StdinMode;

use super::helpers::spec;

/// How long a test lets `settle` wait for what should come (a bound against hanging).
const DEADLINE: Duration = Duration::from_secs(60);

/// A program whose background job writes a file after a while, and which itself runs on.
async fn started(guarded: bool, dir: &std::path::Path) -> subagent_process::Process {
    let mut child = spec(guarded, "sh", dir)
        .args([
            "-c",
            "{ sleep 0.3; echo written > out; } & echo ready; exec sleep 300",
        ])
        .stdin(StdinMode::Null)
        .spawn()
        .unwrap();
    // The job exists once the program says so.
    assert_eq!(child.next_line().await.unwrap().as_deref(), Some("ready"));
    child
}

/// The background job of [`started`] wrote its file.
fn assert_written(dir: &std::path::Path, guarded: bool) {
    assert_eq!(
        std::fs::read_to_string(dir.join("out")).unwrap(),
        "written\n",
        "guarded: {guarded}"
    );
}

/// The program ends, of the stop's SIGTERM and nothing harder.
async fn assert_stopped_politely(child: subagent_process::Process, guarded: bool) {
    let exit = tokio::time::timeout(DEADLINE, child.wait())
        .await
        .expect("the program was stopped")
        .unwrap();
    assert_eq!(
        exit.stopped,
        Some(subagent_process::StopCause::Requested),
        "guarded: {guarded}"
    );
    assert_eq!(exit.signal(), Some(15), "guarded: {guarded}: {exit:?}");
    assert!(!exit.killed, "the polite signal was enough: {exit:?}");
}

#[tokio::test]
async fn settle_waits_for_the_programs_children_not_for_the_program() {
    for guarded in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = started(guarded, dir.path()).await;
        assert!(child.settle(DEADLINE).await, "guarded: {guarded}");
        assert_written(dir.path(), guarded);
        child.stop();
        child.wait().await.unwrap();
    }
}

#[tokio::test]
async fn settle_says_so_when_a_child_outlasts_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spec(false, "sh", dir.path())
        .args(["-c", "sleep 300 & echo ready; exec sleep 300"])
        .stdin(StdinMode::Null)
        .spawn()
        .unwrap();
    assert_eq!(child.next_line().await.unwrap().as_deref(), Some("ready"));
    assert!(!child.settle(Duration::from_millis(50)).await);
    child.stop();
    child.wait().await.unwrap();
}

#[tokio::test]
async fn settle_returns_at_once_for_a_program_without_children() {
    let mut child = spec(false, "sh", "/tmp")
        .args(["-c", "echo ready; exec sleep 300"])
        .stdin(StdinMode::Null)
        .spawn()
        .unwrap();
    assert_eq!(child.next_line().await.unwrap().as_deref(), Some("ready"));
    assert!(child.settle(DEADLINE).await);
    child.stop();
    child.wait().await.unwrap();
}

#[tokio::test]
async fn settle_then_stop_waits_for_the_programs_children_then_stops_it() {
    for guarded in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = started(guarded, dir.path()).await;
        assert!(child.settle_then_stop(DEADLINE).await, "guarded: {guarded}");
        assert_written(dir.path(), guarded);
        assert_stopped_politely(child, guarded).await;
    }
}

#[tokio::test]
async fn settle_then_stop_stops_a_program_without_children_at_once() {
    for guarded in [false, true] {
        let mut child = spec(guarded, "sh", "/tmp")
            .args(["-c", "echo ready; exec sleep 300"])
            .stdin(StdinMode::Null)
            .spawn()
            .unwrap();
        assert_eq!(child.next_line().await.unwrap().as_deref(), Some("ready"));
        assert!(child.settle_then_stop(DEADLINE).await, "guarded: {guarded}");
        assert_stopped_politely(child, guarded).await;
    }
}
