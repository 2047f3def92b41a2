//! Skills through the binary (issue 29): `SKILL.md` folders of the user and the project reach
//! `run`'s parent and spawn children as Claude Code gives them to its model — the listing in the
//! first request, a skill's body only once the model calls `Skill`, an agent type's `skills:`
//! preloaded into its first request — and `subagent skills` lists them.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_test_support::{FakeServer, RecordedRequest};

use super::support::{fake_preset, run_in, stderr, stdout, subagent};

mod parity;

/// The project's skill: a body with a marker, an argument and another file.
pub(super) const GREET: &str = "---\nname: greet\ndescription: Greets people in the house style. Use when asked to greet.\n---\n# Greeting\n\nSay GREET-BODY-MARKER to everyone.\n";

/// The scenarios: the model loads `greet` (or delegates to a child that does), then answers
/// once the body is in its conversation.
const SCENARIOS: &str = r#"
- match: "greet please"
  steps:
    - tool_calls:
        - name: Skill
          input: {skill: greet, args: Ann}
    - text: "not reached: the body is the latest prompt"
- match: "GREET-BODY-MARKER"
  steps:
    - text: "greeted"
- match: "delegate the greeting"
  steps:
    - tool_calls:
        - name: subagent
          input: {subagent_type: general-purpose, description: greet, prompt: "child job"}
    - text: "parent done"
- match: "child job"
  steps:
    - tool_calls:
        - name: Skill
          input: {skill: greet}
    - text: "not reached"
- match: "fork the greeting"
  steps:
    - tool_calls:
        - name: subagent
          input: {description: forked, prompt: "forked job"}
    - text: "parent done"
- match: "forked job"
  steps:
    - tool_calls:
        - name: Skill
          input: {skill: greet}
    - text: "not reached"
- match: "<result>greeted"
  steps:
    - text: "parent done"
- match: "unknown skill"
  steps:
    - tool_calls:
        - name: Skill
          input: {skill: nosuch}
    - text: "told"
"#;

/// A home (also the runs' HOME) holding a project with the `greet` skill (and a reference file
/// beside it) and a user skill, and a preset on the fake server.
struct Skilled {
    server: FakeServer,
    home: tempfile::TempDir,
    project: std::path::PathBuf,
    preset: std::path::PathBuf,
}

impl Skilled {
    async fn new(extra: &str) -> Self {
        let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("project");
        write(&project, ".claude/skills/greet/SKILL.md", GREET);
        write(&project, ".claude/skills/greet/REFERENCE.md", "ref\n");
        write(
            home.path(),
            ".claude/skills/tidy/SKILL.md",
            "---\ndescription: Tidies up.\n---\nTIDY-BODY\n",
        );
        let preset = fake_preset(home.path(), &server.url(), extra);
        let project = std::fs::canonicalize(project).unwrap();
        Self {
            server,
            home,
            project,
            preset,
        }
    }

    /// `subagent ARGS --preset P PROMPT` in the project, run to its end on a blocking thread.
    async fn run(&self, args: &[&str], prompt: &str) -> std::process::Output {
        run_in(self.home.path(), &self.project, &self.preset, args, prompt).await
    }

    fn greet_dir(&self) -> String {
        self.project
            .join(".claude/skills/greet")
            .display()
            .to_string()
    }
}

pub(super) fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The blocks of a request's first user message, as sent.
pub(super) fn first_blocks(request: &RecordedRequest) -> Vec<Value> {
    let body = request.body.as_ref().unwrap();
    match &body["messages"][0]["content"] {
        Value::Array(blocks) => blocks.clone(),
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        _ => Vec::new(),
    }
}

/// The blocks of a request's last user message, as sent, each without its cache marker.
pub(super) fn last_blocks(request: &RecordedRequest) -> Vec<Value> {
    let body = request.body.as_ref().unwrap();
    let messages = body["messages"].as_array().unwrap();
    let last = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| {
            let mut block = block.clone();
            if let Some(map) = block.as_object_mut() {
                map.remove("cache_control");
            }
            block
        })
        .collect()
}

