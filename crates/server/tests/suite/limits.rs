//! The body limit and the bound on concurrent runs.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::runs::SCENARIOS;
use super::support::{Harness, send_params};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_is_413_and_starts_nothing() {
    let mut harness = Harness::start(SCENARIOS, |config| config.body_limit = 1024).await;
    let response = harness
        .request(
            "SendMessage",
            send_params(&format!("HELLO {}", "x".repeat(2048)), json!({})),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    assert_eq!(harness.model.requests().len(), 0);
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_run_past_the_bound_is_refused_with_a_retry_hint_until_a_slot_frees() {
    let mut harness = Harness::start(SCENARIOS, |config| config.max_concurrent_runs = 1).await;
    let mut params = send_params("GATED busy", json!({}));
    params["configuration"] = json!({"returnImmediately": true});
    let first = harness.result("SendMessage", params).await;
    assert_eq!(first["task"]["status"]["state"], "TASK_STATE_SUBMITTED");
    let busy = harness
        .request("SendMessage", send_params("HELLO", json!({})))
        .send()
        .await
        .unwrap();
    assert_eq!(
        (
            busy.status().as_u16(),
            busy.headers()["retry-after"].to_str().unwrap().to_owned()
        ),
        (503, "1".to_owned())
    );
    let body: Value = busy.json().await.unwrap();
    assert_eq!(
        (
            &body["error"]["code"],
            &body["error"]["message"],
            &body["error"]["data"][1]
        ),
        (
            &json!(-32603),
            &json!("busy: 1 runs are going, the most this server runs at once; retry after 1 s"),
            &json!({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "BUSY",
                "domain": subagent_a2a::EXTENSION_URI, "metadata": {"retryAfterSeconds": "1"}})
        )
    );
    harness.model.gate("go").open();
    let id = first["task"]["id"].as_str().unwrap();
    let mut watch = harness.stream("SubscribeToTask", json!({"id": id})).await;
    watch.rest().await;
    let again = harness
        .result("SendMessage", send_params("HELLO again", json!({})))
        .await;
    assert_eq!(again["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    harness.shutdown().await;
}
