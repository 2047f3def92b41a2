//! Bearer auth: no or a wrong token is 401 and starts nothing; the card stays public.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::runs::SCENARIOS;
use super::support::{Harness, send_params};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_or_a_wrong_token_is_401_and_nothing_starts() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send_params("HELLO", json!({}))});
    let attempts = [
        None,
        Some("Bearer wrong-token"),
        Some("Bearer test-token-012345678"),
        Some("test-token-0123456789"),
    ];
    let mut statuses = Vec::new();
    for authorization in attempts {
        let mut request = harness
            .client
            .post(harness.rpc_url())
            .header("A2A-Version", "1.0")
            .json(&body);
        if let Some(value) = authorization {
            request = request.header("Authorization", value);
        }
        let response = request.send().await.unwrap();
        statuses.push((
            response.status().as_u16(),
            response.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .to_owned(),
        ));
    }
    assert_eq!(statuses, vec![(401, "Bearer".to_owned()); 4]);
    assert_eq!(harness.model.requests().len(), 0);
    let list = harness.result("ListTasks", json!({})).await;
    assert_eq!(list["tasks"], json!([]));
    harness.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_is_public_and_lists_the_skills_with_their_capability_tables() {
    let mut harness = Harness::start(SCENARIOS, |_| {}).await;
    let response = harness
        .client
        .get(format!("{}/.well-known/agent-card.json", harness.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let card: Value = response.json().await.unwrap();
    let spawn = serde_json::to_value(subagent_spawn::capabilities()).unwrap();
    let fork = serde_json::to_value(subagent_fork::capabilities()).unwrap();
    assert_eq!(
        card,
        json!({
            "name": "subagents",
            "description": "A subagents instance: delegate a task to one of its agents.",
            "supportedInterfaces": [{"url": harness.rpc_url(), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "version": env!("CARGO_PKG_VERSION"),
            "capabilities": {"streaming": true, "pushNotifications": false, "extensions": [{
                "uri": subagent_a2a::EXTENSION_URI,
                "description": "subagents: request fields in message metadata, each skill's provider and capability table, run events and outcomes in metadata",
                "params": {"maxDepth": 3, "skills": [
                    {"skill": "subagent", "kind": "row", "provider": "spawn", "capabilities": spawn},
                    {"skill": "forked", "kind": "row", "provider": "fork", "capabilities": fork},
                    {"skill": "explore", "kind": "agent", "provider": "spawn", "capabilities": spawn},
                ]}}]},
            "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "opaque"}}},
            "securityRequirements": [{"schemes": {"bearer": {}}}],
            "defaultInputModes": ["text/plain", "application/json"],
            "defaultOutputModes": ["text/plain", "application/json"],
            "skills": [
                {"id": "subagent", "name": "subagent", "description": "A general-purpose child", "tags": ["delegation", "provider:spawn"]},
                {"id": "forked", "name": "forked", "description": "A fork", "tags": ["delegation", "provider:fork"]},
                {"id": "explore", "name": "explore", "description": "Read-only search of the code.", "tags": ["agent", "provider:spawn"]},
            ]
        })
    );
    harness.shutdown().await;
}
