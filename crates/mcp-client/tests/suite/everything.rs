//! The MCP reference server (`@modelcontextprotocol/server-everything`, pinned) over stdio.

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_core::CancellationToken;
use subagent_mcp_client::{ErrorCode, render};

use super::{servers, started};

fn everything() -> serde_json::Value {
    let server = subagent_test_support::bench::installed_cli(
        "@modelcontextprotocol/server-everything/dist/index.js",
    );
    json!({"command": "node", "args": [server.display().to_string(), "stdio"], "env": {"GREETING": "${MCP_TEST_UNSET:-hello}"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_servers_tools_are_listed_and_called() {
    let (servers, _dir) = started(
        servers(json!({"everything": everything()})),
        Duration::from_secs(30),
        Duration::from_secs(30),
    );
    let (tools, failed) = servers.start_all().await;
    assert!(failed.is_empty(), "{failed:?}");
    let echo = tools
        .iter()
        .find(|t| t.qualified_name() == "mcp__everything__echo")
        .expect("echo is offered");
    assert!(echo.read_only, "echo says readOnlyHint");
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");
    let cancel = CancellationToken::new();
    let echoed = servers
        .call(
            "everything",
            "echo",
            json!({"message": "hi there"}).as_object().cloned(),
            &cancel,
        )
        .await
        .unwrap();
    assert_eq!(render(&echoed).content, "Echo: hi there");
    let sum = servers
        .call(
            "everything",
            "get-sum",
            json!({"a": 2, "b": 40}).as_object().cloned(),
            &cancel,
        )
        .await
        .unwrap();
    assert!(render(&sum).content.contains("42"), "{:?}", render(&sum));
    // An argument the tool's schema refuses is the server's error, which the model reads.
    let refused = servers
        .call(
            "everything",
            "get-sum",
            json!({"a": "two"}).as_object().cloned(),
            &cancel,
        )
        .await;
    match refused {
        Ok(result) => assert!(render(&result).is_error, "{:?}", render(&result)),
        Err(error) => assert_eq!(error.code, ErrorCode::Protocol, "{error}"),
    }
}

/// The configured `env` reaches the server, `${VAR:-default}` expanded (what else it inherits is
/// the process owner's scrubbed environment: `subagent-process`'s tests).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_gets_the_env_its_configuration_names() {
    let (servers, _dir) = started(
        servers(json!({"everything": everything()})),
        Duration::from_secs(30),
        Duration::from_secs(30),
    );
    let env = servers
        .call("everything", "get-env", None, &CancellationToken::new())
        .await
        .unwrap();
    let text = render(&env).content;
    assert!(text.contains("\"GREETING\": \"hello\""), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_past_its_timeout_is_cancelled_and_the_server_goes_on() {
    let (servers, _dir) = started(
        servers(json!({"everything": everything()})),
        Duration::from_secs(30),
        Duration::from_millis(500),
    );
    let cancel = CancellationToken::new();
    let error = servers
        .call(
            "everything",
            "trigger-long-running-operation",
            json!({"duration": 20, "steps": 4}).as_object().cloned(),
            &cancel,
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Timeout, "{error}");
    let echoed = servers
        .call(
            "everything",
            "echo",
            json!({"message": "still here"}).as_object().cloned(),
            &cancel,
        )
        .await
        .unwrap();
    assert_eq!(render(&echoed).content, "Echo: still here");
}
