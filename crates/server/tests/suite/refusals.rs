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
    let deep = error_of(
        &harness
            .call("SendMessage", send_params("HELLO", json!({"depth": 3})))
            .await,
    );
    assert_eq!(
        (deep.code, deep.stable_code()),
        (-32602, Some(ErrorCode::DepthExceeded))
    );
    let unknown_type = error_of(
        &harness
            .call(
                "SendMessage",
                send_params("HELLO", json!({"agentType": "nope"})),
            )
            .await,
    );
    assert_eq!(
        unknown_type.stable_code(),
        Some(ErrorCode::UnknownAgentType)
    );
    let bad = error_of(
        &harness
            .call(
                "SendMessage",
                send_params("HELLO", json!({"maxTurns": "many"})),
            )
            .await,
    );
    assert_eq!(
        (bad.code, bad.stable_code()),
        (-32602, Some(ErrorCode::InvalidArguments))
    );
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
    let response: Value = harness
        .client
        .post(harness.rpc_url())
        .bearer_auth(super::support::TOKEN)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
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
