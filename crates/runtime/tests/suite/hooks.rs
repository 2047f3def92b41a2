//! The hook runner against real bash scripts in a temporary directory: exit codes, the JSON
//! output fields, the stdin of each event, matchers, and the process bounds (timeouts, forks,
//! floods, big stdin) in `hooks/bounds.rs`.

mod bounds;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};
use subagent_runtime::{HookBase, HookDecision, HookRunner, HookVerdict, Secrets};
use subagent_settings::{HookEvent, Hooks, Scope};
use tokio_util::sync::CancellationToken;

/// Writes an executable bash script `name` with `body` into `dir`; returns its path (the
/// command a hook entry names).
pub(super) fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_owned()
}

/// A runner of the `hooks` value (a settings file's `hooks` key) whose hooks run in `dir`.
pub(super) fn runner(dir: &Path, hooks: Value) -> HookRunner {
    let hooks = Hooks::from_value(&hooks, Scope::Project, None, "test").unwrap();
    HookRunner::new(
        hooks,
        HookBase {
            session_id: "sess-1".into(),
            transcript_path: Some(dir.join("transcript.jsonl")),
            cwd: dir.to_path_buf(),
            project_dir: dir.join("project"),
            permission_mode: "acceptEdits".into(),
            secrets: Secrets::new(),
        },
    )
}

/// `{"<event>": [{"matcher": <matcher>, "hooks": [<command>…]}]}`.
pub(super) fn on(event: &str, matcher: Option<&str>, commands: &[&str]) -> Value {
    let hooks: Vec<Value> = commands
        .iter()
        .map(|c| json!({"type": "command", "command": c}))
        .collect();
    json!({event: [{"matcher": matcher, "hooks": hooks}]})
}

pub(super) fn map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn bash_call() -> Map<String, Value> {
    map(json!({
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
    }))
}

/// Runs `event` for a call of `tool` with `input`.
pub(super) async fn fire(
    runner: &HookRunner,
    event: HookEvent,
    tool: Option<&str>,
    input: Map<String, Value>,
) -> HookVerdict {
    runner
        .run(&event, tool, input, &CancellationToken::new())
        .await
}

/// Runs `event` for a call of `tool` with `input` under `hooks` (a settings file's `hooks` key)
/// run in `dir`.
pub(super) async fn fire_in(
    dir: &Path,
    hooks: Value,
    event: HookEvent,
    tool: Option<&str>,
    input: Map<String, Value>,
) -> HookVerdict {
    fire(&runner(dir, hooks), event, tool, input).await
}

/// Runs `event` for a call of `tool` without input under `hooks` run in `dir`.
pub(super) async fn fire_tool(
    dir: &Path,
    hooks: Value,
    event: HookEvent,
    tool: &str,
) -> HookVerdict {
    fire_in(dir, hooks, event, Some(tool), Map::new()).await
}

/// Runs `event` for the Bash call `ls` under the `commands` hooked on it (matcher `matcher`),
/// run in `dir`.
async fn fire_bash(
    dir: &Path,
    event: HookEvent,
    matcher: Option<&str>,
    commands: &[&str],
) -> HookVerdict {
    let hooks = on(event.name(), matcher, commands);
    fire_in(dir, hooks, event, Some("Bash"), bash_call()).await
}

/// Runs `event` alone (no tool) under the `commands` hooked on it, run in `dir`.
pub(super) async fn fire_alone(dir: &Path, event: HookEvent, commands: &[&str]) -> HookVerdict {
    fire_event(dir, on(event.name(), None, commands), event).await
}

/// Runs `event` alone (no tool) under `hooks` run in `dir`.
pub(super) async fn fire_event(dir: &Path, hooks: Value, event: HookEvent) -> HookVerdict {
    fire_in(dir, hooks, event, None, Map::new()).await
}

/// The verdict of `count` hooks that ran and said nothing.
pub(super) fn ran(count: usize) -> HookVerdict {
    HookVerdict {
        ran: count,
        ..HookVerdict::default()
    }
}

