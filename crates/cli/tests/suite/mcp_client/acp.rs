//! `subagent acp`: a session's parent gets the project's configured MCP servers and the ones the
//! editor names in `session/new {mcpServers}` (started for the session), and `initialize` says it
//! takes HTTP servers.

use std::io::{BufRead, BufReader, Write};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::super::support::{Place, Subagent, bin, fake_preset};
use super::everything;

/// The parent calls the configured server's `echo`, then the session's, then answers.
const BOTH: &str = r#"
- match: "use both servers"
  steps:
    - tool_calls:
        - name: mcp__configured__echo
          input: {message: "from the preset"}
    - tool_calls:
        - name: mcp__editor__echo
          input: {message: "from the editor"}
    - text: "both answered"
"#;

/// Reads JSON-RPC lines until the response to `id`.
fn answer(lines: &mut impl Iterator<Item = String>, id: u64) -> Value {
    for line in lines {
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == id {
            return message;
        }
    }
    panic!("no response to {id}");
}

/// `program` as found on `PATH` (ACP names a stdio server's command by an absolute path).
fn on_path(program: &str) -> String {
    std::env::var("PATH")
        .unwrap()
        .split(':')
        .map(|dir| std::path::Path::new(dir).join(program))
        .find(|path| path.is_file())
        .unwrap()
        .display()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_gets_the_configured_servers_and_the_editors() {
    let Place {
        server,
        dir,
        project,
    } = Place::new(BOTH, "subagent-acp-mcp-").await;
    let preset = fake_preset(
        dir.path(),
        &server.url(),
        &format!("mcp_servers: {}\n", json!({"configured": everything()})),
    );
    let editor = json!({
        "name": "editor",
        "command": on_path("node"),
        "args": everything()["args"],
        "env": [],
    });
    let mut child = Subagent::new(bin(), dir.path())
        .fake_key()
        .arg("acp")
        .preset(&preset)
        .stdin(Vec::new())
        .spawn();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (init, prompt) = tokio::task::spawn_blocking(move || {
        let mut lines = BufReader::new(stdout).lines().map(Result::unwrap);
        let mut send = |message: Value| {
            writeln!(stdin, "{message}").unwrap();
            stdin.flush().unwrap();
        };
        send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
        let init = answer(&mut lines, 1);
        send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
            "params": {"cwd": project, "mcpServers": [editor]}}));
        let session = answer(&mut lines, 2)["result"]["sessionId"].clone();
        assert!(session.is_string(), "{session}");
        send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "use both servers"}]}}));
        let prompt = answer(&mut lines, 3);
        drop(stdin);
        (init, prompt)
    })
    .await
    .unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        init["result"]["agentCapabilities"]["mcpCapabilities"]["http"], true,
        "{init}"
    );
    assert_eq!(prompt["result"]["stopReason"], "end_turn", "{prompt}");
    let told = serde_json::to_string(
        &server
            .model_requests()
            .iter()
            .map(|r| &r.body)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert!(told.contains("Echo: from the preset"), "{stderr}");
    assert!(told.contains("Echo: from the editor"), "{stderr}");
}