/// The texts of a list of blocks.
pub(super) fn texts(blocks: &[Value]) -> Vec<String> {
    blocks
        .iter()
        .filter_map(|b| b["text"].as_str().map(str::to_owned))
        .collect()
}

/// The request's tool of that name.
pub(super) fn tool<'a>(request: &'a RecordedRequest, name: &str) -> Option<&'a Value> {
    request.body.as_ref().unwrap()["tools"]
        .as_array()?
        .iter()
        .find(|tool| tool["name"] == name)
}

fn whole(request: &RecordedRequest) -> String {
    serde_json::to_string(request.body.as_ref().unwrap()).unwrap()
}

/// `run`: the first request lists the skills (the user's first) and holds no body; the body
/// arrives beside the `Skill` call's result, with the folder's other file and the arguments.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_loads_a_skill_only_when_the_model_calls_skill() {
    let place = Skilled::new("").await;
    let output = place.run(&["run"], "greet please").await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "greeted\n");
    let requests = place.server.model_requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let first = &requests[0];
    assert!(!whole(first).contains("GREET-BODY-MARKER"));
    let skill = tool(first, "Skill").expect("the Skill tool");
    assert_eq!(
        skill["input_schema"],
        json!({
            "type": "object",
            "properties": {
                "skill": {"description": "The name of a skill from the available-skills list. Do not guess names.", "type": "string"},
                "args": {"description": "Optional arguments for the skill", "type": "string"}
            },
            "required": ["skill"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        texts(&first_blocks(first)),
        vec![
            "greet please".to_owned(),
            "<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n- tidy: Tidies up.\n- greet: Greets people in the house style. Use when asked to greet.\n</system-reminder>".to_owned(),
        ]
    );
    let second = last_blocks(&requests[1]);
    assert_eq!(second[0]["type"], "tool_result");
    assert_eq!(second[0]["content"], "Launching skill: greet");
    assert_eq!(
        texts(&second[1..]),
        vec![format!(
            "Base directory for this skill: {}\n\n# Greeting\n\nSay GREET-BODY-MARKER to everyone.\n\n\nOther files in this skill's folder (paths relative to it; read them when the instructions point at them):\n- REFERENCE.md\n\nARGUMENTS: Ann",
            place.greet_dir()
        )]
    );
}

/// A spawn child of `run` gets the listing in its first request and the body only after its
/// own `Skill` call; a call of a skill nobody has is an error result with its code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_loads_a_skills_body_only_when_it_calls_skill() {
    let place = Skilled::new("").await;
    let output = place.run(&["run"], "delegate the greeting").await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "parent done\n");
    let requests = place.server.model_requests();
    let child: Vec<&RecordedRequest> = requests
        .iter()
        .filter(|r| whole(r).contains("child job"))
        .filter(|r| !whole(r).contains("delegate the greeting"))
        .collect();
    assert_eq!(child.len(), 2, "{requests:#?}");
    assert!(tool(child[0], "Skill").is_some());
    assert!(!whole(child[0]).contains("GREET-BODY-MARKER"));
    assert!(
        texts(&first_blocks(child[0]))
            .iter()
            .any(|t| t.contains("- greet: Greets people")),
        "{:?}",
        first_blocks(child[0])
    );
    assert!(texts(&last_blocks(child[1]))[0].starts_with(&format!(
        "Base directory for this skill: {}\n\n# Greeting",
        place.greet_dir()
    )));

    let output = place.run(&["run"], "unknown skill").await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let last = place.server.model_requests().pop().unwrap();
    let result = &last_blocks(&last)[0];
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        "UNKNOWN_SKILL: unknown skill \"nosuch\" (available: \"tidy\", \"greet\")"
    );
}

