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

/// With a byte bound far below one run's events (2,000 of them, about 800 KB as JSON), a stream
/// still gets every event (only what every stream has read is dropped), and the finished task
/// (about 40 KB) is read whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_byte_bound_a_stream_misses_nothing_and_the_task_stays_whole() {
    let answer = "word ".repeat(2_000);
    let scenario = format!("- match: LONG\n  steps:\n    - text: \"{answer}\"\n");
    let mut harness = Harness::start(&scenario, |config| {
        config.keep_task_bytes = 256 << 10;
    })
    .await;
    let mut stream = harness
        .stream("SendStreamingMessage", send_params("LONG", json!({})))
        .await;
    let events = stream.rest().await;
    let text: String = events
        .iter()
        .filter_map(|event| {
            let run_event =
                event["statusUpdate"]["metadata"][subagent_a2a::EXTENSION_URI].get("event")?;
            (run_event["type"] == "text").then(|| run_event["text"].as_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(text, answer);
    assert_eq!(
        summaries(&events).last().map(String::as_str),
        Some("TASK_STATE_COMPLETED")
    );
    let id = events[0]["task"]["id"].as_str().unwrap();
    let task = harness.result("GetTask", json!({"id": id})).await;
    assert_eq!(task["artifacts"][0]["parts"], json!([{"text": answer}]));
    // The early events are gone: coming back for them gets A2A's answer for a finished task.
    let from = json!({"id": id, "metadata": {subagent_a2a::EXTENSION_URI: {"from": 1}}});
    let again = harness.call("SubscribeToTask", from).await;
    assert_eq!(again["error"]["code"], -32004);
    harness.shutdown().await;
}
