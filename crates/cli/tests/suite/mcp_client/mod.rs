//! MCP servers reach in-process agents through the binary (issue 29): the preset's
//! `mcp_servers:` and a trusted project's `.mcp.json` give `run`'s parent and a `delegate`d
//! spawn child the reference server's tools as `mcp__<server>__<tool>`, permission rules match
//! them by that name, an untrusted project's servers wait, and `subagent mcp-servers` lists it
//! all. The server is the pinned `@modelcontextprotocol/server-everything` on node.

use subagent_test_support::FakeServer;
use subagent_test_support::cli::Subagent;

use super::support::Home;

/// The model calls the reference server's `echo`, then its `toggle-simulated-logging` (not
/// read-only), then answers.
const SCENARIO: &str = r#"
- match: "use the server"
  steps:
    - tool_calls:
        - name: mcp__everything__echo
          input: {message: "from the model"}
    - tool_calls:
        - name: mcp__everything__toggle-simulated-logging
          input: {}
    - text: "done"
"#;

fn everything() -> serde_json::Value {
    let server = subagent_test_support::bench::installed_cli(
        "@modelcontextprotocol/server-everything/dist/index.js",
    );
    serde_json::json!({"command": "node", "args": [server.display().to_string(), "stdio"]})
}

/// A project whose preset names the reference server (`in_preset`) or none.
fn project(url: &str, in_preset: bool) -> Home {
    let servers = if in_preset {
        format!(
            "mcp_servers: {}\n",
            serde_json::json!({"everything": everything()})
        )
    } else {
        String::new()
    };
    Home::new(url, &servers)
}

