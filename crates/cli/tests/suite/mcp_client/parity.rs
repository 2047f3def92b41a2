//! Parity with the pinned `claude` (issue 29): the preset's MCP server handed to a claude child
//! (`--mcp-config`) and started for a spawn child, run against the fake model server, and what
//! reached each model compared — the tool's name, description and input schema, and what a call
//! returned.

use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_test_support::{FakeServer, RecordedRequest};

use super::everything;

/// Both models call the reference server's `echo`, then answer.
const BOTH: &str = r#"
- match: "mcp parity (claude|spawn)"
  steps:
    - tool_calls:
        - name: mcp__everything__echo
          input: {message: "said twice"}
    - text: "echoed"
"#;

/// What one child's model was shown of the server.
#[derive(Debug, PartialEq)]
struct Shown {
    /// `mcp__everything__echo` as offered: its description and input schema (without a
    /// `$schema` line).
    echo: Value,
    /// The call's result, as text.
    result: String,
}

fn shown(requests: &[RecordedRequest], marker: &str) -> Shown {
    let mine: Vec<&RecordedRequest> = requests
        .iter()
        .filter(|r| serde_json::to_string(&r.body).unwrap().contains(marker))
        .collect();
    let first = mine
        .first()
        .unwrap_or_else(|| panic!("no request for {marker}"));
    let tools = first.body.as_ref().unwrap()["tools"].as_array().unwrap();
    let mut echo = tools
        .iter()
        .find(|tool| tool["name"] == "mcp__everything__echo")
        .unwrap_or_else(|| {
            let names: Vec<&Value> = tools.iter().map(|t| &t["name"]).collect();
            panic!("{marker}: no mcp__everything__echo among {names:?}")
        })
        .clone();
    let map = echo.as_object_mut().unwrap();
    map.remove("cache_control");
    if let Some(schema) = map.get_mut("input_schema").and_then(Value::as_object_mut) {
        schema.remove("$schema");
    }
    let last = mine.last().unwrap().body.as_ref().unwrap();
    let messages = last["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result")
        .unwrap_or_else(|| panic!("{marker}: no tool result"));
    let result = match &result["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    };
    Shown { echo, result }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_presets_server_reaches_claude_and_spawn_children_alike() {
    let server = FakeServer::from_yaml(BOTH).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let project = std::fs::canonicalize(project).unwrap();
    let preset = super::super::pinned::parity_preset(
        home.path(),
        &server.url(),
        "",
        &format!(
            "mcp_servers: {}\n",
            serde_json::json!({"everything": everything()})
        ),
    );
    // The run's temp files in a dir of this test's own: other tests write theirs meanwhile.
    let tmp = home.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let delegate = |args: &[&str]| {
        super::super::support::delegate_ok_with(
            home.path(),
            &project,
            &preset,
            args,
            &[("TMPDIR", &tmp)],
        )
    };
    let (claude_out, spawn_out) = tokio::task::block_in_place(|| {
        (
            delegate(&["--provider", "claude-code", "mcp parity claude"]),
            delegate(&["--provider", "spawn", "mcp parity spawn"]),
        )
    });
    assert!(claude_out.contains("echoed"), "{claude_out}");
    assert!(spawn_out.contains("echoed"), "{spawn_out}");
    let requests = server.model_requests();
    let claude = shown(&requests, "mcp parity claude");
    let spawn = shown(&requests, "mcp parity spawn");
    assert_eq!(spawn, claude);
    assert_eq!(claude.result, "Echo: said twice");
    // The file claude read its servers from is gone with the run.
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("subagent-claude-mcp-")
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The same server defined in an agent definition (`mcpServers: [{everything: …}]`) instead of
/// the preset: it reaches a claude child (in its `--mcp-config`) and a spawn child (started for
/// it) alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_own_server_reaches_claude_and_spawn_children_alike() {
    let server = FakeServer::from_yaml(BOTH).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir_all(project.join(".claude/agents")).unwrap();
    let project = std::fs::canonicalize(project).unwrap();
    std::fs::write(
        project.join(".claude/agents/echoer.md"),
        format!(
            "---\nname: echoer\ndescription: echoes\nmcpServers:\n  - everything: {}\n---\nYou echo.\n",
            everything()
        ),
    )
    .unwrap();
    let preset = super::super::pinned::parity_preset(home.path(), &server.url(), "", "");
    let delegate = |provider: &str, prompt: &str| {
        super::super::support::delegate_ok(
            home.path(),
            &project,
            &preset,
            &["--agent", "echoer", "--provider", provider, prompt],
        )
    };
    let (claude_out, spawn_out) = tokio::task::block_in_place(|| {
        (
            delegate("claude-code", "mcp parity claude"),
            delegate("spawn", "mcp parity spawn"),
        )
    });
    assert!(claude_out.contains("echoed"), "{claude_out}");
    assert!(spawn_out.contains("echoed"), "{spawn_out}");
    let requests = server.model_requests();
    let claude = shown(&requests, "mcp parity claude");
    assert_eq!(shown(&requests, "mcp parity spawn"), claude);
    assert_eq!(claude.result, "Echo: said twice");
}

/// A codex child is handed every server (codex reads none of Claude Code's files). Codex 0.171
/// offers MCP tools only behind its `tool_search` (a Responses tool type of its own), so the
/// model asks codex's `list_mcp_resources` for the server's resources: they come from the
/// reference server we handed over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_child_is_handed_the_servers() {
    for in_agent in [false, true] {
        lists_the_handed_servers_resources(
            |dir, url| super::super::pinned::codex_row(dir, url, "", ""),
            in_agent,
        )
        .await;
    }
}

/// An ACP agent (the pinned codex-acp) gets them in `session/new {mcpServers}`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_child_is_handed_the_servers_in_its_session() {
    for in_agent in [false, true] {
        lists_the_handed_servers_resources(
            |dir, url| super::super::pinned::codex_acp_row(dir, url, "codex"),
            in_agent,
        )
        .await;
    }
}