/// `delegate --provider spawn --agent`: the agent type's `skills:` are in the child's first
/// request, after its task, as Claude Code preloads them — even for a child whose tools leave
/// it no `Skill` tool (it then gets no listing), and a name no skill has is left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_preloaded_skill_is_in_its_first_request() {
    let place = Skilled::new("").await;
    write(
        &place.project,
        ".claude/agents/greeter.md",
        "---\nname: greeter\ndescription: Greets.\ntools: read_file\nskills: [greet, nosuch]\n---\nYou greet.\n",
    );
    let output = place
        .run(
            &["delegate", "--provider", "spawn", "--agent", "greeter"],
            "child task",
        )
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        !err.contains("is not supported"),
        "`skills:` is honoured, not warned about: {err}"
    );
    assert!(
        err.contains("warning: .claude/agents/greeter.md:5:1: agent `greeter` preloads skill `nosuch`, which no SKILL.md defines: it is left out"),
        "{err}"
    );
    assert!(
        err.contains("preloaded skill \"nosuch\" left out: unknown skill"),
        "{err}"
    );
    let requests = place.server.model_requests();
    let first = &requests[0];
    assert!(tool(first, "Skill").is_none());
    assert_eq!(
        texts(&first_blocks(first)),
        vec![
            "child task".to_owned(),
            "<command-message>greet</command-message>\n<command-name>greet</command-name>\n<skill-format>true</skill-format>".to_owned(),
            format!(
                "Base directory for this skill: {}\n\n# Greeting\n\nSay GREET-BODY-MARKER to everyone.\n\n\nOther files in this skill's folder (paths relative to it; read them when the instructions point at them):\n- REFERENCE.md",
                place.greet_dir()
            ),
        ]
    );
}

/// A skill whose frontmatter names `allowed-tools` needs permission to load (Claude Code asks):
/// refused in `dont-ask` mode without a rule, loaded with `Skill(name)` allowed; a skill
/// without them loads in any mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_with_allowed_tools_needs_permission_to_load() {
    let place = Skilled::new("").await;
    write(
        &place.project,
        ".claude/skills/greet/SKILL.md",
        &GREET.replace("description:", "allowed-tools: Bash(touch:*)\ndescription:"),
    );
    let dont_ask = ["run", "--permission-mode", "dont-ask"];
    let output = place.run(&dont_ask, "greet please").await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let last = place.server.model_requests().pop().unwrap();
    let refused = last_blocks(&last);
    assert_eq!(refused[0]["is_error"], true, "{refused:?}");
    assert!(!whole(&last).contains("GREET-BODY-MARKER"));

    let allowed = [
        "run",
        "--permission-mode",
        "dont-ask",
        "--allowedTools",
        "Skill(greet)",
    ];
    let output = place.run(&allowed, "greet please").await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "greeted\n", "{}", stderr(&output));
}

/// `subagent skills --json` lists each skill with its source, folder and what it overrides,
/// and the warnings of those that did not load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_lists_them_with_sources_and_warnings() {
    let place = Skilled::new("").await;
    write(
        &place.project,
        ".claude/skills/broken/SKILL.md",
        "---\ndescription: [unclosed\n---\n",
    );
    write(
        &place.project,
        ".claude/skills/tidy/SKILL.md",
        "---\ndescription: The project's tidy.\n---\n",
    );
    let output = subagent(place.home.path())
        .current_dir(&place.project)
        .args(["skills", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let rows: Vec<(String, String)> = listed["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("tidy".to_owned(), "user".to_owned()),
            ("greet".to_owned(), "project".to_owned()),
        ]
    );
    assert_eq!(
        listed["skills"][0]["overridden"],
        json!([place.project.join(".claude/skills/tidy")])
    );
    let warnings = listed["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0]["kind"], "invalid");
    assert_eq!(warnings[0]["line"], 2);
    assert_eq!(warnings[0]["column"], 14);
}

/// A fork keeps its parent's tool list, `Skill` included, byte for byte (its prompt cache
/// depends on it), and its parent's first message, listing included, once; in the background
/// (as a fork runs) it loads a skill all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_keeps_its_parents_skill_tool_and_listing() {
    let place = Skilled::new("").await;
    let url = place.server.url();
    std::fs::write(
        &place.preset,
        format!(
            "version: 1\nmax_depth: 2\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: FAKE_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\n  - name: fork\n    kind: fork\ntools:\n  - name: subagent\n    provider: spawn\n    fork: fork\n"
        ),
    )
    .unwrap();
    let output = place.run(&["run"], "fork the greeting").await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let requests = place.server.model_requests();
    let fork = requests
        .iter()
        .find(|r| {
            texts(&last_blocks(r))
                .iter()
                .any(|t| t.contains("forked job"))
        })
        .expect("the fork's request");
    let body = |r: &RecordedRequest| r.body.clone().unwrap();
    assert_eq!(body(fork)["tools"], body(&requests[0])["tools"]);
    assert!(tool(fork, "Skill").is_some());
    // The same first message (the parent's request carried the cache marker on it).
    assert_eq!(
        texts(&first_blocks(fork)),
        texts(&first_blocks(&requests[0]))
    );
    assert_eq!(
        whole(fork)
            .matches("The following skills are available")
            .count(),
        1
    );
    assert_eq!(stdout(&output), "parent done\n");
    let loaded = requests
        .iter()
        .filter(|r| whole(r).contains("forked job"))
        .any(|r| {
            texts(&last_blocks(r))
                .iter()
                .any(|t| t.contains("Say GREET-BODY-MARKER"))
        });
    assert!(loaded, "{requests:#?}");
}

