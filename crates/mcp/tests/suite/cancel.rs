//! `notifications/cancelled` cancels the run; a client that goes away cancels everything it
//! started, and the server returns once the runs have ended.

use std::time::Duration;

use serde_json::json;

use super::support::Harness;

/// The child says something, then its model stream stalls until a gate nobody opens.
const SLOW: &str = r#"
- match: "wait for the gate"
  steps:
    - text: "working"
      wait_gate_mid: never
"#;

impl Harness {
    /// Waits until `n` progress messages said the children are at work (their streams are
    /// under way).
    async fn wait_working(&mut self, n: usize) {
        let mut seen = 0;
        while seen < n {
            let progress = self.progress.recv().await.unwrap();
            if progress.message.as_deref() == Some("text: working") {
                seen += 1;
            }
        }
    }
}

#[tokio::test]
async fn a_cancelled_call_cancels_its_run() {
    let mut harness = Harness::start(SLOW).await;
    let handle = harness
        .start_call("subagent", json!({"prompt": "wait for the gate"}))
        .await;
    harness.wait_working(1).await;
    handle
        .cancel(Some("changed my mind".to_owned()))
        .await
        .unwrap();
    // The child's model stream is dropped: the run was cancelled, not left waiting.
    harness.model.wait_dropped(1).await;
    // The server goes on serving.
    let tools = harness.client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 2);
}

#[tokio::test]
async fn a_client_that_goes_away_cancels_its_runs_and_the_server_returns() {
    let mut harness = Harness::start(SLOW).await;
    let _first = harness
        .start_call("subagent", json!({"prompt": "wait for the gate"}))
        .await;
    let _second = harness
        .start_call("helper", json!({"prompt": "wait for the gate, twice"}))
        .await;
    harness.wait_working(2).await;
    let Harness {
        model,
        client,
        serving,
        ..
    } = harness;
    client.cancel().await.unwrap();
    model.wait_dropped(2).await;
    // Bounded only so a regression fails instead of hanging the suite.
    let served = tokio::time::timeout(Duration::from_secs(30), serving)
        .await
        .expect("serve did not return")
        .unwrap();
    served.unwrap();
}
