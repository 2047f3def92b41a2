//! Hook configuration: events, matchers, timeouts, sources.

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_settings::{HookEvent, Hooks, Scope};

use super::support::World;

fn hooks() -> Hooks {
    let value = json!({
        "PreToolUse": [
            {"matcher": "Bash|Write", "hooks": [{"type": "command", "command": "bash-or-write", "timeout": 30}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "star"}]},
            {"matcher": "", "hooks": [{"type": "command", "command": "empty"}]},
            {"hooks": [{"type": "command", "command": "absent"}]},
            {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "mcp"}]},
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "edit-only"}]},
            {"matcher": "Notebook.*", "hooks": [{"type": "command", "command": "notebook", "timeout": 0.5}]}
        ],
        "Stop": [
            {"hooks": [{"type": "command", "command": "on-stop"}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "never-without-a-tool"}]}
        ]
    });
    Hooks::from_value(
        &value,
        Scope::Project,
        Some(Path::new("/p/.claude/settings.json")),
        "/p/.claude/settings.json",
    )
    .unwrap()
}

fn commands(hooks: &Hooks, event: &HookEvent, tool: Option<&str>) -> Vec<String> {
    hooks
        .for_event(event, tool)
        .iter()
        .map(|h| h.command.clone())
        .collect()
}

#[test]
fn matchers_select_by_claude_tool_name() {
    let hooks = hooks();
    let pre = HookEvent::PreToolUse;
    let all = ["star", "empty", "absent"];
    let with = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        v.extend(extra.iter().take(1).map(|s| (*s).to_owned()));
        v.extend(all.iter().map(|s| (*s).to_owned()));
        v.extend(extra.iter().skip(1).map(|s| (*s).to_owned()));
        v
    };
    assert_eq!(
        commands(&hooks, &pre, Some("Bash")),
        with(&["bash-or-write"])
    );
    // Our names are mapped to Claude Code's first.
    assert_eq!(
        commands(&hooks, &pre, Some("bash")),
        with(&["bash-or-write"])
    );
    assert_eq!(
        commands(&hooks, &pre, Some("write_file")),
        with(&["bash-or-write"])
    );
    // `Edit` is exact: not `NotebookEdit`, which the regex takes.
    assert_eq!(
        commands(&hooks, &pre, Some("edit_file")),
        [all.as_slice(), &["edit-only"]].concat()
    );
    assert_eq!(
        commands(&hooks, &pre, Some("NotebookEdit")),
        [all.as_slice(), &["notebook"]].concat()
    );
    assert_eq!(
        commands(&hooks, &pre, Some("mcp__github__x")),
        [all.as_slice(), &["mcp"]].concat()
    );
    assert_eq!(commands(&hooks, &pre, Some("Read")), all);
    // An event without a tool takes only groups without a matcher.
    assert_eq!(commands(&hooks, &HookEvent::Stop, None), ["on-stop"]);
    assert_eq!(
        commands(&hooks, &HookEvent::SessionStart, None),
        Vec::<String>::new()
    );
}

#[test]
fn timeouts_default_to_sixty_seconds_and_sources_are_kept() {
    let hooks = hooks();
    let found = hooks.for_event(&HookEvent::PreToolUse, Some("Bash"));
    assert_eq!(found[0].timeout, Duration::from_secs(30));
    assert_eq!(found[1].timeout, Duration::from_secs(60));
    assert_eq!(found[1].source, Scope::Project);
    assert_eq!(
        found[1].file.as_deref(),
        Some(Path::new("/p/.claude/settings.json"))
    );
    let notebook = hooks.for_event(&HookEvent::PreToolUse, Some("NotebookEdit"));
    assert_eq!(notebook.last().unwrap().timeout, Duration::from_millis(500));
}

#[test]
fn an_invalid_matcher_is_an_error_naming_the_file() {
    let value = json!({"PreToolUse": [{"matcher": "Bash(", "hooks": []}]});
    let error =
        Hooks::from_value(&value, Scope::User, None, "/h/.claude/settings.json").unwrap_err();
    assert_eq!(error.code(), "HOOK_MATCHER_INVALID");
    assert!(
        error
            .to_string()
            .starts_with("/h/.claude/settings.json: hooks.PreToolUse: matcher \"Bash(\" is not a valid regular expression: "),
        "{error}"
    );
}

#[test]
fn unknown_events_and_hook_types_are_warnings() {
    let value = json!({
        "PreCompact": [{"hooks": [{"type": "command", "command": "x"}]}],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "check"}, {"type": "command", "command": "y"}]}]
    });
    let hooks = Hooks::from_value(&value, Scope::Agent, None, "agent reviewer").unwrap();
    assert_eq!(
        hooks.warnings,
        [
            "agent reviewer: hooks.PreCompact: unknown hook event, kept but never fired",
            "agent reviewer: hooks.Stop[0].hooks[0]: hook type \"prompt\" is not supported (only \"command\"); skipped",
        ]
    );
    let other = HookEvent::Other("PreCompact".into());
    assert_eq!(commands(&hooks, &other, None), ["x"]);
    let stop = hooks.for_event(&HookEvent::Stop, None);
    assert_eq!((stop.len(), stop[0].source), (1, Scope::Agent));
    assert_eq!(HookEvent::parse("SubagentStop"), HookEvent::SubagentStop);
    let names: Vec<String> = HookEvent::KNOWN.iter().map(ToString::to_string).collect();
    assert_eq!(
        names,
        [
            "PreToolUse",
            "PostToolUse",
            "PermissionRequest",
            "UserPromptSubmit",
            "Stop",
            "SubagentStart",
            "SubagentStop",
            "SessionStart",
            "SessionEnd",
            "Notification"
        ]
    );
}

#[test]
fn hooks_of_every_scope_run_highest_first_and_once_each() {
    let world = World::new();
    let hook = |command: &str| json!({"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": command}]}]}});
    world.write(&world.home.join(".claude/settings.json"), &hook("user.sh"));
    world.write(
        &world.project.join(".claude/settings.json"),
        &hook("project.sh"),
    );
    world.write(
        &world.project.join(".claude/settings.local.json"),
        &hook("user.sh"),
    );
    let settings = world.load();
    let found: Vec<(String, Scope)> = settings
        .hooks
        .for_event(&HookEvent::PostToolUse, Some("write_file"))
        .iter()
        .map(|h| (h.command.clone(), h.source))
        .collect();
    assert_eq!(
        found,
        [
            ("user.sh".to_owned(), Scope::ProjectLocal),
            ("project.sh".to_owned(), Scope::Project),
        ]
    );
}

#[test]
fn has_says_whether_an_event_has_a_hook_whatever_its_matcher() {
    let hooks = hooks();
    assert!(hooks.has(&HookEvent::PreToolUse));
    assert!(hooks.has(&HookEvent::Stop));
    assert!(!hooks.has(&HookEvent::PermissionRequest));
    let matched_only = Hooks::from_value(
        &json!({"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}]}),
        Scope::User,
        None,
        "u",
    )
    .unwrap();
    assert!(matched_only.has(&HookEvent::PermissionRequest));
    assert!(
        matched_only
            .for_event(&HookEvent::PermissionRequest, None)
            .is_empty()
    );
}
