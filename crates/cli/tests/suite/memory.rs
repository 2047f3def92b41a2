//! Agent memory through the binary (issue 29): an agent type with `memory:` gets its memory's
//! instructions and `MEMORY.md` index in its first request, writes its memory with its file
//! tools (without being asked, wherever the directory is), and the next run sees what it wrote;
//! the index is bounded as Claude Code bounds it; `user` memory lives under HOME; two children
//! writing one memory at once both land.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_test_support::{FakeServer, RecordedRequest};

use super::skills::{tool, write};
use super::support::{fake_preset, run_in, stderr, stdout, subagent};

mod parity;

/// The project's agent types: `keeper` keeps project memory (its `tools` lists only bash),
/// `mine` keeps the user's.
const KEEPER: &str = "---\nname: keeper\ndescription: Keeps notes.\ntools: bash\nmemory: project\n---\nYou keep notes.\n";
const MINE: &str = "---\nname: mine\ndescription: Keeps personal notes.\nmemory: user\n---\nYou keep personal notes.\n";

/// A home (the runs' HOME) holding a project with the agent types, and a preset on the server.
struct Kept {
    server: FakeServer,
    home: tempfile::TempDir,
    project: PathBuf,
    preset: PathBuf,
}

impl Kept {
    /// The scenarios are made from the memory directories' absolute paths.
    async fn new(scenarios: impl Fn(&Path, &Path) -> String) -> Self {
        let home = tempfile::tempdir().unwrap();
        let home_path = std::fs::canonicalize(home.path()).unwrap();
        let project = home_path.join("project");
        write(&project, ".claude/agents/keeper.md", KEEPER);
        write(&project, ".claude/agents/mine.md", MINE);
        let server = FakeServer::from_yaml(&scenarios(
            &project.join(".claude/agent-memory/keeper"),
            &home_path.join(".claude/agent-memory/mine"),
        ))
        .await
        .unwrap();
        let preset = fake_preset(home.path(), &server.url(), "");
        Self {
            server,
            home,
            project,
            preset,
        }
    }

    fn keeper_dir(&self) -> PathBuf {
        self.project.join(".claude/agent-memory/keeper")
    }

    /// `subagent ARGS --preset P PROMPT` in the project, which must succeed; its stdout.
    async fn ok(&self, args: &[&str], prompt: &str) -> String {
        let output = run_in(self.home.path(), &self.project, &self.preset, args, prompt).await;
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stdout(&output)
    }

    /// The first request whose first message holds `prompt`.
    fn first(&self, prompt: &str) -> RecordedRequest {
        self.server
            .model_requests()
            .into_iter()
            .find(|r| {
                serde_json::to_string(&r.body.as_ref().unwrap()["messages"][0])
                    .unwrap()
                    .contains(prompt)
            })
            .unwrap_or_else(|| panic!("no request for {prompt:?}"))
    }
}