#[tokio::test]
async fn exit_zero_with_plain_text_or_json_lets_the_call_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let plain = script(dir.path(), "plain.sh", "echo 'just a note'");
    let silent = script(dir.path(), "silent.sh", "exit 0");
    let json = script(
        dir.path(),
        "json.sh",
        r#"echo '{"continue": true, "systemMessage": "checked"}'"#,
    );
    let hooks = on("PreToolUse", Some("Bash"), &[&plain, &silent, &json]);
    let verdict = fire_in(
        dir.path(),
        hooks,
        HookEvent::PreToolUse,
        Some("bash"),
        bash_call(),
    )
    .await;
    assert_eq!(
        verdict,
        HookVerdict {
            system_messages: vec!["checked".into()],
            ..ran(3)
        }
    );
}

#[tokio::test]
async fn exit_two_blocks_with_claudes_text_and_the_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let hook = script(
        dir.path(),
        "deny.sh",
        "echo 'ignored stdout'; echo 'writes are frozen' >&2; exit 2",
    );
    let runner = runner(dir.path(), on("PreToolUse", Some("Write"), &[&hook]));
    // Our tool name is matched, and named in the text, as Claude Code's.
    let verdict = fire(
        &runner,
        HookEvent::PreToolUse,
        Some("write_file"),
        Map::new(),
    )
    .await;
    assert_eq!(
        verdict,
        HookVerdict {
            blocked: Some(format!(
                "PreToolUse:Write hook error: [{hook}]: writes are frozen\n"
            )),
            ..ran(1)
        }
    );
    // The stderr as the hook wrote it, its last newline included, as the pinned claude gives it
    // (the parity test in the CLI's `settings` suite compares the two).
    // An event without a tool: the event alone.
    let runner = self::runner(dir.path(), on("Stop", None, &[&hook]));
    let verdict = fire(&runner, HookEvent::Stop, None, Map::new()).await;
    assert_eq!(
        verdict.blocked,
        Some(format!("Stop hook error: [{hook}]: writes are frozen\n"))
    );
    // SessionStart's matcher selects its source, which is no tool.
    let runner = self::runner(dir.path(), on("SessionStart", Some("startup"), &[&hook]));
    let verdict = fire(
        &runner,
        HookEvent::SessionStart,
        Some("startup"),
        Map::new(),
    )
    .await;
    assert_eq!(
        verdict.blocked,
        Some(format!(
            "SessionStart hook error: [{hook}]: writes are frozen\n"
        ))
    );
}

#[tokio::test]
async fn another_exit_code_is_a_non_blocking_error_for_the_user() {
    let dir = tempfile::tempdir().unwrap();
    let hook = script(dir.path(), "fail.sh", "echo 'lint crashed' >&2; exit 1");
    let quiet = script(dir.path(), "quiet.sh", "exit 7");
    let runner = runner(dir.path(), on("PostToolUse", None, &[&hook, &quiet]));
    let verdict = fire(&runner, HookEvent::PostToolUse, Some("Bash"), bash_call()).await;
    assert_eq!(
        verdict,
        HookVerdict {
            errors: vec![
                format!("PostToolUse hook [{hook}] failed with exit code 1: lint crashed"),
                format!("PostToolUse hook [{quiet}] failed with exit code 7"),
            ],
            ..ran(2)
        }
    );
}

fn decision(dir: &Path, name: &str, decision: &str, reason: &str) -> String {
    let output = json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }});
    script(dir, name, &format!("echo '{output}'"))
}

#[tokio::test]
async fn permission_decisions_carry_their_reasons_and_deny_beats_ask_beats_allow() {
    let dir = tempfile::tempdir().unwrap();
    let allow = decision(dir.path(), "allow.sh", "allow", "read-only command");
    let ask = decision(dir.path(), "ask.sh", "ask", "touches the network");
    let deny = decision(dir.path(), "deny.sh", "deny", "rm is not allowed");
    let cases: [(&[&str], HookDecision, &str); 6] = [
        (&[&allow], HookDecision::Allow, "read-only command"),
        (&[&ask], HookDecision::Ask, "touches the network"),
        (&[&deny], HookDecision::Deny, "rm is not allowed"),
        (&[&allow, &ask], HookDecision::Ask, "touches the network"),
        (&[&deny, &ask], HookDecision::Deny, "rm is not allowed"),
        (
            &[&allow, &deny, &ask],
            HookDecision::Deny,
            "rm is not allowed",
        ),
    ];
    for (commands, expected, reason) in cases {
        let runner = runner(dir.path(), on("PreToolUse", Some("Bash"), commands));
        let verdict = fire(&runner, HookEvent::PreToolUse, Some("Bash"), bash_call()).await;
        assert_eq!(
            verdict,
            HookVerdict {
                permission: Some((expected, reason.into())),
                ..ran(commands.len())
            },
            "{commands:?}"
        );
    }
}

