//! A project's allow rules count only once it is trusted; its deny, ask and hooks at once.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_settings::{
    Decision, HookEvent, MatchContext, PermissionMode, Scope, ToolCall, Trust, TrustState,
};

use super::support::World;

fn project_files(world: &World) {
    world.write(
        &world.project.join(".claude/settings.json"),
        &json!({"permissions": {
            "allow": ["Bash(npm test)"],
            "deny": ["Read(./.env)"],
            "ask": ["Bash(git push *)"],
            "defaultMode": "bypassPermissions"
        },
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]}}),
    );
    world.write(
        &world.project.join(".subagents/settings.local.json"),
        &json!({"permissions": {"allow": ["Edit", "Write"]}}),
    );
    world.write(
        &world.home.join(".claude/settings.json"),
        &json!({"permissions": {"allow": ["Bash(mkdir made)"]}}),
    );
}

#[test]
fn an_untrusted_project_keeps_deny_ask_and_hooks_but_not_allow() {
    let world = World::new();
    project_files(&world);
    let settings = world.load();
    assert_eq!(settings.trust, TrustState::default());
    let ctx = MatchContext {
        cwd: &world.project,
        project_root: &world.project,
        home: Some(&world.home),
    };
    let perms = &settings.permissions;
    let bash = |command| ToolCall::new("bash").command(command);
    // The user's allow counts at once; the project's does not.
    assert_eq!(
        perms.decide(&bash("mkdir made"), &ctx).map(|d| d.0),
        Some(Decision::Allow)
    );
    assert_eq!(perms.decide(&bash("npm test"), &ctx).map(|d| d.0), None);
    assert_eq!(
        perms.decide(&bash("git push"), &ctx).map(|d| d.0),
        Some(Decision::Ask)
    );
    let env = world.project.join(".env");
    assert_eq!(
        perms
            .decide(&ToolCall::new("read_file").path(&env), &ctx)
            .map(|d| d.0),
        Some(Decision::Deny)
    );
    // A mode wider than default from the project is ignored too.
    assert_eq!(perms.default_mode, None);
    assert_eq!(
        settings
            .hooks
            .for_event(&HookEvent::PreToolUse, Some("bash"))
            .len(),
        1
    );
    let ignored: Vec<(&str, &str, Scope)> = settings
        .ignored
        .iter()
        .map(|i| (i.key.as_str(), i.value.as_str(), i.scope))
        .collect();
    assert_eq!(
        ignored,
        [
            ("permissions.allow", "Edit", Scope::ProjectLocal),
            ("permissions.allow", "Write", Scope::ProjectLocal),
            ("permissions.allow", "Bash(npm test)", Scope::Project),
            (
                "permissions.defaultMode",
                "bypassPermissions",
                Scope::Project
            ),
        ]
    );
    let project = world.project.display().to_string();
    let claude = world.home.join(".claude.json").display().to_string();
    assert_eq!(
        settings.warnings,
        [
            format!(
                "Ignoring 2 permissions.allow entries from .subagents/settings.local.json: this workspace has not been trusted. Run `subagent trust` in {project} to trust it (recorded in ~/.subagents/trusted-projects.json), or set projects[{project:?}].hasTrustDialogAccepted: true in {claude}."
            ),
            format!(
                "Ignoring 1 permissions.allow entry from .claude/settings.json: this workspace has not been trusted. Run `subagent trust` in {project} to trust it (recorded in ~/.subagents/trusted-projects.json), or set projects[{project:?}].hasTrustDialogAccepted: true in {claude}."
            ),
            format!(
                "Ignoring 1 permissions.defaultMode entry from .claude/settings.json: this workspace has not been trusted. Run `subagent trust` in {project} to trust it (recorded in ~/.subagents/trusted-projects.json), or set projects[{project:?}].hasTrustDialogAccepted: true in {claude}."
            ),
        ]
    );
}

#[test]
fn trusted_by_claude_json_the_project_allow_counts() {
    let world = World::new();
    project_files(&world);
    world.claude_trusts(&world.project, true);
    let settings = world.load();
    assert_eq!(
        settings.trust,
        TrustState {
            trusted: true,
            by: Some(format!(
                "~/.claude.json projects[{:?}].hasTrustDialogAccepted",
                world.project.display().to_string()
            )),
            warnings: Vec::new(),
        }
    );
    assert_eq!(settings.ignored, []);
    assert_eq!(settings.warnings, Vec::<String>::new());
    let allow: Vec<String> = settings
        .permissions
        .allow
        .iter()
        .map(|r| r.value.to_string())
        .collect();
    assert_eq!(
        allow,
        ["Edit", "Write", "Bash(npm test)", "Bash(mkdir made)"]
    );
    let mode = settings.permissions.default_mode.unwrap();
    assert_eq!(mode.value, PermissionMode::BypassPermissions);
}

#[test]
fn trust_of_an_ancestor_counts_and_a_refused_dialog_does_not() {
    let world = World::new();
    let parent = world.project.parent().unwrap().to_path_buf();
    world.claude_trusts(&parent, true);
    assert!(Trust::check(&world.project, &world.home).trusted);
    world.claude_trusts(&parent, false);
    assert!(!Trust::check(&world.project, &world.home).trusted);
    // Trust of a child says nothing about its parent.
    world.claude_trusts(&world.project, true);
    assert!(!Trust::check(&parent, &world.home).trusted);
}

#[test]
fn our_record_round_trips() {
    let world = World::new();
    let record = Trust::record_path(&world.home);
    assert!(!Trust::check(&world.project, &world.home).trusted);
    assert!(Trust::record(&world.project, &world.home).unwrap());
    assert!(
        !Trust::record(&world.project, &world.home).unwrap(),
        "already listed"
    );
    let listed: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(listed, [world.project.display().to_string()]);
    let state = Trust::check(&world.project, &world.home);
    assert_eq!(
        (state.trusted, state.by),
        (
            true,
            Some(format!(
                "~/.subagents/trusted-projects.json {:?}",
                world.project.display().to_string()
            ))
        )
    );
    // A subdirectory of a recorded project is trusted too.
    assert!(Trust::check(&world.project.join("sub"), &world.home).trusted);
    assert!(Trust::revoke(&world.project, &world.home).unwrap());
    assert!(
        !Trust::revoke(&world.project, &world.home).unwrap(),
        "no longer listed"
    );
    assert!(!Trust::check(&world.project, &world.home).trusted);
    let listed: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(listed, Vec::<String>::new());
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(record.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["trusted-projects.json"]);
}

#[test]
fn a_malformed_record_is_an_error_to_write_and_untrusted_to_read() {
    let world = World::new();
    let record = Trust::record_path(&world.home);
    world.write_text(&record, "{\"not\": \"a list\"}");
    let error = Trust::record(&world.project, &world.home).unwrap_err();
    assert_eq!(error.code(), "TRUST_WRITE_FAILED");
    assert_eq!(
        error.to_string(),
        format!(
            "recording trust in {}: must be a JSON array of absolute paths",
            record.display()
        )
    );
    let state = Trust::check(&world.project, &world.home);
    assert!(!state.trusted);
    assert_eq!(
        state.warnings,
        [format!(
            "{}: must be a JSON array of absolute paths",
            record.display()
        )]
    );
}
