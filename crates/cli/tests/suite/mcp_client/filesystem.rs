//! The second reference server, the pinned `@modelcontextprotocol/server-filesystem`, as a
//! project configures it (`.mcp.json`, its root the project's docs): a spawn child lists and reads
//! below the root (`docs`, relative to the run's directory, where a server starts) through
//! `mcp__files__*`, and the server's refusal of a path outside it reaches
//! the model as an error result.

use subagent_test_support::FakeServer;

use super::{Home, stderr, told};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawn_child_reads_through_the_file_server_within_its_root() {
    // The scenario names the project's real directory, known once the project exists.
    let project = Home::new("http://127.0.0.1:9", "");
    let docs = project.dir.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("notes.md"), "the notes say hello\n").unwrap();
    let server = FakeServer::from_yaml(&format!(
        r#"
- match: "read the docs"
  steps:
    - tool_calls:
        - name: mcp__files__list_directory
          input: {{path: "{docs}"}}
    - tool_calls:
        - name: mcp__files__read_text_file
          input: {{path: "{docs}/notes.md"}}
    - tool_calls:
        - name: mcp__files__read_text_file
          input: {{path: "/etc/hostname"}}
    - text: "read"
"#,
        docs = docs.display()
    ))
    .await
    .unwrap();
    let preset = std::fs::read_to_string(&project.preset)
        .unwrap()
        .replace("http://127.0.0.1:9", &server.url());
    std::fs::write(&project.preset, preset).unwrap();
    let files = subagent_test_support::bench::installed_cli(
        "@modelcontextprotocol/server-filesystem/dist/index.js",
    );
    std::fs::write(
        project.dir.join(".mcp.json"),
        serde_json::json!({"mcpServers": {"files": {
            "command": "node",
            "args": [files.display().to_string(), "docs"],
        }}})
        .to_string(),
    )
    .unwrap();
    let subagent = || project.subagent().env("SUBAGENT_PRESET", &project.preset);
    let trusted = tokio::task::block_in_place(|| subagent().arg("trust").output());
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    let output = tokio::task::block_in_place(|| {
        subagent()
            .args(["delegate", "--provider", "spawn", "read the docs"])
            .output()
    });
    assert!(output.status.success(), "{}", stderr(&output));
    let told = told(&server, 0);
    assert!(told.contains("[FILE] notes.md"), "{told}");
    assert!(told.contains("the notes say hello"), "{told}");
    assert!(
        told.contains("Access denied - path outside allowed directories"),
        "{told}"
    );
}
