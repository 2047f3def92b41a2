//! Refusals before anything starts: the gate (with our stable code in the error's data), the
//! depth cap, the version header, unknown methods and tasks.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_a2a::rpc::RpcError;
use subagent_core::ErrorCode;

use super::runs::SCENARIOS;
use super::support::{Harness, send_params};

fn error_of(response: &Value) -> RpcError {
    serde_json::from_value(response["error"].clone()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gate_refuses_a_capability_the_row_lacks_with_our_code_and_nothing_starts() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let response = harness
        .call(
            "SendMessage",
            send_params("HELLO", json!({"skill": "forked", "persona": "Be terse."})),
        )
        .await;
    let error = error_of(&response);
    assert_eq!(
        (error.code, error.message.as_str(), error.stable_code()),
        (
            -32004,
            "subagent provider \"fork\" does not support the capability: \"persona\"",
            Some(ErrorCode::UnsupportedCapability)
        )
    );
    // The depth cap, an unknown agent type, a bad argument (the type's refusal is checked by
    // its stable code alone).
    for (metadata, code, stable) in [
        (json!({"depth": 3}), Some(-32602), ErrorCode::DepthExceeded),
        (
            json!({"agentType": "nope"}),
            None,
            ErrorCode::UnknownAgentType,
        ),
        (
            json!({"maxTurns": "many"}),
            Some(-32602),
            ErrorCode::InvalidArguments,
        ),
    ] {
        let params = send_params("HELLO", metadata.clone());
        let error = error_of(&harness.call("SendMessage", params).await);
        assert_eq!(error.stable_code(), Some(stable), "{metadata}");
        if let Some(code) = code {
            assert_eq!(error.code, code, "{metadata}");
        }
    }
    assert_eq!(harness.model.requests().len(), 0);
    assert_eq!(
        harness.result("ListTasks", json!({})).await["tasks"],
        json!([])
    );
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_version_header_or_with_a_0_3_method_nothing_is_served() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let body = json!({"jsonrpc": "2.0", "id": "x", "method": "SendMessage", "params": send_params("HELLO", json!({}))});
    let unversioned = harness
        .client
        .post(harness.rpc_url())
        .bearer_auth(super::support::TOKEN)
        .json(&body);
    let response = Harness::json_of(unversioned).await;
    assert_eq!(
        (&response["id"], &response["error"]["code"]),
        (&json!("x"), &json!(-32009))
    );
    let legacy = harness
        .call("message/send", send_params("HELLO", json!({})))
        .await;
    assert_eq!(legacy["error"]["code"], -32601);
    let missing = harness.call("GetTask", json!({"id": "nope"})).await;
    assert_eq!(missing["error"]["code"], -32001);
    let continued = harness.call("SendMessage", json!({"message": {"messageId": "m", "role": "ROLE_USER", "taskId": "nope", "parts": [{"text": "HELLO"}]}})).await;
    assert_eq!(continued["error"]["code"], -32001);
    assert_eq!(harness.model.requests().len(), 0);
    harness.shutdown().await;
}

/// Our extension's fields are ours to define: one the server does not know (a typo, or a field
/// of a newer client) cannot be honoured, so it is refused as invalid params, never dropped.
/// Extensions the server does not know, and other keys of the free-form metadata, are A2A's to
/// ignore.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_fields_of_our_extension_are_invalid_params_and_unknown_extensions_are_ignored() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let typo = error_of(
        &harness
            .call("SendMessage", send_params("HELLO", json!({"maxTurn": 2})))
            .await,
    );
    assert_eq!(
        (typo.code, typo.stable_code()),
        (-32602, Some(ErrorCode::InvalidArguments))
    );
    assert!(
        typo.message.contains("unknown field `maxTurn`"),
        "{}",
        typo.message
    );
    let mut request_level = json!({"message": {"messageId": "m1", "role": "ROLE_USER",
        "parts": [{"text": "HELLO"}]}});
    request_level["metadata"] = json!({subagent_a2a::EXTENSION_URI: {"skil": "subagent"}});
    let request_level = error_of(&harness.call("SendMessage", request_level).await);
    assert_eq!(
        (request_level.code, request_level.stable_code()),
        (-32602, Some(ErrorCode::InvalidArguments))
    );
    assert_eq!(harness.model.requests().len(), 0);
    // Another extension's metadata, an extension the server does not know asked for in the
    // header and in the message: served.
    let mut others = send_params("HELLO others", json!({"maxTurns": 2}));
    others["message"]["metadata"]["https://example.invalid/ext/other/v1"] = json!({"x": 1});
    others["message"]["extensions"] = json!(["https://example.invalid/ext/other/v1"]);
    others["metadata"] = json!({"https://example.invalid/ext/other/v1": {"y": 2}});
    let request = harness
        .request("SendMessage", others)
        .header("A2A-Extensions", "https://example.invalid/ext/other/v1");
    let response = Harness::json_of(request).await;
    assert_eq!(
        response["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{response}"
    );
    harness.shutdown().await;
}

/// `SubscribeToTask`'s `from` (our extension) is a count of events read: anything else, or a
/// count past the events the task has had, is invalid params, not a silent snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_from_is_invalid_params() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let mut stream = harness
        .stream("SendStreamingMessage", send_params("GATED from", json!({})))
        .await;
    let first = stream.next().await.unwrap();
    let id = first["task"]["id"].as_str().unwrap().to_owned();
    harness.model.wait_requests(1).await;
    let bad = [
        json!({"from": "abc"}),
        json!({"from": -1}),
        json!({"from": 1.5}),
        json!({"from": true}),
        json!({"from": null}),
        json!({"from": 1_000_000}),
        json!({"form": 1}),
    ];
    let mut seen = Vec::new();
    for fields in bad {
        let params = json!({"id": id, "metadata": {subagent_a2a::EXTENSION_URI: fields}});
        let error = error_of(&harness.call("SubscribeToTask", params).await);
        seen.push((error.code, error.stable_code()));
    }
    assert_eq!(seen, vec![(-32602, Some(ErrorCode::InvalidArguments)); 7]);
    // A good one streams the events from there.
    let params = json!({"id": id, "metadata": {subagent_a2a::EXTENSION_URI: {"from": 1}}});
    let mut again = harness.stream("SubscribeToTask", params).await;
    harness.model.gate("go").open();
    let rest = again.rest().await;
    assert_eq!(
        super::support::summaries(&rest).last().map(String::as_str),
        Some("TASK_STATE_COMPLETED")
    );
    assert!(
        rest.iter().all(|event| event.get("task").is_none()),
        "{rest:?}"
    );
    stream.rest().await;
    harness.shutdown().await;
}
