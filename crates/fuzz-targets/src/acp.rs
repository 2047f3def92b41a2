//! What an ACP agent sends the `acp` provider's client.

use agent_client_protocol::v1::schema::{
    PromptResponse, RequestPermissionRequest, SessionNotification,
};
use serde_json::Value;
use subagent_acp::{PermissionPolicy, StreamState, permission_answer};
use subagent_core::PermissionMode;

fn take(value: Value, state: &mut StreamState, out: &mut Vec<subagent_core::RunEvent>) {
    if let Ok(notification) = serde_json::from_value::<SessionNotification>(value.clone()) {
        state.update(notification.update, out);
    } else if let Ok(request) = serde_json::from_value::<RequestPermissionRequest>(value.clone()) {
        for policy in [PermissionPolicy::Reject, PermissionPolicy::Allow] {
            for mode in PermissionMode::ALL {
                let _ = permission_answer(policy, mode, &request);
            }
        }
    } else if let Ok(response) = serde_json::from_value::<PromptResponse>(value) {
        let _ = state.outcome(&response, false);
        let _ = state.outcome(&response, true);
    }
}

/// `session/update` notifications into run events (`subagent_acp::StreamState::update`),
/// `session/request_permission` requests answered by every policy and permission mode
/// (`subagent_acp::permission_answer`), the prompt's answer into the outcome. One JSON value a
/// line: the message itself, a JSON-RPC envelope (its `params` or `result`), or a recorded
/// wire line (`{"msg": …}`, as in the reference transcripts).
pub fn acp_updates(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut state = StreamState::default();
    let mut out = Vec::new();
    for line in text.lines() {
        let Ok(mut value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(msg) = value.get_mut("msg").map(Value::take) {
            value = msg;
        }
        let inner = ["params", "result"]
            .iter()
            .find_map(|key| value.get(*key).cloned());
        take(value, &mut state, &mut out);
        if let Some(inner) = inner {
            take(inner, &mut state, &mut out);
        }
    }
}