/// Delegates to the row `row` makes (named `codex`) with the reference server in the preset, or
/// (`in_agent`) defined by the agent type the delegation names: the model lists the server's
/// resources through codex's `list_mcp_resources`.
async fn lists_the_handed_servers_resources(
    row: impl Fn(&std::path::Path, &str) -> String,
    in_agent: bool,
) {
    let server = FakeServer::from_yaml(
        r#"
- match: "mcp codex"
  steps:
    - tool_calls:
        - name: list_mcp_resources
          input: {server: everything}
    - text: "codex listed"
"#,
    )
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let row = row(home.path(), &server.url());
    let preset = home.path().join("preset.yaml");
    let mut everything = everything();
    everything["env"] = serde_json::json!({"MCP_PARITY_TOKEN": "t0ken-value"});
    let servers = serde_json::json!({"everything": everything});
    let mut agent: &[&str] = &[];
    if in_agent {
        std::fs::create_dir_all(project.join(".claude/agents")).unwrap();
        std::fs::write(
            project.join(".claude/agents/lister.md"),
            format!("---\nname: lister\ndescription: lists\nmcpServers: [{servers}]\n---\n"),
        )
        .unwrap();
        agent = &["--agent", "lister"];
    }
    std::fs::write(
        &preset,
        format!(
            "version: 1\nmodel: {{kind: anthropic, name: m, base_url: \"{url}\", api_key_env: FAKE_KEY}}\nproviders:\n{row}tools: [{{name: subagent, provider: codex}}]\n{servers}\n",
            url = server.url(),
            servers = if in_agent { String::new() } else { format!("mcp_servers: {servers}") },
        ),
    )
    .unwrap();
    let output = tokio::task::block_in_place(|| {
        subagent_test_support::cli::Subagent::new(
            assert_cmd::cargo::cargo_bin("subagent"),
            home.path(),
        )
        .cwd(&project)
        .fake_key()
        .args(["delegate", "--preset"])
        .arg(&preset)
        .args(agent)
        .args(["--provider", "codex", "mcp codex"])
        .output()
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("codex listed"), "{stdout}");
    let requests = server.model_requests();
    let all = serde_json::to_string(&requests.iter().map(|r| &r.body).collect::<Vec<_>>()).unwrap();
    assert!(
        all.contains("demo://resource/static/document/"),
        "the server's resources never reached the model: {all}"
    );
}
