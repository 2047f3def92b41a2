//! `subagent mcp --listen` as the MCP server of our own agents: the loop closed on ourselves (a
//! spawn child calls the served row over HTTP, which delegates to the pinned codex), and the
//! served rows' spawn children get the server's configured MCP servers.

use serde_json::json;
use subagent_test_support::mcp_http::{Client, Events};

use super::super::mcp::bypass_preset;
use super::super::mcp_http::{Listening, TOKEN};
use super::super::support::{Home, Place};
use super::{SCENARIO, everything, subagent};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawn_child_reaches_codex_through_subagent_mcp_over_http() {
    let place = Place::new(
        r#"
- match: "close the loop"
  steps:
    - tool_calls:
        - name: mcp__loop__codex
          input: {prompt: "codex, say the word"}
    - text: "the loop closed"
- match: "codex, say the word"
  steps:
    - text: "codex says ouroboros"
"#,
        "subagent-mcp-loop-",
    )
    .await;
    let row = super::super::pinned::codex_row(place.dir.path(), &place.server.url(), "", "");
    let served = place.dir.path().join("served.yaml");
    std::fs::write(
        &served,
        format!("version: 1\nproviders:\n{row}tools: [{{name: codex, provider: codex}}]\n"),
    )
    .unwrap();
    let listening = Listening::start_with(&place, &served).await;
    let servers = json!({"loop": {
        "type": "http",
        "url": listening.url,
        "headers": {"Authorization": "Bearer ${LOOP_TOKEN}"},
    }});
    let caller = Home::new(&place.server.url(), &format!("mcp_servers: {servers}\n"));
    let output = tokio::task::block_in_place(|| {
        subagent(&caller)
            .env("LOOP_TOKEN", TOKEN)
            .args([
                "delegate",
                "--provider",
                "spawn",
                "--allowedTools",
                "mcp__loop",
            ])
            .arg("close the loop")
            .output()
    });
    assert!(output.status.success(), "{}", super::stderr(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("the loop closed"),
        "{}",
        super::stderr(&output)
    );
    let told = super::told(&place.server, 0);
    assert!(told.contains("codex says ouroboros"), "{told}");
    // Codex was the one asked (its requests are Responses requests to the same server).
    assert!(
        place
            .server
            .model_requests()
            .iter()
            .any(|r| serde_json::to_string(&r.body)
                .unwrap()
                .contains("codex, say the word")
                && r.body.as_ref().is_some_and(|b| b.get("input").is_some())),
        "no Responses request from codex"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_rows_spawn_children_get_the_configured_servers() {
    let place = Place::new(SCENARIO, "subagent-mcp-served-").await;
    let preset = bypass_preset(place.dir.path(), &place.server.url());
    let text = std::fs::read_to_string(&preset).unwrap();
    std::fs::write(
        &preset,
        format!(
            "{text}mcp_servers: {}\n",
            json!({"everything": everything()})
        ),
    )
    .unwrap();
    let listening = Listening::start_with(&place, &preset).await;
    let mut client = Client::new(&listening.url, Some(TOKEN));
    client.initialize().await;
    let response = client
        .post(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "subagent", "arguments": {"prompt": "use the server"}}}),
        )
        .await;
    let answer = Events::new(response).answer(1).await;
    assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
    let told = super::told(&place.server, 0);
    assert!(told.contains("Echo: from the model"), "{told}");
}
