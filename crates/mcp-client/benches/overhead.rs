//! What an MCP tool costs over a built-in one, through a parent: an in-process agent on the fake
//! model server (real HTTP) makes one tool call, then answers. `builtin` reads a file with
//! `read_file`; `mcp` calls the reference server's `echo`
//! (`@modelcontextprotocol/server-everything` on node, started once before the pairs, as a run
//! starts it once): over stdio, or with `MCP_TRANSPORT=http` over streamable HTTP on 127.0.0.1.
//! Paired and interleaved (`subagent_test_support::paired`); `PAIRS` sets how many (default 200).
//!
//! `cargo bench -p subagent-mcp-client --features e2e --bench overhead` (the reference server is
//! installed by `cargo xtask install-clis`), and again with `MCP_TRANSPORT=http`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use subagent_core::{CancellationToken, PermissionMode};
use subagent_mcp_client::{McpServers, McpTool, Options, Source, parse_servers};
use subagent_model::ModelKind;
use subagent_runtime::tools::BashConfig;
use subagent_runtime::{Agent, AgentConfig, PermissionPolicy, Roots, ToolSet};
use subagent_test_support::FakeServer;

const SCENARIOS: &str = r#"
- match: "read the notes"
  steps:
    - tool_calls:
        - {name: read_file, input: {path: "notes.txt"}}
    - text: "read"
- match: "echo the notes"
  steps:
    - tool_calls:
        - {name: mcp__everything__echo, input: {message: "the notes"}}
    - text: "echoed"
"#;

fn main() {
    let rt = subagent_test_support::bench::runtime(2);
    let server = rt.block_on(FakeServer::from_yaml(SCENARIOS)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "the notes\n").unwrap();
    let http = std::env::var("MCP_TRANSPORT").is_ok_and(|t| t == "http");
    // Over HTTP the server runs as a peer of its own (killed when the bench ends).
    let peer = http.then(|| {
        subagent_test_support::cli_peer::Peer::start(
            std::process::Command::new("node")
                .arg(
                    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("tests/fixtures/everything-http.mjs"),
                )
                .arg(subagent_test_support::bench::installed_cli(
                    "@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js",
                )),
            std::process::Stdio::null(),
        )
    });
    let definition = match &peer {
        Some(peer) => json!({"type": "http", "url": peer.first_line()}),
        None => {
            let everything = subagent_test_support::bench::installed_cli(
                "@modelcontextprotocol/server-everything/dist/index.js",
            );
            json!({"command": "node", "args": [everything.display().to_string(), "stdio"]})
        }
    };
    let path = dir.path().join("preset.yaml");
    let configs = parse_servers(
        &json!({"everything": definition}),
        &Source::Preset { path: path.clone() },
        &path,
        &|_| None,
    )
    .unwrap();
    let servers = Arc::new(McpServers::new(
        configs,
        Options::new(dir.path(), subagent_runtime::Secrets::new()),
    ));
    let (tools, failed) = rt.block_on(servers.start_all());
    assert!(failed.is_empty(), "{failed:?}");
    let tools =
        ToolSet::new(ToolSet::builtin(BashConfig::default())).with(McpTool::all(&servers, tools));
    let model = server.model(ModelKind::Anthropic);
    let call = |prompt: &'static str, answer: &'static str| {
        let began = Instant::now();
        let mut config = AgentConfig::new(Arc::clone(&model), Roots::new(dir.path()).unwrap());
        config.tools = tools.clone();
        config.permissions = PermissionPolicy::new(PermissionMode::Bypass);
        let outcome = rt.block_on(async {
            Agent::new(config)
                .unwrap()
                .start_prompt(prompt, CancellationToken::new())
                .outcome()
                .await
        });
        assert_eq!(outcome.text, answer);
        began.elapsed()
    };
    let pairs = subagent_test_support::bench::pairs(200);
    let paired = subagent_test_support::paired::measure(
        pairs,
        || call("read the notes", "read"),
        || call("echo the notes", "echoed"),
    );
    paired.print(
        &format!("one tool call through a parent, {pairs} pairs"),
        "builtin read_file",
        if http {
            "mcp echo (http)"
        } else {
            "mcp echo (stdio)"
        },
    );
}
