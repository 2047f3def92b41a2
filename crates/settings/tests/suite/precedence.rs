//! Which source wins: every scope and twin in order, lists combined, deny over allow.

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_settings::{
    Decision, EffectiveSettings, FlagSettings, Locations, MatchContext, PermissionMode, Scope,
    ToolCall,
};

use super::support::World;

#[test]
fn files_are_listed_in_precedence_order_twins_first() {
    let world = World::new();
    let (p, h) = (&world.project, &world.home);
    assert_eq!(
        world.locations().files(),
        vec![
            (Scope::Managed, world.managed()),
            (
                Scope::ProjectLocal,
                p.join(".subagents/settings.local.json")
            ),
            (Scope::ProjectLocal, p.join(".claude/settings.local.json")),
            (Scope::Project, p.join(".subagents/settings.json")),
            (Scope::Project, p.join(".claude/settings.json")),
            (Scope::User, h.join(".subagents/settings.json")),
            (Scope::User, h.join(".claude/settings.json")),
        ]
    );
    let defaults = Locations::new(p.clone(), None);
    assert_eq!(
        defaults.files()[0],
        (
            Scope::Managed,
            PathBuf::from("/etc/claude-code/managed-settings.json")
        )
    );
    assert_eq!(defaults.files().len(), 5, "no home: no user files");
    assert_eq!(
        world.locations().show(&h.join(".claude/settings.json")),
        "~/.claude/settings.json"
    );
    assert_eq!(
        world.locations().show(&p.join(".claude/settings.json")),
        ".claude/settings.json"
    );
    let names: Vec<String> = Scope::ALL.iter().map(ToString::to_string).collect();
    assert_eq!(
        names,
        [
            "managed",
            "flags",
            "preset",
            "project-local",
            "project",
            "user",
            "agent"
        ]
    );
}

/// Nine sources, highest first; source `i` sets `K0`…`Ki`, so `Kj` must come from source `j`.
#[test]
fn every_scope_and_twin_in_order() {
    let world = World::new();
    world.claude_trusts(&world.project, true);
    let env = |i: usize, name: &str| -> Value {
        let map: serde_json::Map<String, Value> =
            (0..=i).map(|j| (format!("K{j}"), json!(name))).collect();
        json!({ "env": map })
    };
    let (p, h) = (&world.project, &world.home);
    let files: Vec<(usize, &str, PathBuf)> = vec![
        (0, "managed", world.managed()),
        (
            3,
            "subagents-local",
            p.join(".subagents/settings.local.json"),
        ),
        (4, "claude-local", p.join(".claude/settings.local.json")),
        (5, "subagents-project", p.join(".subagents/settings.json")),
        (6, "claude-project", p.join(".claude/settings.json")),
        (7, "subagents-user", h.join(".subagents/settings.json")),
        (8, "claude-user", h.join(".claude/settings.json")),
    ];
    for (i, name, path) in &files {
        world.write(path, &env(*i, name));
    }
    let flags = FlagSettings {
        settings: Some(env(1, "flags").to_string()),
        ..FlagSettings::default()
    };
    let preset = env(2, "preset");
    let settings = EffectiveSettings::load(&world.locations(), flags, Some(&preset)).unwrap();
    let got: Vec<(String, String, Scope, Option<PathBuf>)> = settings
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.value.clone(), v.scope, v.file.clone()))
        .collect();
    let mut expected = vec![
        ("K1".to_owned(), "flags".to_owned(), Scope::Flags, None),
        ("K2".to_owned(), "preset".to_owned(), Scope::Preset, None),
    ];
    for (i, name, path) in &files {
        let scope = match i {
            0 => Scope::Managed,
            3 | 4 => Scope::ProjectLocal,
            5 | 6 => Scope::Project,
            _ => Scope::User,
        };
        expected.push((
            format!("K{i}"),
            (*name).to_owned(),
            scope,
            Some(path.clone()),
        ));
    }
    expected.sort();
    assert_eq!(got, expected);
    assert!(
        settings.files.iter().all(|f| f.found),
        "{:?}",
        settings.files
    );
}

