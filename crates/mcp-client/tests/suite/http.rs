//! Servers reached over streamable HTTP: the MCP reference server, and the hostile one.

use std::process::{Command, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_core::CancellationToken;
use subagent_mcp_client::{ErrorCode, render};
use subagent_test_support::cli_peer::Peer;

use super::{fixture, servers, started};

/// The reference server over streamable HTTP on a port of its own, and its URL.
fn everything() -> Peer {
    let server = subagent_test_support::bench::installed_cli(
        "@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js",
    );
    Peer::start(
        Command::new("node")
            .arg(fixture("everything-http.mjs"))
            .arg(server),
        Stdio::null(),
    )
}

/// The hostile server in `mode` (`http`, `http-401`).
fn hostile(mode: &str) -> Peer {
    Peer::start(
        Command::new("node").arg(fixture("hostile.js")).arg(mode),
        Stdio::null(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_servers_tools_are_listed_and_called_over_http() {
    let peer = everything();
    let (servers, _dir) = started(
        servers(json!({"everything": {
            "type": "http",
            "url": peer.first_line(),
            "headers": {"X-Team": "${MCP_TEST_UNSET:-platform}"},
        }})),
        Duration::from_secs(30),
        Duration::from_secs(30),
    );
    let (tools, failed) = servers.start_all().await;
    assert!(failed.is_empty(), "{failed:?}");
    let names: Vec<String> = tools.iter().map(|t| t.qualified_name()).collect();
    assert!(
        names.contains(&"mcp__everything__echo".to_owned()),
        "{names:?}"
    );
    let cancel = CancellationToken::new();
    let echoed = servers
        .call(
            "everything",
            "echo",
            json!({"message": "over http"}).as_object().cloned(),
            &cancel,
        )
        .await
        .unwrap();
    assert_eq!(render(&echoed).content, "Echo: over http");
    // A call that streams progress (the answer comes as server-sent events) arrives whole.
    let long = servers
        .call(
            "everything",
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}).as_object().cloned(),
            &cancel,
        )
        .await
        .unwrap();
    assert!(
        render(&long).content.contains("completed"),
        "{:?}",
        render(&long)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_http_call_ends_at_once_and_the_session_goes_on() {
    let peer = everything();
    let (servers, _dir) = started(
        servers(json!({"everything": {"type": "http", "url": peer.first_line()}})),
        Duration::from_secs(30),
        Duration::from_secs(60),
    );
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stopper.cancel();
    });
    let error = servers
        .call(
            "everything",
            "trigger-long-running-operation",
            json!({"duration": 30, "steps": 3}).as_object().cloned(),
            &cancel,
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Cancelled, "{error}");
    let echoed = servers
        .call(
            "everything",
            "echo",
            json!({"message": "still here"}).as_object().cloned(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(render(&echoed).content, "Echo: still here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_servers_that_refuse_die_or_answer_garbage_fail_with_their_codes() {
    let refusing = hostile("http-401");
    let mut dying = hostile("http");
    let (servers, _dir) = started(
        servers(json!({
            "refusing": {"type": "http", "url": refusing.first_line()},
            "hostile": {"type": "http", "url": dying.first_line()},
            "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        })),
        Duration::from_secs(10),
        Duration::from_secs(5),
    );
    let (tools, failed) = servers.start_all().await;
    assert_eq!(tools.len(), 4, "{tools:?}");
    let failed: Vec<(String, ErrorCode, String)> = failed
        .into_iter()
        .map(|(name, e)| (name, e.code, e.message))
        .collect();
    assert_eq!(failed[0].0, "refusing");
    assert_eq!(failed[0].1, ErrorCode::StartFailed);
    assert_eq!(
        failed[0].2,
        format!(
            "MCP server `refusing` (/test/preset.yaml): the MCP handshake failed: unexpected server response: HTTP 401 Unauthorized (the server wants credentials: set them in the server's `headers`): no entry without a token"
        )
    );
    assert_eq!(failed[1].0, "old");
    assert_eq!(failed[1].1, ErrorCode::UnsupportedTransport);
    let cancel = CancellationToken::new();
    // 50 MB arrive whole.
    let big = servers
        .call(
            "hostile",
            "big",
            json!({"bytes": 50_000_000}).as_object().cloned(),
            &cancel,
        )
        .await
        .unwrap();
    assert_eq!(render(&big).content.len(), 50_000_000);
    let garbage = servers
        .call("hostile", "garbage", None, &cancel)
        .await
        .unwrap_err();
    assert_eq!(garbage.code, ErrorCode::Protocol, "{garbage}");
    let hang = servers.call("hostile", "hang", None, &cancel).await;
    // The server hangs the request: the call's timeout ends it.
    assert_eq!(hang.unwrap_err().code, ErrorCode::Timeout);
    dying.child().kill().unwrap();
    let gone = servers
        .call(
            "hostile",
            "big",
            json!({"bytes": 1}).as_object().cloned(),
            &cancel,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(gone.code, ErrorCode::ServerExited | ErrorCode::Protocol),
        "{gone}"
    );
    assert!(gone.message.contains("hostile"), "{gone}");
}