/// `subagent` in `project`, its preset named by `SUBAGENT_PRESET`.
fn subagent(project: &Home) -> Subagent {
    project.subagent().env("SUBAGENT_PRESET", &project.preset)
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// What the model read back of each tool call after `before`, as one JSON text.
fn told(server: &FakeServer, before: usize) -> String {
    server.model_requests()[before..]
        .iter()
        .map(|request| serde_json::to_string(&request.messages).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_parent_and_a_spawn_child_call_the_servers_tools_under_the_rules() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = project(&server.url(), true);
    for command in ["run", "delegate"] {
        let before = server.model_requests().len();
        let mut subagent = subagent(&project).arg(command);
        if command == "delegate" {
            subagent = subagent.args(["--provider", "spawn"]);
        }
        let output = subagent.arg("use the server").output();
        assert!(output.status.success(), "{command}: {}", stderr(&output));
        let first = &server.model_requests()[before];
        let names: Vec<String> = first.tool_names();
        assert!(
            names.iter().any(|n| n == "mcp__everything__echo"),
            "{command}: the model is offered the server's tools: {names:?}"
        );
        let told = told(&server, before);
        assert!(told.contains("Echo: from the model"), "{command}: {told}");
        // Not read-only, no rule and nobody to ask: refused, by the name rules use.
        assert!(
            told.contains("mcp__everything__toggle-simulated-logging"),
            "{command}: {told}"
        );
        assert!(told.contains("no one can be asked"), "{command}: {told}");
    }
    // A rule naming the server allows every tool of it.
    let before = server.model_requests().len();
    let output = subagent(&project)
        .args(["run", "--allowedTools", "mcp__everything", "use the server"])
        .output();
    assert!(output.status.success(), "{}", stderr(&output));
    let told = told(&server, before);
    assert!(
        told.contains("Started simulated, random-leveled logging"),
        "{told}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_servers_wait_for_trust_and_mcp_servers_lists_them() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = project(&server.url(), false);
    std::fs::write(
        project.dir.join(".mcp.json"),
        serde_json::json!({"mcpServers": {"everything": everything(), "broken": {"command": "/nonexistent/server"}}})
            .to_string(),
    )
    .unwrap();
    let listed = subagent(&project).args(["mcp-servers", "--json"]).output();
    let value: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let statuses: Vec<(&str, &str)> = value["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [("everything", "untrusted"), ("broken", "untrusted")]
    );
    let output = subagent(&project).args(["run", "use the server"]).output();
    assert!(
        stderr(&output).contains("do not start until you trust the project"),
        "{}",
        stderr(&output)
    );
    let trusted = subagent(&project).arg("trust").output();
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    let listed = subagent(&project).args(["mcp-servers", "--json"]).output();
    assert_eq!(listed.status.code(), Some(1), "a server does not start");
    let value: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let everything = &value["servers"][0];
    assert_eq!(everything["status"], "ok", "{value}");
    assert!(
        everything["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "mcp__everything__echo" && t["read_only"] == true),
        "{value}"
    );
    assert_eq!(value["servers"][1]["status"], "failed");
    assert_eq!(value["servers"][1]["error"]["code"], "MCP_SERVER_FAILED");
    let human = subagent(&project).arg("mcp-servers").output();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("mcp__everything__echo"), "{text}");
    assert!(text.contains("error[MCP_SERVER_FAILED]"), "{text}");
    // Trusted, the run gets the project's server (and says which one failed).
    let before = server.model_requests().len();
    let output = subagent(&project).args(["run", "use the server"]).output();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("MCP server `broken` is not available"),
        "{}",
        stderr(&output)
    );
    assert!(told(&server, before).contains("Echo: from the model"));
}

mod acp;
mod agents;
mod filesystem;
mod loops;
mod parity;

/// A server over streamable HTTP (the reference server on a port of its own, its token in a
/// header from `${VAR}`) gives a spawn child its tools as a stdio one does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawn_child_calls_a_server_over_http() {
    let peer = subagent_test_support::cli_peer::Peer::start(
        std::process::Command::new("node")
            .arg(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../mcp-client/tests/fixtures/everything-http.mjs"),
            )
            .arg(subagent_test_support::bench::installed_cli(
                "@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js",
            )),
        std::process::Stdio::null(),
    );
    let server = FakeServer::from_yaml(
        r#"
- match: "over http"
  steps:
    - tool_calls:
        - name: mcp__web__echo
          input: {message: "across the wire"}
    - text: "done"
"#,
    )
    .await
    .unwrap();
    let servers = serde_json::json!({"web": {
        "type": "http",
        "url": peer.first_line(),
        "headers": {"Authorization": "Bearer ${WEB_MCP_TOKEN}"},
    }});
    let project = Home::new(&server.url(), &format!("mcp_servers: {servers}\n"));
    let output = subagent(&project)
        .env("WEB_MCP_TOKEN", "t0ken")
        .args(["delegate", "--provider", "spawn", "over http"])
        .output();
    assert!(output.status.success(), "{}", stderr(&output));
    let told = told(&server, 0);
    assert!(told.contains("Echo: across the wire"), "{told}");
    let listed = subagent(&project)
        .env("WEB_MCP_TOKEN", "t0ken")
        .args(["mcp-servers", "--json"])
        .output();
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let text = listed.to_string();
    assert!(text.contains("\"transport\":\"http\""), "{text}");
    assert!(
        !text.contains("t0ken"),
        "a header's value is never listed: {text}"
    );
}

/// A `subagent worker` starts the configured servers once: a job's spawn child calls their tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workers_children_get_the_servers() {
    let nats = subagent_nats::testing::NatsServer::start().unwrap();
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let worker_dir = dir.path().join("worker");
    std::fs::create_dir_all(&worker_dir).unwrap();
    let worker_preset = super::support::fake_preset(
        &worker_dir,
        &server.url(),
        &format!(
            "mcp_servers: {}\n",
            serde_json::json!({"everything": everything()})
        ),
    );
    let (worker, mut worker_stderr) =
        super::nats::start_worker(&worker_dir, &worker_preset, &nats.url());
    let caller = dir.path().join("caller");
    std::fs::create_dir_all(&caller).unwrap();
    let row = format!(
        "  - name: workers\n    kind: nats\n    config:\n      url: {}\n      row: spawn\n",
        nats.url()
    );
    let caller_preset = super::support::fake_preset(&caller, &server.url(), &row);
    let output = tokio::task::block_in_place(|| {
        super::support::subagent(&caller)
            .env("FAKE_KEY", "test-key")
            .args(["delegate", "--provider", "workers", "--preset"])
            .arg(&caller_preset)
            .arg("use the server")
            .output()
            .unwrap()
    });
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let told = told(&server, 0);
    drop(worker);
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut worker_stderr, &mut rest);
    assert!(told.contains("Echo: from the model"), "{rest}\n{told}");
}