#[test]
fn the_mode_comes_from_the_highest_scope_that_sets_one() {
    let world = World::new();
    let user = world.home.join(".claude/settings.json");
    world.write(&user, &json!({"permissions": {"defaultMode": "plan"}}));
    let project = world.project.join(".claude/settings.json");
    world.write(
        &project,
        &json!({"permissions": {"defaultMode": "dontAsk"}}),
    );
    let mode = world.load().permissions.default_mode.unwrap();
    assert_eq!(
        (mode.value, mode.scope, mode.file),
        (PermissionMode::DontAsk, Scope::Project, Some(project))
    );
    let flags = FlagSettings {
        permission_mode: Some("acceptEdits".into()),
        ..FlagSettings::default()
    };
    let settings = EffectiveSettings::load(&world.locations(), flags, None).unwrap();
    let mode = settings.permissions.default_mode.unwrap();
    assert_eq!(
        (mode.value, mode.scope),
        (PermissionMode::AcceptEdits, Scope::Flags)
    );
}

#[test]
fn lists_combine_over_scopes_and_deny_beats_allow_across_them() {
    let world = World::new();
    world.claude_trusts(&world.project, true);
    let user = world.home.join(".claude/settings.json");
    world.write(
        &user,
        &json!({"permissions": {"allow": ["Bash(git *)"], "deny": ["Bash(curl *)"],
                "additionalDirectories": ["../shared"]}}),
    );
    let project = world.project.join(".claude/settings.json");
    world.write(
        &project,
        &json!({"permissions": {"deny": ["Bash(git push *)"], "ask": ["Bash(git commit *)"],
                "allow": ["Bash(curl example.com)"], "additionalDirectories": ["/data"]}}),
    );
    let managed = world.managed();
    world.write(
        &managed,
        &json!({"permissions": {"allow": ["Bash(git push --dry-run)"]}}),
    );
    let settings = world.load();
    let ctx = MatchContext {
        cwd: &world.project,
        project_root: &world.project,
        home: Some(&world.home),
    };
    let decide = |command: &str| {
        settings
            .permissions
            .decide(&ToolCall::new("Bash").command(command), &ctx)
            .map(|(decision, rule)| (decision, rule.value.to_string(), rule.scope))
    };
    assert_eq!(
        decide("git status"),
        Some((Decision::Allow, "Bash(git *)".into(), Scope::User))
    );
    // A managed allow does not beat a project deny: deny > ask > allow over all sources.
    assert_eq!(
        decide("git push --dry-run"),
        Some((Decision::Deny, "Bash(git push *)".into(), Scope::Project))
    );
    assert_eq!(
        decide("git commit -m x"),
        Some((Decision::Ask, "Bash(git commit *)".into(), Scope::Project))
    );
    // The project's allow does not beat the user's deny either.
    assert_eq!(
        decide("curl example.com"),
        Some((Decision::Deny, "Bash(curl *)".into(), Scope::User))
    );
    assert_eq!(decide("rm -rf /"), None);
    let allow: Vec<(String, Scope)> = settings
        .permissions
        .allow
        .iter()
        .map(|r| (r.value.to_string(), r.scope))
        .collect();
    assert_eq!(
        allow,
        [
            ("Bash(git push --dry-run)".to_owned(), Scope::Managed),
            ("Bash(curl example.com)".to_owned(), Scope::Project),
            ("Bash(git *)".to_owned(), Scope::User),
        ]
    );
    let dirs: Vec<&str> = settings
        .permissions
        .additional_directories
        .iter()
        .map(|d| d.value.as_str())
        .collect();
    assert_eq!(dirs, ["/data", "../shared"]);
}

#[test]
fn flags_add_rules_as_claude_takes_them() {
    let world = World::new();
    let flags = FlagSettings {
        allowed_tools: vec!["Bash(npm run test:*) Edit,Read".into()],
        disallowed_tools: vec!["WebFetch".into()],
        ..FlagSettings::default()
    };
    let settings = EffectiveSettings::load(&world.locations(), flags, None).unwrap();
    let texts = |rules: &[subagent_settings::SourcedRule]| -> Vec<(String, Scope)> {
        rules
            .iter()
            .map(|r| (r.value.to_string(), r.scope))
            .collect()
    };
    assert_eq!(
        texts(&settings.permissions.allow),
        [
            ("Bash(npm run test:*)".to_owned(), Scope::Flags),
            ("Edit".to_owned(), Scope::Flags),
            ("Read".to_owned(), Scope::Flags),
        ]
    );
    assert_eq!(
        texts(&settings.permissions.deny),
        [("WebFetch".to_owned(), Scope::Flags)]
    );
    assert!(settings.permissions.denies_tool("web_fetch"));
    assert!(!settings.permissions.denies_tool("bash"));
}