#[tokio::test]
async fn the_older_top_level_decision_approves_or_blocks_a_tool_call() {
    let dir = tempfile::tempdir().unwrap();
    let approve = script(
        dir.path(),
        "approve.sh",
        r#"echo '{"decision": "approve", "reason": "fine"}'"#,
    );
    let block = script(
        dir.path(),
        "block.sh",
        r#"echo '{"decision": "block", "reason": "not today"}'"#,
    );
    let verdict = fire_bash(dir.path(), HookEvent::PreToolUse, None, &[&approve]).await;
    assert_eq!(
        verdict.permission,
        Some((HookDecision::Allow, "fine".into()))
    );
    let verdict = fire_bash(dir.path(), HookEvent::PreToolUse, None, &[&approve, &block]).await;
    assert_eq!(
        verdict.permission,
        Some((HookDecision::Deny, "not today".into()))
    );
    // On other events `decision: "block"` blocks with its reason.
    let verdict = fire_alone(dir.path(), HookEvent::Stop, &[&block]).await;
    assert_eq!(
        verdict,
        HookVerdict {
            blocked: Some("not today".into()),
            ..ran(1)
        }
    );
}

#[tokio::test]
async fn permission_request_hooks_decide_through_decision_behavior() {
    let dir = tempfile::tempdir().unwrap();
    let allow = script(
        dir.path(),
        "allow.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedInput": {"command": "ls -la"}}}}'"#,
    );
    let deny = script(
        dir.path(),
        "deny.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "no network"}}}'"#,
    );
    let failing = script(dir.path(), "exit2.sh", "echo 'refused' >&2; exit 2");
    let verdict = fire_bash(
        dir.path(),
        HookEvent::PermissionRequest,
        Some("Bash"),
        &[&allow],
    )
    .await;
    assert_eq!(
        verdict,
        HookVerdict {
            permission: Some((HookDecision::Allow, String::new())),
            updated_input: Some(json!({"command": "ls -la"})),
            ..ran(1)
        }
    );
    let verdict = fire_bash(
        dir.path(),
        HookEvent::PermissionRequest,
        Some("Bash"),
        &[&allow, &deny],
    )
    .await;
    assert_eq!(
        verdict.permission,
        Some((HookDecision::Deny, "no network".into()))
    );
    // Exit 2 denies, with the stderr.
    let verdict = fire_bash(dir.path(), HookEvent::PermissionRequest, None, &[&failing]).await;
    let text = format!("PermissionRequest:Bash hook error: [{failing}]: refused\n");
    assert_eq!(
        verdict,
        HookVerdict {
            blocked: Some(text.clone()),
            permission: Some((HookDecision::Deny, text)),
            ..ran(1)
        }
    );
}

#[tokio::test]
async fn updated_input_and_additional_context_are_returned() {
    let dir = tempfile::tempdir().unwrap();
    let rewrite = script(
        dir.path(),
        "rewrite.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "rewritten", "updatedInput": {"command": "ls --color=never"}, "additionalContext": "ls was rewritten"}}'"#,
    );
    let verdict = fire_bash(dir.path(), HookEvent::PreToolUse, Some("Bash"), &[&rewrite]).await;
    assert_eq!(
        verdict,
        HookVerdict {
            permission: Some((HookDecision::Allow, "rewritten".into())),
            updated_input: Some(json!({"command": "ls --color=never"})),
            additional_context: vec!["ls was rewritten".into()],
            ..ran(1)
        }
    );
    // PostToolUse's additionalContext; its plain stdout is not context.
    let context = script(
        dir.path(),
        "context.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "tests still pass"}}'"#,
    );
    let plain = script(dir.path(), "plain.sh", "echo 'for the transcript only'");
    let verdict = fire_bash(
        dir.path(),
        HookEvent::PostToolUse,
        None,
        &[&context, &plain],
    )
    .await;
    assert_eq!(verdict.additional_context, vec!["tests still pass"]);
    // UserPromptSubmit and SessionStart take an exit-0 hook's plain stdout as context.
    for event in ["UserPromptSubmit", "SessionStart"] {
        let verdict = fire_alone(dir.path(), HookEvent::parse(event), &[&plain, &context]).await;
        assert_eq!(
            verdict.additional_context,
            vec!["for the transcript only", "tests still pass"],
            "{event}"
        );
    }
}