/// A request's system prompt, as one text.
pub(super) fn system(request: &RecordedRequest) -> String {
    match &request.body.as_ref().unwrap()["system"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The memory section of a system prompt, from its heading on.
pub(super) fn index_section(system: &str) -> String {
    let at = system.find("## MEMORY.md").expect("an index section");
    system[at..].to_owned()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawn_child_sees_its_index_writes_its_memory_and_the_next_run_sees_it() {
    let kept = Kept::new(|keeper, _| {
        format!(
            r#"
- match: "remember alpha"
  steps:
    - tool_calls:
        - name: write_file
          input: {{path: "{dir}/alpha.md", content: "---\nname: alpha\ndescription: the alpha fact\ntype: project\n---\nAlpha is first.\n"}}
    - tool_calls:
        - name: edit_file
          input: {{path: "{dir}/MEMORY.md", old_string: "OLD-INDEX-MARKER", new_string: "OLD-INDEX-MARKER\n- [Alpha](alpha.md) — ALPHA-INDEX-MARKER"}}
    - text: "remembered"
- match: "recall alpha"
  steps:
    - text: "recalled"
"#,
            dir = keeper.display()
        )
    })
    .await;
    write(
        &kept.project,
        ".claude/agent-memory/keeper/MEMORY.md",
        "- [Old](old.md) — OLD-INDEX-MARKER\n",
    );
    kept.ok(
        &["delegate", "--provider", "spawn", "--agent", "keeper"],
        "remember alpha",
    )
    .await;

    // The first request: the definition, then the memory's instructions and its index, as
    // the file was; the tools that reach memory added to the `tools` list.
    let first = kept.first("remember alpha");
    let text = system(&first);
    let dir = kept.keeper_dir();
    assert!(
        text.contains(&format!(
            "You keep notes.\n\n# Persistent Agent Memory\n\nYou have a persistent, file-based memory at `{}/`.",
            dir.display()
        )),
        "{text}"
    );
    assert_eq!(
        index_section(&text),
        "## MEMORY.md\n\n- [Old](old.md) — OLD-INDEX-MARKER"
    );
    assert!(
        text.contains("- Since this memory is project-scope"),
        "{text}"
    );
    for name in ["bash", "read_file", "write_file", "edit_file"] {
        assert!(tool(&first, name).is_some(), "{name}");
    }
    assert!(tool(&first, "glob").is_none());

    // It wrote without being asked (nobody could be), whole, private to the user.
    assert_eq!(
        std::fs::read_to_string(dir.join("MEMORY.md")).unwrap(),
        "- [Old](old.md) — OLD-INDEX-MARKER\n- [Alpha](alpha.md) — ALPHA-INDEX-MARKER\n"
    );
    assert!(
        std::fs::read_to_string(dir.join("alpha.md"))
            .unwrap()
            .ends_with("Alpha is first.\n")
    );
    assert_eq!(mode(&dir.join("alpha.md")), 0o600);

    // The next run sees the updated index.
    kept.ok(
        &["delegate", "--provider", "spawn", "--agent", "keeper"],
        "recall alpha",
    )
    .await;
    assert_eq!(
        index_section(&system(&kept.first("recall alpha"))),
        "## MEMORY.md\n\n- [Old](old.md) — OLD-INDEX-MARKER\n- [Alpha](alpha.md) — ALPHA-INDEX-MARKER"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_index_is_cut_and_user_memory_lives_under_home() {
    let kept = Kept::new(|_, mine| {
        format!(
            r#"
- match: "long index"
  steps:
    - text: "read"
- match: "note for me"
  steps:
    - tool_calls:
        - name: write_file
          input: {{path: "{dir}/MEMORY.md", content: "- [Me](me.md) — USER-MEMORY-MARKER\n"}}
    - text: "noted"
"#,
            dir = mine.display()
        )
    })
    .await;
    let long: String = (1..=250)
        .map(|i| format!("- [L{i}](l{i}.md) — line {i}\n"))
        .collect();
    write(
        &kept.project,
        ".claude/agent-memory/keeper/MEMORY.md",
        &long,
    );
    kept.ok(
        &["delegate", "--provider", "spawn", "--agent", "keeper"],
        "long index",
    )
    .await;
    let section = index_section(&system(&kept.first("long index")));
    assert!(section.contains("— line 200\n\n> WARNING: MEMORY.md is 250 lines (limit: 200). Only part of it was loaded."), "{section}");
    assert!(!section.contains("line 201"), "{section}");

    // `user` memory: under HOME, outside the project (the working directory), made 0700.
    kept.ok(
        &["delegate", "--provider", "spawn", "--agent", "mine"],
        "note for me",
    )
    .await;
    let home = std::fs::canonicalize(kept.home.path()).unwrap();
    let dir = home.join(".claude/agent-memory/mine");
    let first = kept.first("note for me");
    assert!(
        system(&first).contains(&format!("memory at `{}/`", dir.display())),
        "{}",
        system(&first)
    );
    assert!(system(&first).contains("- Since this memory is user-scope"));
    assert_eq!(
        std::fs::read_to_string(dir.join("MEMORY.md")).unwrap(),
        "- [Me](me.md) — USER-MEMORY-MARKER\n"
    );
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("MEMORY.md")), 0o600);
    assert!(!kept.project.join(".claude/agent-memory/mine").exists());

    // `subagent agents` says where each agent's memory lives.
    let mut command = subagent(kept.home.path());
    command
        .current_dir(&kept.project)
        .args(["agents", "--preset"])
        .arg(&kept.preset);
    let listed = stdout(&command.output().unwrap());
    for line in [
        format!("memory (user) in {}", dir.display()),
        format!("memory (project) in {}", kept.keeper_dir().display()),
    ] {
        assert!(listed.contains(&line), "{line}:\n{listed}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_children_writing_one_memory_at_once_both_land() {
    let kept = Kept::new(|keeper, _| {
        let child = |name: &str| {
            format!(
                r#"
- match: "child {name}"
  steps:
    - tool_calls:
        - name: write_file
          input: {{path: "{dir}/{name}.md", content: "{body}"}}
    - tool_calls:
        - name: edit_file
          input: {{path: "{dir}/MEMORY.md", old_string: "<!-- end -->", new_string: "- [{name}]({name}.md) — {name} notes\n<!-- end -->"}}
    - text: "{name} done"
"#,
                dir = keeper.display(),
                body = format!("{name} ").repeat(20_000),
            )
        };
        format!(
            r#"
- match: "two keepers"
  steps:
    - tool_calls:
        - name: subagent
          input: {{subagent_type: keeper, description: one, prompt: "child one"}}
        - name: subagent
          input: {{subagent_type: keeper, description: two, prompt: "child two"}}
    - text: "parent done"
{}{}"#,
            child("one"),
            child("two")
        )
    })
    .await;
    write(
        &kept.project,
        ".claude/agent-memory/keeper/MEMORY.md",
        "# Index\n<!-- end -->\n",
    );
    kept.ok(&["run"], "two keepers").await;
    let dir = kept.keeper_dir();
    let index = std::fs::read_to_string(dir.join("MEMORY.md")).unwrap();
    let mut lines: Vec<&str> = index.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        vec![
            "# Index",
            "- [one](one.md) — one notes",
            "- [two](two.md) — two notes",
            "<!-- end -->"
        ]
    );
    for name in ["one", "two"] {
        assert_eq!(
            std::fs::read_to_string(dir.join(format!("{name}.md"))).unwrap(),
            format!("{name} ").repeat(20_000)
        );
    }
    // Nothing but the memory files: no temporary file left behind.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["MEMORY.md", "one.md", "two.md"]);
}
