//! Parity with the pinned `claude` (issue 29): one skill folder run through the real `claude`
//! and through a spawn child against the fake model server, and what reached the model
//! compared — the `Skill` tool's input schema, what a `Skill` call returns (its result and the
//! body beside it), the listing line, and an agent type's preloaded skill in its child's first
//! request.

#[cfg(feature = "e2e")]
use pretty_assertions::assert_eq;
#[cfg(feature = "e2e")]
use serde_json::Value;
#[cfg(feature = "e2e")]
use subagent_test_support::{FakeServer, RecordedRequest};

#[cfg(feature = "e2e")]
use super::{GREET, first_blocks, last_blocks, texts, tool, write};

/// Both models load `greet` with an argument, then answer; claude's parent delegates to the
/// `greeter` agent type, whose child answers once its preloaded body is there.
#[cfg(feature = "e2e")]
const BOTH: &str = r#"
- match: "parity claude"
  steps:
    - tool_calls:
        - name: Skill
          input: {skill: greet, args: Ann}
    - text: "not reached"
- match: "parity spawn"
  steps:
    - tool_calls:
        - name: Skill
          input: {skill: greet, args: Ann}
    - text: "not reached"
- match: "GREET-BODY-MARKER"
  steps:
    - text: "greeted"
- match: "argy (claude|spawn)"
  steps:
    - tool_calls:
        - name: Skill
          input: {skill: argy, args: "\"Ann Lee\" Bob"}
    - text: "not reached"
- match: "First: Ann Lee"
  steps:
    - text: "greeted with arguments"
- match: "guarded (claude|spawn)"
  steps:
    - tool_calls:
        - name: Skill
          input: {skill: guarded}
    - text: "refused"
- match: "GUARDED-BODY"
  steps:
    - text: "loaded"
- match: "parity preload claude"
  steps:
    - tool_calls:
        - name: Agent
          input: {subagent_type: greeter, description: greet, prompt: "preload child"}
    - text: "parent done"
"#;

/// What one child's model was shown of the skill.
#[cfg(feature = "e2e")]
#[derive(Debug, PartialEq)]
struct Shown {
    /// The `Skill` tool's input schema (without claude's `$schema` line).
    schema: Value,
    /// Whether the first request's listing has the skill's line.
    listed: bool,
    /// The `Skill` call's result.
    result: String,
    /// The texts beside it in the same message.
    beside: Vec<String>,
}

#[cfg(feature = "e2e")]
fn result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => texts(parts).join("\n"),
        other => other.to_string(),
    }
}

/// The requests of one `delegate` whose first request holds `marker`.
#[cfg(feature = "e2e")]
fn shown(requests: &[RecordedRequest], marker: &str) -> Shown {
    let ours: Vec<&RecordedRequest> = requests
        .iter()
        .filter(|r| tool(r, "Skill").is_some())
        .filter(|r| {
            serde_json::to_string(&first_blocks(r))
                .unwrap()
                .contains(marker)
        })
        .collect();
    assert!(ours.len() >= 2, "{marker}: {requests:#?}");
    let mut schema = tool(ours[0], "Skill").unwrap()["input_schema"].clone();
    schema.as_object_mut().unwrap().remove("$schema");
    let listing = "- greet: Greets people in the house style. Use when asked to greet.\n";
    let listed = serde_json::to_string(ours[0].body.as_ref().unwrap())
        .unwrap()
        .contains(
            &serde_json::to_string(listing)
                .unwrap()
                .trim_matches('"')
                .to_owned(),
        );
    let last = last_blocks(ours[1]);
    Shown {
        schema,
        listed,
        result: result_text(&last[0]),
        beside: texts(&last[1..]),
    }
}

