//! JSON-RPC envelopes and errors with A2A's codes and our stable code in the data.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_a2a::rpc::{Kind, Request, Response, RpcError, version_supported};
use subagent_core::{Capability, Error, ErrorCode};

#[test]
fn a2a_error_codes_and_reasons_match_the_reference_table() {
    let table: Vec<(i64, &str)> = Kind::ALL.iter().map(|k| (k.code(), k.reason())).collect();
    assert_eq!(
        table,
        [
            (-32700, "INVALID_REQUEST"),
            (-32600, "INVALID_REQUEST"),
            (-32601, "METHOD_NOT_FOUND"),
            (-32602, "INVALID_PARAMS"),
            (-32603, "INTERNAL_ERROR"),
            (-32001, "TASK_NOT_FOUND"),
            (-32002, "TASK_NOT_CANCELABLE"),
            (-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"),
            (-32004, "UNSUPPORTED_OPERATION"),
            (-32005, "CONTENT_TYPE_NOT_SUPPORTED"),
            (-32006, "INVALID_AGENT_RESPONSE"),
            (-32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
            (-32008, "EXTENSION_SUPPORT_REQUIRED"),
            (-32009, "VERSION_NOT_SUPPORTED"),
        ]
    );
}

#[test]
fn the_task_not_found_error_is_the_reference_json() {
    let response = Response::error(
        json!(8),
        RpcError::new(Kind::TaskNotFound, "Task not found"),
    );
    assert_eq!(
        serde_json::to_value(&response).unwrap(),
        json!({"error":{"code":-32001,"message":"Task not found","data":[{"@type":
            "type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org",
            "metadata":{}}]},"id":8,"jsonrpc":"2.0"})
    );
    // An error without data (-32700 from the SDKs) reads too.
    let bare: Response = serde_json::from_value(
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}),
    )
    .unwrap();
    assert_eq!(bare.error.unwrap().kind(), Some(Kind::ParseError));
}

#[test]
fn a_gate_refusal_carries_our_stable_code_beside_a2a_s() {
    let refusal = Error::UnsupportedCapability {
        provider: "fork".to_owned(),
        missing: vec![Capability::Persona],
        because: None,
    };
    let error = RpcError::from_core(&refusal);
    assert_eq!(
        serde_json::to_value(&error).unwrap(),
        json!({"code": -32004, "message": refusal.to_string(), "data": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "UNSUPPORTED_OPERATION", "domain": "a2a-protocol.org", "metadata": {}},
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "UNSUPPORTED_CAPABILITY", "domain": subagent_a2a::EXTENSION_URI,
             "metadata": {"provider": "fork", "missing": "persona"}}]})
    );
    assert_eq!(error.stable_code(), Some(ErrorCode::UnsupportedCapability));
    let depth = RpcError::from_core(&Error::DepthExceeded {
        child_depth: 4,
        max_depth: 3,
    });
    assert_eq!(
        (depth.kind(), depth.stable_code()),
        (Some(Kind::InvalidParams), Some(ErrorCode::DepthExceeded))
    );
    assert_eq!(RpcError::new(Kind::Internal, "x").stable_code(), None);
}

/// What a `subagent serve` refuses with comes back on the other side as the same error: same
/// variant, same fields, same code (through JSON, as on the wire).
#[test]
fn every_refusal_crosses_the_wire_unchanged() {
    let refusals = [
        Error::UnknownProvider {
            name: "x".to_owned(),
            known: vec!["spawn".to_owned(), "fork".to_owned()],
        },
        Error::UnsupportedCapability {
            provider: "fork".to_owned(),
            missing: vec![Capability::Persona, Capability::ToolFilter],
            because: None,
        },
        Error::DepthExceeded {
            child_depth: 4,
            max_depth: 3,
        },
        Error::UnknownAgentType {
            name: "reviewer".to_owned(),
            available: vec!["explore".to_owned()],
        },
        Error::AgentTypeNotAllowed {
            name: "plan".to_owned(),
            allowed: Vec::new(),
        },
        Error::invalid("the message has no text"),
        Error::spawn_failed("claude not found"),
        Error::NotResumable {
            message: "no such session".to_owned(),
        },
        Error::protocol("bad line"),
        Error::Cancelled,
    ];
    for refusal in refusals {
        let wire = serde_json::to_value(RpcError::from_core(&refusal)).unwrap();
        let read: RpcError = serde_json::from_value(wire).unwrap();
        assert_eq!(read.core_error(), Some(refusal.clone()), "{refusal}");
    }
    assert_eq!(RpcError::new(Kind::Internal, "x").core_error(), None);
}

#[test]
fn requests_echo_string_or_number_ids_and_only_1_x_versions_pass() {
    let request: Request = serde_json::from_value(
        json!({"jsonrpc":"2.0","id":"abc","method":"GetTask","params":{"id":"t"}}),
    )
    .unwrap();
    assert_eq!(request, Request::new("abc", "GetTask", json!({"id": "t"})));
    let versions: Vec<bool> = [
        Some("1.0"),
        Some("1.1"),
        Some(" 1.0 "),
        Some("0.3"),
        Some(""),
        None,
    ]
    .into_iter()
    .map(version_supported)
    .collect();
    assert_eq!(versions, [true, true, true, false, false, false]);
}