/// A user's skill is outside the project, where the file tools do not write: once skills are
/// there, the reading tools reach its folder (so the model can read the files the listing
/// names), and the writing tools still do not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_skill_folder_is_read_but_not_written() {
    let home = tempfile::tempdir().unwrap();
    let home_path = std::fs::canonicalize(home.path()).unwrap();
    let project = home_path.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let tidy = home_path.join(".claude/skills/tidy");
    write(
        &tidy,
        "SKILL.md",
        "---\ndescription: Tidies up.\n---\nTIDY-BODY\n",
    );
    write(&tidy, "notes.md", "NOTES-INSIDE\n");
    let notes = tidy.join("notes.md");
    let scenarios = format!(
        r#"
- match: "tidy please"
  steps:
    - tool_calls:
        - name: Skill
          input: {{skill: tidy}}
    - text: "not reached"
- match: "TIDY-BODY"
  steps:
    - tool_calls:
        - name: read_file
          input: {{path: "{notes}"}}
    - tool_calls:
        - name: write_file
          input: {{path: "{notes}", content: "overwritten"}}
    - text: "tidied"
"#,
        notes = notes.display()
    );
    let server = FakeServer::from_yaml(&scenarios).await.unwrap();
    let preset = fake_preset(&home_path, &server.url(), "");
    let mut command = subagent(&home_path);
    command
        .current_dir(&project)
        .env(
            subagent_test_support::cli::FAKE_KEY.0,
            subagent_test_support::cli::FAKE_KEY.1,
        )
        .args(["run", "--permission-mode", "bypass", "--preset"])
        .arg(&preset)
        .arg("tidy please");
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "tidied\n");
    let requests = server.model_requests();
    let read = &last_blocks(&requests[2])[0];
    assert_ne!(read["is_error"], true, "{read}");
    assert!(
        read["content"].as_str().unwrap().contains("NOTES-INSIDE"),
        "{read}"
    );
    let written = &last_blocks(&requests[3])[0];
    assert_eq!(written["is_error"], true, "{written}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "NOTES-INSIDE\n");
}

/// A skill's body past the run's cap on a tool result reaches the model cut, as a result would,
/// with a marker saying how to read the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_skill_body_is_cut_at_the_runs_cap() {
    let place = Skilled::new("").await;
    let long = format!("{GREET}{}\nTHE-END\n", "filler line\n".repeat(200));
    write(&place.project, ".claude/skills/greet/SKILL.md", &long);
    let preset = std::fs::read_to_string(&place.preset).unwrap();
    std::fs::write(
        &place.preset,
        preset.replace("version: 1\n", "version: 1\nmax_tool_result_bytes: 600\n"),
    )
    .unwrap();
    let output = place.run(&["run"], "greet please").await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let requests = place.server.model_requests();
    let body = &texts(&last_blocks(&requests[1]))[0];
    assert!(body.len() < 1000, "{body}");
    assert!(body.contains("Say GREET-BODY-MARKER"), "{body}");
    assert!(body.contains("ARGUMENTS: Ann"), "the end is kept: {body}");
    assert!(
        body.contains("bytes cut here: a tool result keeps at most 600 bytes. To see the rest, read the file it comes from (a skill's SKILL.md) with read_file, a part at a time.]"),
        "{body}"
    );
}