#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_reaches_the_model_as_claude_gives_it() {
    let server = FakeServer::from_yaml(BOTH).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    write(&project, ".claude/skills/greet/SKILL.md", GREET);
    write(
        &project,
        ".claude/agents/greeter.md",
        "---\nname: greeter\ndescription: Greets with the greet skill preloaded.\nskills: greet\n---\nYou greet.\n",
    );
    let project = std::fs::canonicalize(project).unwrap();
    write(
        &project,
        ".claude/skills/guarded/SKILL.md",
        "---\ndescription: Needs a tool.\nallowed-tools: Bash(touch:*)\n---\nGUARDED-BODY\n",
    );
    let dont_ask = super::super::pinned::claude_code_row(
        home.path(),
        &server.url(),
        "      permission_mode: dontAsk\n",
    )
    .replace("name: claude-code", "name: claude-dont-ask");
    let preset = super::super::pinned::parity_preset(
        home.path(),
        &server.url(),
        &format!(
            "  - {{name: spawn-dont-ask, kind: spawn, config: {{permission_mode: dont-ask}}}}\n{dont_ask}"
        ),
        "",
    );
    let delegate =
        |args: &[&str]| super::super::support::delegate_ok(home.path(), &project, &preset, args);
    tokio::task::block_in_place(|| {
        delegate(&["--provider", "claude-code", "parity claude"]);
        delegate(&["--provider", "spawn", "parity spawn"]);
    });
    let requests = server.model_requests();
    let claude = shown(&requests, "parity claude");
    let spawn = shown(&requests, "parity spawn");
    assert_eq!(spawn, claude);
    assert_eq!(claude.result, "Launching skill: greet");
    assert_eq!(
        claude.beside,
        vec![format!(
            "Base directory for this skill: {}\n\n# Greeting\n\nSay GREET-BODY-MARKER to everyone.\n\n\nARGUMENTS: Ann",
            project.join(".claude/skills/greet").display()
        )]
    );
    assert!(claude.listed);

    // Arguments in the body's placeholders (the whole, the Nth from 0, quotes grouping).
    write(
        &project,
        ".claude/skills/argy/SKILL.md",
        "---\ndescription: Takes arguments.\n---\nGreet $ARGUMENTS now. First: $0. Also $ARGUMENTS[1].\n",
    );
    let before = server.model_requests().len();
    tokio::task::block_in_place(|| {
        delegate(&["--provider", "claude-code", "argy claude"]);
        delegate(&["--provider", "spawn", "argy spawn"]);
    });
    let requests = server.model_requests()[before..].to_vec();
    let claude = shown(&requests, "argy claude");
    let spawn = shown(&requests, "argy spawn");
    assert_eq!(spawn.beside, claude.beside);
    assert_eq!(
        claude.beside,
        vec![format!(
            "Base directory for this skill: {}\n\nGreet \"Ann Lee\" Bob now. First: Ann Lee. Also Bob.\n",
            project.join(".claude/skills/argy").display()
        )]
    );

    // A skill that names `allowed-tools` needs permission: both refuse it in don't-ask mode,
    // and neither model sees its body.
    let before = server.model_requests().len();
    tokio::task::block_in_place(|| {
        delegate(&["--provider", "claude-dont-ask", "guarded claude"]);
        delegate(&["--provider", "spawn-dont-ask", "guarded spawn"]);
    });
    let requests = server.model_requests()[before..].to_vec();
    let refusals: Vec<(bool, bool)> = ["guarded claude", "guarded spawn"]
        .iter()
        .map(|marker| {
            let answered = requests
                .iter()
                .filter(|r| {
                    serde_json::to_string(&first_blocks(r))
                        .unwrap()
                        .contains(marker)
                })
                .find(|r| last_blocks(r)[0]["type"] == "tool_result")
                .unwrap_or_else(|| panic!("{marker}: {requests:#?}"));
            let result = &last_blocks(answered)[0];
            let body = serde_json::to_string(answered.body.as_ref().unwrap())
                .unwrap()
                .contains("GUARDED-BODY");
            (result["is_error"] == true, body)
        })
        .collect();
    assert_eq!(refusals, vec![(true, false), (true, false)]);

    // A preloaded skill: the texts after the task in the child's first request.
    tokio::task::block_in_place(|| {
        delegate(&["--provider", "claude-code", "parity preload claude"]);
        delegate(&["--provider", "spawn", "--agent", "greeter", "preload child"]);
    });
    // Each child's first request, claude's (its tools are Claude Code's: `Read`) first.
    let mut firsts: Vec<(bool, Vec<String>)> = server
        .model_requests()
        .iter()
        .map(|r| (tool(r, "Read").is_some(), texts(&first_blocks(r))))
        .filter(|(_, texts)| {
            texts
                .iter()
                .any(|t| t.starts_with("<command-message>greet"))
        })
        .collect();
    firsts.sort_by_key(|(claude, _)| !claude);
    assert_eq!(
        firsts.iter().map(|(claude, _)| *claude).collect::<Vec<_>>(),
        vec![true, false],
        "one child of each: {firsts:#?}"
    );
    let preloaded: Vec<Vec<String>> = firsts
        .into_iter()
        .map(|(_, texts)| {
            let at = texts
                .iter()
                .position(|t| t.starts_with("<command-message>"))
                .unwrap();
            texts[at..]
                .iter()
                .filter(|t| !t.starts_with("<system-reminder>"))
                .cloned()
                .collect()
        })
        .collect();
    let (claude, spawn) = (&preloaded[0], &preloaded[1]);
    assert_eq!(spawn, claude);
    assert_eq!(
        claude,
        &vec![
            "<command-message>greet</command-message>\n<command-name>greet</command-name>\n<skill-format>true</skill-format>".to_owned(),
            format!(
                "Base directory for this skill: {}\n\n# Greeting\n\nSay GREET-BODY-MARKER to everyone.\n",
                project.join(".claude/skills/greet").display()
            ),
        ]
    );
}
