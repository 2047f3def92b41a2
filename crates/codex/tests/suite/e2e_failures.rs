//! The real `codex` CLI when things go wrong: model errors, cancellation mid-tool, a model server
//! that refuses connections or never answers.

use futures::StreamExt;
use pretty_assertions::assert_eq;
use subagent_codex::SandboxMode;
use subagent_core::{RunEvent, StopReason, SubagentProvider};
use subagent_test_support::runs::run_to_end;

use super::e2e::SCENARIOS;
use super::harness::{Harness, live_processes_matching};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_error_fails_with_its_message() {
    let harness = Harness::new(SCENARIOS).await;
    let provider = harness.provider(|_| {});
    let (events, outcome) = run_to_end(&provider, harness.request("trigger a model error")).await;
    assert_eq!(outcome.status, StopReason::Failed);
    let diagnostic = outcome.diagnostic.unwrap();
    assert!(diagnostic.contains("fake bad request"), "{diagnostic}");
    assert!(
        events.iter().any(
            |e| matches!(e, RunEvent::Progress { message, .. } if message.contains("fake bad request"))
        ),
        "the error event is reported as progress: {events:?}"
    );
    // Retries are off: one request.
    assert_eq!(harness.server.model_requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_tool_leaves_no_process_behind() {
    let harness = Harness::new(SCENARIOS).await;
    let provider = harness.provider(|c| c.sandbox = SandboxMode::WorkspaceWrite);
    let mut run = provider
        .start(harness.request("run the long command").build())
        .await
        .unwrap();
    let mut events = run.take_events().unwrap();
    // Wait for the command to be running: the ToolCall event.
    while let Some(event) = events.next().await {
        if matches!(&event, RunEvent::ToolCall { name, .. } if name == "exec_command") {
            break;
        }
    }
    let port = format!("127.0.0.1:{}", harness.server.port());
    assert!(
        !live_processes_matching("sleep 31337").is_empty(),
        "the command runs"
    );
    assert!(!live_processes_matching(&port).is_empty(), "codex runs");
    run.cancel();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Cancelled, "{outcome:?}");
    assert!(
        outcome.session.is_some(),
        "a cancelled thread can be resumed"
    );
    // The outcome is delivered after codex was reaped and its tree killed; the sandboxed command
    // (in a session of its own) may take a moment to be torn down by the kernel, so look a few
    // times within a bounded window rather than once.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let left: Vec<String> = live_processes_matching("sleep 31337")
            .into_iter()
            .chain(live_processes_matching(&port))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "processes left after cancel: {left:#?}"
        );
        tokio::task::yield_now().await;
        std::thread::yield_now();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_fails_after_the_reconnect_timeout() {
    let harness = Harness::new(SCENARIOS).await;
    // A port nothing listens on: bind one, then free it.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_port = dead.local_addr().unwrap().port();
    drop(dead);
    let provider = harness.provider(|c| {
        c.reconnect_timeout_secs = 1;
        if let Some(p) = c.model_provider.as_mut() {
            p.base_url = format!("http://127.0.0.1:{dead_port}/v1");
        }
    });
    let started = std::time::Instant::now();
    let (_, outcome) = run_to_end(&provider, harness.request("say hi")).await;
    assert_eq!(outcome.status, StopReason::Failed);
    let diagnostic = outcome.diagnostic.unwrap();
    assert!(
        diagnostic.starts_with("codex could not reach the model server for 1 s and was stopped (codex's last error: Reconnecting..."),
        "{diagnostic}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_model_server_fails_after_the_idle_timeout() {
    let harness = Harness::new(SCENARIOS).await;
    let provider = harness.provider(|c| c.idle_timeout_secs = 1);
    let (_, outcome) = run_to_end(&provider, harness.request("stall forever")).await;
    assert_eq!(outcome.status, StopReason::Failed);
    let diagnostic = outcome.diagnostic.unwrap();
    assert!(
        diagnostic.starts_with("codex made no progress for 1 s and was stopped"),
        "{diagnostic}"
    );
    assert!(harness.server.gate("never-opened").waiting() <= 1);
}