#[tokio::test]
async fn continue_false_stops_with_its_reason_and_output_can_be_suppressed() {
    let dir = tempfile::tempdir().unwrap();
    let stop = script(
        dir.path(),
        "stop.sh",
        r#"echo '{"continue": false, "stopReason": "build is broken", "suppressOutput": true}'"#,
    );
    let suppress = script(
        dir.path(),
        "suppress.sh",
        r#"echo '{"suppressOutput": true, "systemMessage": "formatted"}'"#,
    );
    let hooks = on("PostToolUse", None, &[&stop]);
    let verdict = fire_tool(dir.path(), hooks, HookEvent::PostToolUse, "Edit").await;
    assert_eq!(
        verdict,
        HookVerdict {
            blocked: Some("build is broken".into()),
            stop: Some("build is broken".into()),
            suppress_output: true,
            ..ran(1)
        }
    );
    let hooks = on("PostToolUse", None, &[&suppress]);
    let verdict = fire_tool(dir.path(), hooks, HookEvent::PostToolUse, "Edit").await;
    assert_eq!(
        verdict,
        HookVerdict {
            suppress_output: true,
            system_messages: vec!["formatted".into()],
            ..ran(1)
        }
    );
}

#[tokio::test]
async fn json_that_does_not_parse_is_a_non_blocking_error() {
    let dir = tempfile::tempdir().unwrap();
    let broken = script(dir.path(), "broken.sh", "echo '{\"decision\": '");
    let verdict = fire_bash(dir.path(), HookEvent::PreToolUse, None, &[&broken]).await;
    assert_eq!(verdict.ran, 1);
    assert_eq!(verdict.permission, None);
    assert_eq!(verdict.errors.len(), 1, "{verdict:?}");
    assert!(
        verdict.errors[0].starts_with(&format!(
            "PreToolUse hook [{broken}] printed JSON that does not parse: "
        )),
        "{verdict:?}"
    );
}

/// The keys each event's stdin has, in order, as the reference file lists them for the pinned
/// `claude` (less `prompt_id` and `effort`, which are Claude Code's; the event's own keys come
/// from the caller).
#[tokio::test]
async fn each_event_gets_the_common_keys_and_its_own_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let dump = script(dir.path(), "dump.sh", "cat > \"$PWD/stdin-$1.json\"");
    let pre =
        json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"});
    let mut post = pre.clone();
    post["tool_response"] = json!({"stdout": "a\n", "stderr": "", "interrupted": false});
    post["duration_ms"] = json!(12);
    let common = ["session_id", "transcript_path", "cwd"];
    let events: [(&str, Option<&str>, Value, &[&str]); 6] = [
        (
            "SessionStart",
            None,
            json!({"source": "startup"}),
            &["hook_event_name", "source"],
        ),
        (
            "UserPromptSubmit",
            None,
            json!({"prompt": "hi"}),
            &["permission_mode", "hook_event_name", "prompt"],
        ),
        (
            "PreToolUse",
            Some("Bash"),
            pre,
            &[
                "permission_mode",
                "hook_event_name",
                "tool_name",
                "tool_input",
                "tool_use_id",
            ],
        ),
        (
            "PostToolUse",
            Some("Bash"),
            post,
            &[
                "permission_mode",
                "hook_event_name",
                "tool_name",
                "tool_input",
                "tool_use_id",
                "tool_response",
                "duration_ms",
            ],
        ),
        (
            "Stop",
            None,
            json!({"stop_hook_active": false, "last_assistant_message": "done"}),
            &[
                "permission_mode",
                "hook_event_name",
                "stop_hook_active",
                "last_assistant_message",
            ],
        ),
        (
            "SessionEnd",
            None,
            json!({"reason": "other"}),
            &["hook_event_name", "reason"],
        ),
    ];
    for (event, tool, input, keys) in events {
        let command = format!("{dump} {event}");
        let runner = runner(dir.path(), on(event, None, &[&command]));
        let verdict = fire(&runner, HookEvent::parse(event), tool, map(input.clone())).await;
        assert_eq!(verdict, ran(1), "{event}");
        let text = std::fs::read_to_string(dir.path().join(format!("stdin-{event}.json"))).unwrap();
        let got: Map<String, Value> = serde_json::from_str(&text).unwrap();
        let got_keys: Vec<&str> = got.keys().map(String::as_str).collect();
        let expected: Vec<&str> = common.iter().chain(keys).copied().collect();
        assert_eq!(got_keys, expected, "{event}");
        assert_eq!(got["session_id"], "sess-1");
        assert_eq!(
            got["transcript_path"],
            dir.path().join("transcript.jsonl").to_str().unwrap()
        );
        assert_eq!(got["cwd"], dir.path().to_str().unwrap());
        assert_eq!(got["hook_event_name"], event);
        if got.contains_key("permission_mode") {
            assert_eq!(got["permission_mode"], "acceptEdits");
        }
        for (key, value) in map(input) {
            assert_eq!(got[&key], value, "{event}.{key}");
        }
    }
}

