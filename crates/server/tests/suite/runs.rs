//! Send (blocking), stream, get, list and cancel, over HTTP.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Harness, send_params, summaries};

pub(super) const SCENARIOS: &str = subagent_test_support::scenarios::SERVED;

/// The task with its volatile parts (ids, times, usage) replaced.
fn stable(task: &Value) -> Value {
    let mut task = task.clone();
    let id = task["id"].as_str().unwrap().to_owned();
    let context = task["contextId"].as_str().unwrap().to_owned();
    let text = serde_json::to_string(&task)
        .unwrap()
        .replace(&id, "TASK")
        .replace(&context, "CTX");
    task = serde_json::from_str(&text).unwrap();
    task["status"]["timestamp"] = json!("TIME");
    if let Some(message) = task["status"].get_mut("message") {
        message["messageId"] = json!("MSG");
    }
    if let Some(outcome) = task["metadata"][subagent_a2a::EXTENSION_URI].get_mut("outcome") {
        outcome["usage"] = json!("USAGE");
    }
    task
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sent_message_runs_to_its_end_and_the_task_carries_the_answer() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let result = harness
        .result("SendMessage", send_params("HELLO please", json!({})))
        .await;
    let task = &result["task"];
    let ext = subagent_a2a::EXTENSION_URI;
    assert_eq!(
        stable(task),
        json!({
            "id": "TASK", "contextId": "CTX",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "TIME",
                "message": {"messageId": "MSG", "role": "ROLE_AGENT", "parts": [{"text": "Hi there."}],
                    "contextId": "CTX", "taskId": "TASK"}},
            "artifacts": [{"artifactId": "result", "name": "result", "parts": [{"text": "Hi there."}]}],
            "history": [{"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "HELLO please"}],
                "contextId": "CTX", "taskId": "TASK", "metadata": {ext: {}}}],
            // The session names the run for a later resume, but not the server's paths.
            "metadata": {ext: {"outcome": {"status": "completed", "text": "Hi there.", "usage": "USAGE",
                "session": {"provider": "spawn", "id": "TASK"}}}}
        })
    );
    // GetTask returns the same task; historyLength 0 leaves out the history.
    let id = task["id"].as_str().unwrap();
    assert_eq!(harness.result("GetTask", json!({"id": id})).await, *task);
    let short = harness
        .result("GetTask", json!({"id": id, "historyLength": 0}))
        .await;
    assert_eq!(short.get("history"), None);
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output_comes_back_as_a_data_part() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    // Python sends numbers as doubles: the schema still reads.
    let schema = json!({"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"], "maxProperties": 1.0});
    let result = harness
        .result(
            "SendMessage",
            send_params(
                "STRUCT count",
                json!({"outputSchema": schema, "maxTurns": 3.0}),
            ),
        )
        .await;
    assert_eq!(
        result["task"]["artifacts"],
        json!([{"artifactId": "result", "name": "result", "parts": [
            {"text": "{\"count\":7}"},
            {"data": {"count": 7}, "mediaType": "application/json"}
        ]}])
    );
    assert_eq!(result["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_starts_with_the_task_and_ends_after_the_final_status() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let mut events = harness
        .stream(
            "SendStreamingMessage",
            send_params("HELLO stream", json!({"skill": "explore"})),
        )
        .await;
    let events = events.rest().await;
    assert_eq!(
        summaries(&events),
        [
            "task TASK_STATE_SUBMITTED",
            "working started",
            "working text: Hi",
            "working text:  there.",
            "artifact result",
            "TASK_STATE_COMPLETED",
        ]
    );
    // The agent type's instructions reached the child.
    let request = &harness.model.model_requests()[0];
    assert!(
        request
            .body
            .as_ref()
            .unwrap()
            .to_string()
            .contains("You only read.")
    );
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_tasks_pages_and_filters_by_context_and_state() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let mut ids = Vec::new();
    for context in ["a", "b", "a"] {
        let mut params = send_params("HELLO list", json!({}));
        params["message"]["contextId"] = json!(context);
        let result = harness.result("SendMessage", params).await;
        ids.push(result["task"]["id"].as_str().unwrap().to_owned());
    }
    let ids_of = |list: &Value| -> Vec<String> {
        list["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let page = harness
        .result("ListTasks", json!({"contextId": "a", "pageSize": 1}))
        .await;
    assert_eq!(
        (ids_of(&page), &page["nextPageToken"], &page["totalSize"]),
        (vec![ids[0].clone()], &json!("1"), &json!(2))
    );
    let next = harness
        .result("ListTasks", json!({"contextId": "a", "pageToken": "1"}))
        .await;
    assert_eq!(
        (ids_of(&next), &next["nextPageToken"]),
        (vec![ids[2].clone()], &json!(""))
    );
    let all = harness
        .result("ListTasks", json!({"status": "TASK_STATE_COMPLETED"}))
        .await;
    assert_eq!(ids_of(&all), ids);
    assert_eq!(all["tasks"][0].get("artifacts"), None);
    let none = harness
        .result("ListTasks", json!({"status": "TASK_STATE_WORKING"}))
        .await;
    assert_eq!(ids_of(&none), Vec::<String>::new());
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_a_running_task_and_its_stream_ends_canceled() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let mut stream = harness
        .stream(
            "SendStreamingMessage",
            send_params("GATED cancel", json!({})),
        )
        .await;
    let first = stream.next().await.unwrap();
    let id = first["task"]["id"].as_str().unwrap().to_owned();
    harness.model.wait_requests(1).await;
    let task = harness.result("CancelTask", json!({"id": id})).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED");
    let rest = stream.rest().await;
    assert_eq!(
        summaries(&rest).last().map(String::as_str),
        Some("TASK_STATE_CANCELED")
    );
    // A finished task cannot be cancelled again.
    let again = harness.call("CancelTask", json!({"id": id})).await;
    assert_eq!(again["error"]["code"], -32002);
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_fields_in_metadata_reach_the_child() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let fields = json!({"toolFilter": {"deny": ["bash", "write_file"]}, "model": "other-model",
        "persona": "Answer in French.", "maxTurns": 2, "description": "fields"});
    let result = harness
        .result("SendMessage", send_params("HELLO fields", fields))
        .await;
    assert_eq!(result["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let request = &harness.model.model_requests()[0];
    let body = request.body.as_ref().unwrap();
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        (
            body["model"].as_str(),
            tools.contains(&"bash"),
            tools.contains(&"write_file"),
            tools.contains(&"read_file"),
            body["system"].to_string().contains("Answer in French."),
        ),
        (Some("other-model"), false, false, true, true)
    );
    harness.shutdown().await;
}
