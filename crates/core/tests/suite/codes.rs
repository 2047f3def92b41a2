//! Every error code and message, snapshotted: these strings are a public contract.

use subagent_core::{Capability, Error, ErrorCode};

#[test]
fn every_error_code_string() {
    let samples = vec![
        Error::UnknownProvider {
            name: "x".into(),
            known: vec!["spawn".into(), "fork".into()],
        },
        Error::DuplicateProvider {
            name: "spawn".into(),
        },
        Error::UnsupportedCapability {
            provider: "codex".into(),
            missing: vec![Capability::ToolFilter, Capability::Persona],
            because: None,
        },
        Error::DepthExceeded {
            child_depth: 3,
            max_depth: 2,
        },
        Error::NestedDelegationForbidden {
            reason: "a fork cannot delegate".into(),
        },
        Error::UnknownAgentType {
            name: "reviewer".into(),
            available: vec!["general-purpose".into(), "explore".into(), "plan".into()],
        },
        Error::UnknownSkill {
            name: "deploy".into(),
            available: vec!["greet".into()],
            reason: None,
        },
        Error::invalid("prompt is empty"),
        Error::spawn_failed("claude not found at /x/claude: run `cargo xtask install-clis`"),
        Error::Cancelled,
        Error::Unauthorized {
            message: "bad token".into(),
        },
        Error::NotResumable {
            message: "no session".into(),
        },
        Error::protocol("bad json"),
        Error::AgentTypeNotAllowed {
            name: "general-purpose".into(),
            allowed: vec!["explore".into(), "plan".into()],
        },
        Error::MissingApiKey {
            message: "ANTHROPIC_API_KEY is not set".into(),
        },
        Error::AnswerTooLarge {
            message: "the model's answer passed 8388608 bytes and its stream was stopped".into(),
        },
    ];
    assert_eq!(samples.len(), ErrorCode::ALL.len());
    let lines: Vec<String> = samples
        .iter()
        .zip(ErrorCode::ALL)
        .map(|(error, code)| {
            assert_eq!(error.code(), code);
            assert_eq!(
                serde_json::to_value(code).unwrap(),
                serde_json::Value::String(code.as_str().into())
            );
            format!("{}: {error}", code.as_str())
        })
        .collect();
    insta::assert_snapshot!(lines.join("\n"), @r#"
    UNKNOWN_PROVIDER: no subagent provider named "x" (known: "spawn", "fork")
    DUPLICATE_PROVIDER: a subagent provider named "spawn" is already registered
    UNSUPPORTED_CAPABILITY: subagent provider "codex" does not support the capabilities: "tool_filter", "persona"
    DEPTH_EXCEEDED: subagent depth 3 exceeds max_depth 2
    NESTED_DELEGATION_FORBIDDEN: nested delegation is forbidden: a fork cannot delegate
    UNKNOWN_AGENT_TYPE: unknown agent type "reviewer" (available: "general-purpose", "explore", "plan")
    UNKNOWN_SKILL: unknown skill "deploy" (available: "greet")
    INVALID_ARGUMENTS: invalid arguments: prompt is empty
    SPAWN_FAILED: could not start the subagent: claude not found at /x/claude: run `cargo xtask install-clis`
    CANCELLED: cancelled
    UNAUTHORIZED: unauthorized: bad token
    NOT_RESUMABLE: run cannot be resumed: no session
    PROTOCOL: protocol error: bad json
    AGENT_TYPE_NOT_ALLOWED: this agent may not start agent type "general-purpose" (allowed: "explore", "plan")
    MISSING_API_KEY: ANTHROPIC_API_KEY is not set
    ANSWER_TOO_LARGE: the model's answer passed 8388608 bytes and its stream was stopped
    "#);
}

#[test]
fn error_json_has_code_and_message() {
    assert_eq!(
        Error::Cancelled.to_json(),
        serde_json::json!({"code": "CANCELLED", "message": "cancelled"})
    );
}
