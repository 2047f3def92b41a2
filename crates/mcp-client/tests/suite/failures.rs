//! Servers that fail: each gives a clear error with a stable code, the other servers and the
//! run go on, and nothing is left running.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_core::CancellationToken;
use subagent_mcp_client::{ErrorCode, McpServers};

use super::{fixture, servers, started};

fn hostile(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![fixture("hostile.js")];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    json!({"command": "node", "args": args})
}

/// The hostile server alone, started in a fresh directory, its calls bounded by `call`.
fn hostile_alone(call: Duration) -> (McpServers, tempfile::TempDir) {
    started(
        servers(json!({"hostile": hostile(&[])})),
        Duration::from_secs(10),
        call,
    )
}

/// `tool` of the hostile server called with `arguments` under `cancel`: what the model would
/// read, or the error.
async fn call(
    servers: &McpServers,
    tool: &str,
    arguments: serde_json::Value,
    cancel: &CancellationToken,
) -> Result<String, subagent_mcp_client::Error> {
    let result = servers
        .call("hostile", tool, arguments.as_object().cloned(), cancel)
        .await?;
    Ok(subagent_mcp_client::render(&result).content)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_or_never_answers_fails_alone() {
    let (servers, _dir) = started(
        servers(json!({
            "missing": {"command": "/nonexistent/mcp-server"},
            "silent": hostile(&["silent"]),
            "hostile": hostile(&[]),
            "remote": {"url": "http://127.0.0.1:9/mcp"},
        })),
        Duration::from_secs(2),
        Duration::from_secs(5),
    );
    let (tools, failed) = servers.start_all().await;
    let names: Vec<String> = tools.iter().map(|t| t.qualified_name()).collect();
    assert_eq!(
        names,
        [
            "mcp__hostile__big",
            "mcp__hostile__die",
            "mcp__hostile__garbage",
            "mcp__hostile__hang"
        ]
    );
    let failed: Vec<(String, ErrorCode)> = failed
        .iter()
        .map(|(name, e)| (name.clone(), e.code))
        .collect();
    assert_eq!(
        failed,
        [
            ("missing".to_owned(), ErrorCode::StartFailed),
            ("silent".to_owned(), ErrorCode::StartFailed),
            ("remote".to_owned(), ErrorCode::StartFailed),
        ]
    );
    // A failed server is not tried again, and says why each time.
    let error = servers
        .call("silent", "big", None, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        error.message.contains("no answer to `initialize`"),
        "{error}"
    );
    let error = servers
        .call("missing", "x", None, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.message.contains("could not be started"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_call_says_how_and_starts_again_on_the_next_call() {
    let (servers, _dir) = hostile_alone(Duration::from_secs(10));
    let cancel = CancellationToken::new();
    let error = call(&servers, "die", json!(null), &cancel)
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::ServerExited, "{error}");
    assert!(error.message.contains("dying on purpose"), "{error}");
    // The next call starts it again.
    let big = call(&servers, "big", json!({"bytes": 10}), &cancel).await;
    assert_eq!(big.unwrap(), "x".repeat(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_silence_end_at_the_timeout_with_what_the_server_wrote() {
    let (servers, _dir) = hostile_alone(Duration::from_millis(800));
    let cancel = CancellationToken::new();
    let error = call(&servers, "garbage", json!(null), &cancel)
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Timeout, "{error}");
    assert!(
        error
            .message
            .contains("2 line(s) on stdout that are not MCP messages"),
        "{error}"
    );
    let error = call(&servers, "hang", json!(null), &cancel)
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Timeout, "{error}");
    // The server is still usable after both.
    let big = call(&servers, "big", json!({"bytes": 3}), &cancel).await;
    assert_eq!(big.unwrap(), "xxx");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_of_fifty_megabytes_arrives_whole_and_a_cancelled_call_ends_at_once() {
    let (servers, _dir) = hostile_alone(Duration::from_secs(60));
    let bytes = 50 * 1024 * 1024;
    let big = call(
        &servers,
        "big",
        json!({"bytes": bytes}),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(big.unwrap().len(), bytes);
    let cancelled = CancellationToken::new();
    let trigger = cancelled.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let began = Instant::now();
    let error = call(&servers, "hang", json!(null), &cancelled)
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Cancelled, "{error}");
    assert!(began.elapsed() < Duration::from_secs(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_servers_stops_their_processes() {
    let (servers, dir) = hostile_alone(Duration::from_secs(10));
    let (tools, _) = servers.start_all().await;
    assert_eq!(tools.len(), 4);
    let marker = fixture("hostile.js");
    let running = || {
        subagent_test_support::procs::live_with(&marker)
            .iter()
            .filter(|p| p.runs_in(dir.path()))
            .count()
    };
    assert_eq!(
        running(),
        1,
        "one hostile server runs for {}",
        dir.path().display()
    );
    drop(servers);
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        running() == 0
    });
    assert!(gone, "the server's process outlived its run");
}
