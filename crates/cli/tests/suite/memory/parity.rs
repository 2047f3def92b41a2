//! Parity with the pinned `claude` (issue 29): one agent type with `memory: project` and a
//! `MEMORY.md` over the bound, run as a subagent of the real `claude` and as a spawn child
//! against the fake model server, and what reached each child's model compared — the index as
//! loaded (cut, with its warning), the directory it is told, the scope's guideline, and the
//! tools that reach memory added to its `tools` list.

#[cfg(feature = "e2e")]
use pretty_assertions::assert_eq;
#[cfg(feature = "e2e")]
use subagent_test_support::{FakeServer, RecordedRequest};

#[cfg(feature = "e2e")]
use super::super::skills::{tool, write};
#[cfg(feature = "e2e")]
use super::{index_section, system};

#[cfg(feature = "e2e")]
const SCENARIOS: &str = r#"
- match: "parity memory claude"
  steps:
    - tool_calls:
        - name: Agent
          input: {subagent_type: keeper, description: keep, prompt: "keeper child claude"}
    - text: "parent done"
- match: "keeper child (claude|spawn)"
  steps:
    - text: "kept"
- match: "keeper child direct"
  steps:
    - tool_calls:
        - name: Write
          input: {file_path: "DIR/direct.md", content: "DIRECT-MEMORY\n"}
    - text: "kept directly"
"#;

#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_reaches_the_model_as_claude_gives_it() {
    let home = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(home.path()).unwrap().join("project");
    let memory_dir = project.join(".claude/agent-memory/keeper");
    let server =
        FakeServer::from_yaml(&SCENARIOS.replace("DIR", &memory_dir.display().to_string()))
            .await
            .unwrap();
    write(
        &project,
        ".claude/agents/keeper.md",
        "---\nname: keeper\ndescription: Keeps notes.\ntools: Bash\nmemory: project\n---\nYou keep notes.\n",
    );
    let index: String = (1..=250)
        .map(|i| format!("- [Note {i}](note{i}.md) — hook {i}\n"))
        .collect();
    write(&project, ".claude/agent-memory/keeper/MEMORY.md", &index);
    let project = std::fs::canonicalize(project).unwrap();
    let preset = super::super::pinned::parity_preset(home.path(), &server.url(), "", "");
    let delegate =
        |args: &[&str]| super::super::support::delegate_ok(home.path(), &project, &preset, args);
    tokio::task::block_in_place(|| {
        delegate(&["--provider", "claude-code", "parity memory claude"]);
        delegate(&[
            "--provider",
            "spawn",
            "--agent",
            "keeper",
            "keeper child spawn",
        ]);
    });
    let requests = server.model_requests();
    let child = |marker: &str| {
        requests
            .iter()
            .find(|r| {
                serde_json::to_string(&r.body.as_ref().unwrap()["messages"][0])
                    .unwrap()
                    .contains(marker)
            })
            .unwrap_or_else(|| panic!("{marker}: {requests:#?}"))
            .clone()
    };
    let (claude, spawn) = (child("keeper child claude"), child("keeper child spawn"));
    let (claude_system, spawn_system) = (system(&claude), system(&spawn));

    // The index as loaded: ours ends the system prompt; claude's goes on after a blank line.
    let ours = index_section(&spawn_system);
    assert!(
        claude_system.contains(&format!("{ours}\n\n")),
        "claude's:\n{}\n\nours:\n{ours}",
        index_section(&claude_system)
    );
    assert!(ours.ends_with("— hook 200\n\n> WARNING: MEMORY.md is 250 lines (limit: 200). Only part of it was loaded. Keep index entries to one line under ~200 chars; move detail into topic files."), "{ours}");

    // The directory, the heading and the scope's guideline.
    let dir = format!(
        "`{}/`",
        project.join(".claude/agent-memory/keeper").display()
    );
    for text in [&claude_system, &spawn_system] {
        assert!(
            text.contains("You keep notes.\n\n# Persistent Agent Memory\n\n"),
            "{text}"
        );
        assert!(text.contains(&dir), "{text}");
        assert!(text.contains("\n\n- Since this memory is project-scope and shared with your team via version control, tailor your memories to this project\n\n## MEMORY.md\n\n"), "{text}");
    }

    // `tools: Bash` and the tools that reach memory, in each product's names.
    let names = |request: &RecordedRequest, names: [&str; 4]| {
        names.map(|name| tool(request, name).is_some())
    };
    assert_eq!(names(&claude, ["Bash", "Write", "Edit", "Read"]), [true; 4]);
    assert_eq!(
        names(&spawn, ["bash", "write_file", "edit_file", "read_file"]),
        [true; 4]
    );
    assert_eq!(
        claude.body.as_ref().unwrap()["tools"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
}