#[tokio::test]
async fn hooks_run_in_the_cwd_with_the_project_dir_in_their_environment() {
    let dir = tempfile::tempdir().unwrap();
    let env = script(
        dir.path(),
        "env.sh",
        r#"echo "$PWD|$CLAUDE_PROJECT_DIR|$SUBAGENT_PROJECT_DIR""#,
    );
    let verdict = fire_alone(dir.path(), HookEvent::UserPromptSubmit, &[&env]).await;
    let (cwd, project) = (dir.path().display(), dir.path().join("project"));
    let project = project.display();
    assert_eq!(
        verdict.additional_context,
        vec![format!("{cwd}|{project}|{project}")]
    );
}

#[tokio::test]
async fn only_the_hooks_whose_matcher_takes_the_tool_run() {
    let dir = tempfile::tempdir().unwrap();
    let touch = |name: &str| {
        script(
            dir.path(),
            &format!("{name}.sh"),
            &format!("touch {name}.ran"),
        )
    };
    let (bash, write, edits, all) = (touch("bash"), touch("write"), touch("edits"), touch("all"));
    let hooks = json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": bash}]},
        {"matcher": "Write", "hooks": [{"type": "command", "command": write}]},
        {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": edits}]},
        {"matcher": "*", "hooks": [{"type": "command", "command": all}]},
    ]});
    let runner = runner(dir.path(), hooks);
    let verdict = fire(
        &runner,
        HookEvent::PreToolUse,
        Some("write_file"),
        Map::new(),
    )
    .await;
    assert_eq!(verdict, ran(3));
    let mut marks: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".ran"))
        .collect();
    marks.sort();
    assert_eq!(marks, ["all.ran", "edits.ran", "write.ran"]);
    // No hook for the event, or none for the tool: nothing runs.
    let verdict = fire(&runner, HookEvent::PostToolUse, Some("Write"), Map::new()).await;
    assert_eq!(verdict, HookVerdict::default());
}

#[tokio::test]
async fn a_command_configured_twice_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let count = script(dir.path(), "count.sh", "echo ran >> count.txt");
    let other = script(dir.path(), "other.sh", "echo other >> count.txt");
    let hooks = json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": count}]},
        {"matcher": "*", "hooks": [
            {"type": "command", "command": count},
            {"type": "command", "command": other},
        ]},
    ]});
    let verdict = fire_in(
        dir.path(),
        hooks,
        HookEvent::PreToolUse,
        Some("Bash"),
        bash_call(),
    )
    .await;
    assert_eq!(verdict, ran(2));
    let mut lines: Vec<String> = std::fs::read_to_string(dir.path().join("count.txt"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    assert_eq!(lines, ["other", "ran"]);
}

#[tokio::test]
async fn is_empty_says_whether_any_hook_is_configured() {
    let dir = tempfile::tempdir().unwrap();
    assert!(runner(dir.path(), Value::Null).is_empty());
    assert!(runner(dir.path(), json!({"Stop": []})).is_empty());
    assert!(!runner(dir.path(), on("Stop", None, &["true"])).is_empty());
    let empty = runner(dir.path(), Value::Null);
    let verdict = fire(&empty, HookEvent::PreToolUse, Some("Bash"), bash_call()).await;
    assert_eq!(verdict, HookVerdict::default());
}
