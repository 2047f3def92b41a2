//! Re-subscribing after a dropped stream: the snapshot, then every later event, none lost or
//! doubled; the run went on without its client.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::runs::SCENARIOS;
use super::support::{Harness, send_params, summaries};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_comes_back_gets_the_snapshot_and_every_later_event() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let mut first = harness
        .stream("SendStreamingMessage", send_params("RESUB now", json!({})))
        .await;
    let mut seen = Vec::new();
    while let Some(event) = first.next().await {
        seen.push(event);
        if summaries(&seen)
            .last()
            .is_some_and(|s| s == "working tool_result")
        {
            break;
        }
    }
    let id = seen[0]["task"]["id"].as_str().unwrap().to_owned();
    drop(first);
    // The run goes on: its second model request waits on the gate, with nothing in between.
    harness.model.wait_requests(2).await;
    let mut second = harness.stream("SubscribeToTask", json!({"id": id})).await;
    let snapshot = second.next().await.unwrap();
    assert_eq!(snapshot["task"]["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(
        snapshot["task"]["history"][0]["parts"],
        json!([{"text": "RESUB now"}])
    );
    harness.model.gate("resume").open();
    let later = second.rest().await;
    assert_eq!(
        summaries(&seen),
        [
            "task TASK_STATE_SUBMITTED",
            "working started",
            "working text: before",
            "working tool_call: ls",
            "working tool_result"
        ]
    );
    assert_eq!(
        summaries(&later),
        [
            "working text: after",
            "artifact result",
            "TASK_STATE_COMPLETED"
        ]
    );
    let task = harness.result("GetTask", json!({"id": id})).await;
    assert_eq!(task["artifacts"][0]["parts"], json!([{"text": "after"}]));
    // A finished task cannot be subscribed to; an unknown one is not found.
    let done = harness.call("SubscribeToTask", json!({"id": id})).await;
    assert_eq!(done["error"]["code"], -32004);
    let unknown = harness.call("SubscribeToTask", json!({"id": "nope"})).await;
    assert_eq!(unknown["error"]["code"], -32001);
    harness.shutdown().await;
}
