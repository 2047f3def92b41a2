//! An agent definition's own MCP servers (issue 29): `mcpServers:` in Claude Code's list shape
//! (names of configured servers and `{name: {command: …}}` definitions) starts the defined
//! servers for each child of that agent type, and only for it; their tools join the child's
//! past its `tools:` list, as Claude Code adds them; a row that cannot take them refuses the
//! request before anything starts.

use serde_json::json;
use subagent_test_support::FakeServer;
use subagent_test_support::procs;

use super::Home;
use super::{everything, stderr, told};

/// `echoer`: `tools: Read` only, and the reference server as its own (an argument the server
/// ignores marks its processes).
fn echoer(project: &Home, marker: &str) {
    let mut server = everything();
    server["args"].as_array_mut().unwrap().push(json!(marker));
    project.write(
        "project/.claude/agents/echoer.md",
        &format!(
            "---\nname: echoer\ndescription: echoes through its own server\ntools: Read\nmcpServers:\n  - github\n  - everything: {server}\n---\nYou echo.\n"
        ),
    );
}

const SCENARIO: &str = r#"
- match: "parent delegates"
  steps:
    - tool_calls:
        - name: subagent
          input: {subagent_type: echoer, description: echo, prompt: "echo via own"}
    - text: "parent done"
- match: "echo via own"
  steps:
    - tool_calls:
        - name: mcp__everything__echo
          input: {message: "the agent's own"}
    - text: "child echoed"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_own_server_starts_for_its_children_only() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = Home::new(&server.url(), "");
    let marker = "agent-own-server-7c1";
    echoer(&project, marker);
    let subagent = || project.subagent().env("SUBAGENT_PRESET", &project.preset);

    // Through the delegation tool of `run`'s parent.
    let output =
        tokio::task::block_in_place(|| subagent().args(["run", "parent delegates"]).output());
    assert!(output.status.success(), "{}", stderr(&output));
    let requests = server.model_requests();
    let parent = requests[0].tool_names();
    assert!(
        !parent.iter().any(|name| name.starts_with("mcp__")),
        "the parent is not offered the agent's server: {parent:?}"
    );
    let child = requests
        .iter()
        .find(|r| {
            serde_json::to_string(&r.messages)
                .unwrap()
                .contains("echo via own")
                && !serde_json::to_string(&r.messages)
                    .unwrap()
                    .contains("parent delegates")
        })
        .expect("the child asked its model");
    let offered = child.tool_names();
    assert!(
        offered.iter().any(|n| n == "mcp__everything__echo"),
        "the child is offered its server's tools past `tools: Read`: {offered:?}"
    );
    assert!(
        !offered.iter().any(|n| n == "write_file"),
        "`tools: Read` still holds for the rest: {offered:?}"
    );
    let told_all = told(&server, 0);
    assert!(told_all.contains("Echo: the agent's own"), "{told_all}");
    assert!(
        procs::live_with(marker).is_empty(),
        "the agent's server outlived the run: {:?}",
        procs::live_lines_with(marker)
    );

    // And through `subagent delegate --agent`.
    let before = server.model_requests().len();
    let output = tokio::task::block_in_place(|| {
        subagent()
            .args([
                "delegate",
                "--agent",
                "echoer",
                "--provider",
                "spawn",
                "echo via own",
            ])
            .output()
    });
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        told(&server, before).contains("Echo: the agent's own"),
        "{}",
        told(&server, before)
    );
    assert!(
        procs::live_with(marker).is_empty(),
        "{:?}",
        procs::live_lines_with(marker)
    );
}

/// A row that cannot start a child's own servers (fork: a copy of its parent, tools and all)
/// refuses the request before anything starts, naming the capability.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_that_cannot_take_them_refuses_before_start() {
    let server = FakeServer::from_yaml("- match: '.*'\n  steps:\n    - text: never\n")
        .await
        .unwrap();
    let project = Home::new(&server.url(), "");
    let preset = std::fs::read_to_string(&project.preset).unwrap().replace(
        "providers: [{name: spawn, kind: spawn}]",
        "providers: [{name: spawn, kind: spawn}, {name: fork, kind: fork}]",
    );
    std::fs::write(&project.preset, preset).unwrap();
    echoer(&project, "agent-own-server-refused");
    let output = tokio::task::block_in_place(|| {
        project
            .subagent()
            .env("SUBAGENT_PRESET", &project.preset)
            .args([
                "delegate",
                "--json",
                "--agent",
                "echoer",
                "--provider",
                "fork",
                "hello",
            ])
            .output()
    });
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("null")).unwrap();
    assert_eq!(last["code"], "UNSUPPORTED_CAPABILITY", "{stdout}");
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains("\"mcp_servers\""),
        "{stdout}"
    );
    assert!(
        server.model_requests().is_empty(),
        "a refused start reached the model"
    );
}
