//! The same server over MCP streamable HTTP (`McpServer::serve_http`), driven by a plain HTTP
//! client (`subagent_test_support::mcp_http`): calls and their progress, the token, the
//! DNS-rebinding checks, and every way a call ends early (`notifications/cancelled`, the
//! session's end, the call's stream dropped, the server told to stop).

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_mcp::{HttpConfig, MCP_PATH, Token};
use subagent_test_support::FakeServer;
use subagent_test_support::mcp_http::{Client, Events};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::support::{Setup, server};

const SCENARIOS: &str = r#"
- match: "what is the password"
  steps:
    - text: "swordfish"
- match: "wait for the gate"
  steps:
    - text: "working"
      wait_gate_mid: never
"#;

/// `serve_http` on 127.0.0.1:0 over spawn children on the fake model server.
struct Http {
    model: FakeServer,
    url: String,
    stop: Option<oneshot::Sender<()>>,
    serving: JoinHandle<subagent_mcp::Result<()>>,
    _dir: tempfile::TempDir,
}

impl Http {
    async fn start(token: Option<&str>) -> Self {
        let model = FakeServer::from_yaml(SCENARIOS).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let server = server(&model, &dir, &Setup::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}{MCP_PATH}", listener.local_addr().unwrap());
        let mut config = HttpConfig::new();
        config.token = token.map(|token| Token::new(token).unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let serving = tokio::spawn(server.serve_http(listener, config, async move {
            let _ = stopped.await;
        }));
        Self {
            model,
            url,
            stop: Some(stop),
            serving,
            _dir: dir,
        }
    }

    /// A client with its session open.
    async fn client(&self, token: Option<&str>) -> Client {
        let mut client = Client::new(&self.url, token);
        client.initialize().await;
        client
    }

    /// Stops the server and waits until `serve_http` has returned (every run ended).
    async fn stop(mut self) {
        drop(self.stop.take());
        // Bounded only so a regression fails instead of hanging the suite.
        tokio::time::timeout(Duration::from_secs(30), self.serving)
            .await
            .expect("serve_http did not return")
            .unwrap()
            .unwrap();
    }
}

/// A call (request `id`) whose child works until cancelled, with a progress token; returns its
/// stream once the child is at work.
async fn working_call(client: &Client, id: u64) -> Events {
    let response = client
        .post(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "subagent", "arguments": {"prompt": "wait for the gate"},
            "_meta": {"progressToken": "w"}}}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let mut events = Events::new(response);
    while let Some(message) = events.next().await {
        if message["params"]["message"] == "text: working" {
            return events;
        }
    }
    panic!("the call's stream ended before its child was at work")
}

#[tokio::test]
async fn a_call_over_http_answers_after_its_progress_and_the_tools_are_listed() {
    let http = Http::start(None).await;
    let mut client = Client::new(&http.url, None);
    let info = client.initialize().await;
    assert_eq!(info["serverInfo"]["name"], "subagents");
    assert!(client.session().is_some());
    let tools = client.ask(1, "tools/list", json!({})).await;
    let names: Vec<&Value> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| &tool["name"])
        .collect();
    assert_eq!(names, [&json!("subagent"), &json!("helper")]);
    let response = client
        .post(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "subagent", "arguments": {"prompt": "what is the password?"},
            "_meta": {"progressToken": "p"}}}),
        )
        .await;
    let mut events = Events::new(response);
    let mut progress = Vec::new();
    let answer = loop {
        let message = events.next().await.unwrap();
        if message["method"] == "notifications/progress" {
            progress.push(message["params"]["message"].clone());
        } else {
            break message;
        }
    };
    assert_eq!(progress[0], "started on spawn: what is the password?");
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["isError"], false);
    assert_eq!(answer["result"]["content"][0]["text"], "swordfish");
    http.stop().await;
}

#[tokio::test]
async fn without_the_token_or_with_a_wrong_one_a_request_is_refused_with_401() {
    let http = Http::start(Some("s3cret")).await;
    for token in [None, Some("wrong"), Some("s3cret2")] {
        let response = Client::new(&http.url, token)
            .post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}))
            .await;
        assert_eq!(response.status(), 401, "{token:?}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
    }
    let client = http.client(Some("s3cret")).await;
    let answer = client
        .ask(
            1,
            "tools/call",
            json!({"name": "helper",
            "arguments": {"prompt": "what is the password?"}}),
        )
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], "swordfish");
    // Nothing reached the model but the one call.
    assert_eq!(http.model.model_requests().len(), 1);
    http.stop().await;
}

#[tokio::test]
async fn without_a_token_only_loopback_hosts_and_origins_are_served() {
    let http = Http::start(None).await;
    let client = Client::new(&http.url, None);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
    .to_string();
    let status = |request: reqwest::RequestBuilder| {
        let body = initialize.clone();
        async move { request.body(body).send().await.unwrap().status().as_u16() }
    };
    let post = || client.request(reqwest::Method::POST);
    let seen = [
        status(post().header("origin", "http://evil.example")).await,
        status(post().header("host", "evil.example")).await,
        status(post().header("origin", "http://localhost:6274")).await,
        status(post()).await,
    ];
    assert_eq!(seen, [403, 403, 200, 200]);
    http.stop().await;
}

#[tokio::test]
async fn notifications_cancelled_cancels_the_run() {
    let http = Http::start(None).await;
    let client = http.client(None).await;
    let _events = working_call(&client, 7).await;
    assert_eq!(client.cancel(7).await.status(), 202);
    // The child's model stream is dropped: the run was cancelled, not left waiting.
    http.model.wait_dropped(1).await;
    // The session goes on.
    let answer = client
        .ask(
            8,
            "tools/call",
            json!({"name": "subagent",
            "arguments": {"prompt": "what is the password?"}}),
        )
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], "swordfish");
    http.stop().await;
}

#[tokio::test]
async fn ending_the_session_cancels_its_runs_and_only_its() {
    let http = Http::start(None).await;
    let client = http.client(None).await;
    let other = http.client(None).await;
    let _events = working_call(&client, 1).await;
    let mut others = working_call(&other, 1).await;
    assert_eq!(client.delete().await.status(), 202);
    http.model.wait_dropped(1).await;
    // The other session's call still runs: cancelling it drops a second stream.
    assert_eq!(other.cancel(1).await.status(), 202);
    http.model.wait_dropped(2).await;
    drop(others.next());
    http.stop().await;
}

#[tokio::test]
async fn a_call_whose_stream_is_dropped_is_cancelled() {
    let http = Http::start(None).await;
    let client = http.client(None).await;
    let events = working_call(&client, 3).await;
    drop(events);
    http.model.wait_dropped(1).await;
    http.stop().await;
}

#[tokio::test]
async fn a_stop_cancels_every_run_answers_the_calls_and_returns() {
    let http = Http::start(None).await;
    let client = http.client(None).await;
    let mut events = working_call(&client, 4).await;
    let Http {
        model,
        stop,
        serving,
        _dir,
        ..
    } = http;
    drop(stop);
    let answer = events.answer(4).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(answer["result"]["_meta"]["status"], "cancelled", "{answer}");
    model.wait_dropped(1).await;
    tokio::time::timeout(Duration::from_secs(30), serving)
        .await
        .expect("serve_http did not return")
        .unwrap()
        .unwrap();
}
