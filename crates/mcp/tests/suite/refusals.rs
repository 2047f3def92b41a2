//! What the gate refuses is a tool result with `isError` and our stable code, never a protocol
//! error, and nothing starts; only a tool that does not exist is a protocol error.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Harness, Setup, params, texts};

async fn refused(harness: &Harness, arguments: serde_json::Value) -> (String, String) {
    let result = harness.call("subagent", arguments).await;
    assert_eq!(result.is_error, Some(true), "{:?}", texts(&result));
    let code = result.meta.as_ref().unwrap().0["code"]
        .as_str()
        .unwrap()
        .to_owned();
    (code, texts(&result)[0].clone())
}

#[tokio::test]
async fn refusals_are_tool_errors_with_stable_codes() {
    let harness = Harness::start("[]").await;
    assert_eq!(
        refused(&harness, json!({"prompt": "x", "subagent_type": "nope"})).await,
        (
            "UNKNOWN_AGENT_TYPE".to_owned(),
            "error[UNKNOWN_AGENT_TYPE]: unknown agent type \"nope\" (available: \"explore\", \"elsewhere\")"
                .to_owned()
        )
    );
    let (code, text) = refused(&harness, json!({"prompt": "x", "colour": "red"})).await;
    assert_eq!(code, "INVALID_ARGUMENTS");
    assert!(text.contains("unknown field `colour`"), "{text}");
    let (code, _) = refused(&harness, json!({"prompt": "  "})).await;
    assert_eq!(code, "INVALID_ARGUMENTS");
    // No isolator in this registry: the gate refuses a worktree.
    let (code, _) = refused(&harness, json!({"prompt": "x", "isolation": "worktree"})).await;
    assert_eq!(code, "INVALID_ARGUMENTS");
    let (code, _) = refused(
        &harness,
        json!({"prompt": "x", "output_schema": {"type": "string"}}),
    )
    .await;
    assert_eq!(code, "INVALID_ARGUMENTS");
    // Refused by the provider's own start: a session it does not have.
    let (code, text) = refused(
        &harness,
        json!({"prompt": "x", "resume": "no-such-session"}),
    )
    .await;
    assert_eq!(code, "NOT_RESUMABLE", "{text}");
    // An agent type on a provider this registry does not have.
    let (code, text) = refused(
        &harness,
        json!({"prompt": "x", "subagent_type": "elsewhere"}),
    )
    .await;
    assert_eq!(code, "UNKNOWN_PROVIDER", "{text}");
    assert_eq!(harness.model.model_requests().len(), 0, "something started");

    // A tool that is not there cannot be routed: that one is a protocol error.
    let error = harness
        .client
        .call_tool(params("nope", json!({"prompt": "x"})))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("no tool \"nope\" here"),
        "{error}"
    );
}

/// Calls count as depth 1 under the server's cap: a cap of 0 refuses every call.
#[tokio::test]
async fn a_call_is_a_child_at_depth_one() {
    let harness = Harness::with(
        "[]",
        Setup {
            max_depth: 0,
            ..Setup::default()
        },
    )
    .await;
    assert_eq!(
        refused(&harness, json!({"prompt": "x"})).await,
        (
            "DEPTH_EXCEEDED".to_owned(),
            "error[DEPTH_EXCEEDED]: subagent depth 1 exceeds max_depth 0".to_owned()
        )
    );
}

/// The doc-hidden way in of the `mcp_arguments` fuzz target reads a call's arguments as a call
/// does: the same refusals, the same request, nothing started.
#[tokio::test]
async fn call_request_reads_arguments_as_a_call_does() {
    let model = subagent_test_support::FakeServer::from_yaml("[]")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let server = super::support::server(&model, &dir, &Setup::default());
    let code = |tool: &str, arguments: serde_json::Value| match server
        .call_request(tool, Some(super::support::object(arguments)))
    {
        None => "no such tool".to_owned(),
        Some(Ok(_)) => "ok".to_owned(),
        Some(Err(error)) => error.code().as_str().to_owned(),
    };
    assert_eq!(code("nope", json!({"prompt": "x"})), "no such tool");
    assert_eq!(
        code("subagent", json!({"prompt": "x", "colour": "red"})),
        "INVALID_ARGUMENTS"
    );
    assert_eq!(
        code("subagent", json!({"prompt": " "})),
        "INVALID_ARGUMENTS"
    );
    assert_eq!(code("subagent", json!({"prompt": 7})), "INVALID_ARGUMENTS");
    assert_eq!(
        code("subagent", json!({"prompt": "x", "subagent_type": "nope"})),
        "UNKNOWN_AGENT_TYPE"
    );
    let Some(Ok((provider, request))) = server.call_request(
        "helper",
        Some(super::support::object(
            json!({"prompt": "look", "description": "Look", "subagent_type": "explore"}),
        )),
    ) else {
        panic!("the call was refused");
    };
    assert_eq!(provider, "spawn");
    assert_eq!(request.description.as_deref(), Some("Look"));
    assert_eq!(request.parent.depth, 0);
    assert_eq!(model.requests().len(), 0);
}
