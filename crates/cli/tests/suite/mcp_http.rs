//! `subagent mcp --listen` through the binary: MCP streamable HTTP on 127.0.0.1 with a bearer
//! token (a plain client: every status and event; with the `e2e` feature the official
//! TypeScript SDK's `StreamableHTTPClientTransport`), the child answering through the fake model
//! server, and the refusals at start.

use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_test_support::mcp_http::{Client, Events};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::task::JoinHandle;

use super::mcp::bypass_preset;
use super::support::{Place, Subagent, bin, processes_with, wait_for};

/// The token the tests' servers are given (through `MCP_TEST_TOKEN`).
pub(super) const TOKEN: &str = "mcp-test-token-31337";

const SCENARIOS: &str = r#"
- match: "what is the password"
  steps:
    - text: "swordfish"
- match: "run a long job"
  steps:
    - tool_calls:
        - {id: call_long, name: bash, input: {command: "echo started > ready.fifo; exec sleep 314162"}}
    - text: "never"
"#;

/// A running `subagent mcp --listen 127.0.0.1:0 --token-env MCP_TEST_TOKEN`, its URL read from
/// its stderr.
pub(super) struct Listening {
    child: tokio::process::Child,
    pub(super) url: String,
    /// The rest of its stderr, read to its end.
    stderr: JoinHandle<String>,
}

impl Listening {
    async fn start(place: &Place) -> Self {
        Self::start_with(place, &bypass_preset(place.dir.path(), &place.server.url())).await
    }

    /// The server on `preset`, in the place's project.
    pub(super) async fn start_with(place: &Place, preset: &std::path::Path) -> Self {
        let subagent = Subagent::new(bin(), place.dir.path())
            .fake_key()
            .env("MCP_TEST_TOKEN", TOKEN)
            .args([
                "mcp",
                "--listen",
                "127.0.0.1:0",
                "--token-env",
                "MCP_TEST_TOKEN",
            ])
            .preset(preset)
            .arg("--cwd")
            .arg(&place.project);
        let mut child = tokio::process::Command::from(subagent.command())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut before = String::new();
        let url = loop {
            let Some(line) = lines.next_line().await.unwrap() else {
                panic!("subagent mcp ended before it listened:\n{before}");
            };
            if let Some(rest) = line.strip_prefix("subagent mcp: MCP streamable HTTP on ") {
                break rest.split(',').next().unwrap().to_owned();
            }
            before.push_str(&line);
            before.push('\n');
        };
        let stderr = tokio::spawn(async move {
            let mut rest = String::new();
            while let Ok(Some(line)) = lines.next_line().await {
                rest.push_str(&line);
                rest.push('\n');
            }
            rest
        });
        Self { child, url, stderr }
    }

    /// SIGTERM, then its exit code and the rest of its stderr.
    async fn terminate(mut self) -> (Option<i32>, String) {
        let pid = self.child.id().unwrap().to_string();
        assert!(
            std::process::Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let status = self.child.wait().await.unwrap();
        (status.code(), self.stderr.await.unwrap())
    }
}

/// The whole tour through the binary: the token's refusals, the tools, a call answered after
/// its progress, and a call cancelled while its child's command runs (the command stops); then
/// SIGTERM ends the server (0) with nothing left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagent_mcp_listen_serves_calls_over_http_behind_its_token() {
    let place = Place::new(SCENARIOS, "subagent-mcp-http-").await;
    let fifo = place.project.join("ready.fifo");
    subagent_test_support::procs::mkfifo(&fifo);
    let server = Listening::start(&place).await;
    assert!(
        server.url.starts_with("http://127.0.0.1:") && server.url.ends_with("/mcp"),
        "{}",
        server.url
    );
    // No token, a wrong one: 401, and nothing starts.
    for token in [None, Some("wrong")] {
        let response = Client::new(&server.url, token)
            .post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}))
            .await;
        assert_eq!(response.status(), 401, "{token:?}");
    }
    let mut client = Client::new(&server.url, Some(TOKEN));
    let info = client.initialize().await;
    assert_eq!(info["serverInfo"]["name"], "subagents");
    let tools = client.ask(1, "tools/list", json!({})).await;
    assert_eq!(tools["result"]["tools"][0]["name"], "subagent");
    // A call with a progress token: progress, then the child's answer.
    let response = client
        .post(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "subagent", "arguments": {"prompt": "what is the password?"},
            "_meta": {"progressToken": "p"}}}),
        )
        .await;
    let mut events = Events::new(response);
    let mut seen: Vec<Value> = Vec::new();
    while let Some(message) = events.next().await {
        seen.push(message);
    }
    let answer = seen.pop().unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"], "swordfish",
        "{answer}"
    );
    assert_eq!(
        seen[0]["params"]["message"],
        "started on spawn: what is the password?"
    );
    assert!(
        seen.iter()
            .all(|message| message["method"] == "notifications/progress")
    );
    // A call cancelled once its child's command runs: the command stops.
    let long = client
        .post(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "subagent", "arguments": {"prompt": "run a long job"}}}),
        )
        .await;
    let started = subagent_test_support::procs::text_from(fifo).await;
    assert_eq!(started, "started\n");
    assert!(!processes_with("sleep 314162").is_empty());
    assert_eq!(client.cancel(3).await.status(), 202);
    wait_for("the cancelled command to be gone", || {
        processes_with("sleep 314162").is_empty()
    });
    drop(long);
    let (code, stderr) = server.terminate().await;
    assert_eq!(code, Some(0), "{stderr}");
    // Nothing reached the model but the two calls' children.
    let prompts = place.server.model_requests().len();
    assert_eq!(prompts, 2, "{stderr}");
}

