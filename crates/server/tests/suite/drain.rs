//! Shutdown drains: runs may finish before the deadline; past it they are cancelled.

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::runs::SCENARIOS;
use super::support::{Harness, send_params, summaries};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_going_at_shutdown_finishes_before_the_server_stops() {
    let mut harness = Harness::start(SCENARIOS, |config| {
        config.drain_deadline = Duration::from_secs(600)
    })
    .await;
    let mut stream = harness
        .stream(
            "SendStreamingMessage",
            send_params("GATED drain", json!({})),
        )
        .await;
    stream.next().await.unwrap();
    harness.model.wait_requests(1).await;
    harness.signal_shutdown();
    harness.model.gate("go").open();
    let rest = stream.rest().await;
    assert_eq!(
        summaries(&rest).last().map(String::as_str),
        Some("TASK_STATE_COMPLETED")
    );
    harness.wait_stopped().await;
    // Stopped: nothing listens any more.
    assert!(
        harness
            .client
            .get(format!("{}/.well-known/agent-card.json", harness.base))
            .send()
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_drain_deadline_runs_are_cancelled() {
    let mut harness =
        Harness::start(SCENARIOS, |config| config.drain_deadline = Duration::ZERO).await;
    let mut stream = harness
        .stream(
            "SendStreamingMessage",
            send_params("GATED never", json!({})),
        )
        .await;
    stream.next().await.unwrap();
    harness.model.wait_requests(1).await;
    harness.signal_shutdown();
    let rest = stream.rest().await;
    assert_eq!(
        summaries(&rest).last().map(String::as_str),
        Some("TASK_STATE_CANCELED")
    );
    harness.wait_stopped().await;
}