/// SIGTERM while a call's child runs a command: the call is answered with its cancelled
/// outcome on its stream, the command stops, and the server exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_over_http_answers_the_calls_cancelled_and_stops_their_children() {
    let place = Place::new(
        &SCENARIOS.replace("314162", "314164"),
        "subagent-mcp-http-term-",
    )
    .await;
    let fifo = place.project.join("ready.fifo");
    subagent_test_support::procs::mkfifo(&fifo);
    let server = Listening::start(&place).await;
    let mut client = Client::new(&server.url, Some(TOKEN));
    client.initialize().await;
    let long = client
        .post(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "subagent", "arguments": {"prompt": "run a long job"}}}),
        )
        .await;
    let started = subagent_test_support::procs::text_from(fifo).await;
    assert_eq!(started, "started\n");
    let answered = tokio::spawn(async move { Events::new(long).answer(1).await });
    let (code, stderr) = server.terminate().await;
    assert_eq!(code, Some(0), "{stderr}");
    let answer = answered.await.unwrap();
    assert_eq!(
        (
            &answer["result"]["isError"],
            &answer["result"]["_meta"]["status"]
        ),
        (&json!(true), &json!("cancelled")),
        "{answer}"
    );
    wait_for("the command to be gone", || {
        processes_with("sleep 314164").is_empty()
    });
}

/// What `subagent mcp --listen` refuses before it serves, each with its stable code.
#[test]
fn subagent_mcp_listen_refuses_a_bad_address_a_missing_token_and_a_port_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let in_use = format!("127.0.0.1:{port}");
    let in_use_message = format!(
        "error[INVALID_ARGUMENTS]: --listen {in_use}: Address already in use (os error 98)"
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--listen", "0.0.0.0:0"],
            "error[INVALID_ARGUMENTS]: --listen 0.0.0.0:0: serving beyond this machine needs a token (--token-env VAR or --token-file FILE)",
        ),
        (
            vec!["--listen", "localhost"],
            "error[INVALID_ARGUMENTS]: --listen localhost: not an address (IP:PORT, e.g. 127.0.0.1:8080)",
        ),
        (
            vec![
                "--listen",
                "127.0.0.1:0",
                "--token-env",
                "NO_SUCH_TOKEN_VAR",
            ],
            "error[INVALID_ARGUMENTS]: --token-env NO_SUCH_TOKEN_VAR: the variable is not set (or not UTF-8)",
        ),
        (vec!["--listen", &in_use], &in_use_message),
    ];
    let mut seen = Vec::new();
    let mut expected = Vec::new();
    for (args, message) in &cases {
        let output = Subagent::new(bin(), dir.path())
            .args(["mcp", "--offline"])
            .args(args)
            .output();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().last().unwrap_or_default().to_owned();
        seen.push((output.status.code(), last));
        expected.push((Some(2), (*message).to_owned()));
    }
    assert_eq!(seen, expected);
    // A token without --listen is a usage error.
    let output = Subagent::new(bin(), dir.path())
        .args(["mcp", "--offline", "--token-env", "X"])
        .output();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--listen <ADDR>"), "{stderr}");
    drop(taken);
}

/// The official TypeScript SDK's client (`StreamableHTTPClientTransport` + `Client`, the
/// pinned `@modelcontextprotocol/sdk`) drives `subagent mcp --listen` with the bearer token:
/// it lists the tools, calls one with progress, and cancels a call whose child's command runs
/// (the command stops).
#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_typescript_client_drives_subagent_mcp_over_http() {
    let (sdk, place) = super::support::sdk_place(
        "@modelcontextprotocol/sdk/package.json",
        &SCENARIOS.replace("314162", "314163"),
        "subagent-mcp-http-sdk-",
    )
    .await;
    let server = Listening::start(&place).await;
    let output = tokio::process::Command::new("node")
        .arg(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests")
                .join("mcp/http_client.mjs"),
        )
        .arg(sdk.parent().unwrap())
        .arg(&server.url)
        .arg(&place.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", place.dir.path())
        .env("MCP_TEST_TOKEN", TOKEN)
        .current_dir(place.dir.path())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        seen,
        json!({
            "server": "subagents",
            "tools": ["subagent"],
            "unauthorized": true,
            "answer": "swordfish",
            "isError": false,
            "progressStarted": "started on spawn: ask",
            "cancelled": "aborted",
        }),
        "{stderr}"
    );
    wait_for("the cancelled command to be gone", || {
        processes_with("sleep 314163").is_empty()
    });
    let (code, server_stderr) = server.terminate().await;
    assert_eq!(code, Some(0), "{server_stderr}");
}
