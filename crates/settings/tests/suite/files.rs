//! One settings file: what is honoured, what is kept, what is an error.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_settings::{EffectiveSettings, FlagSettings, PermissionMode, Scope, SettingsFile};

use super::support::World;

#[test]
fn the_keys_honoured_are_read_and_the_rest_kept() {
    let text = r#"{
        "model": "opus",
        "statusLine": {"type": "command", "command": "x"},
        "permissions": {
            "allow": ["Bash(npm run test:*)", "Read"],
            "ask": ["Bash(git push:*)"],
            "deny": ["Read(./.env)"],
            "defaultMode": "acceptEdits",
            "additionalDirectories": ["../docs"],
            "disableBypassPermissionsMode": "disable"
        },
        "env": {"FOO": "bar"}
    }"#;
    let file =
        SettingsFile::parse(text, Path::new("/p/.claude/settings.json"), Scope::Project).unwrap();
    let texts = |rules: &[subagent_settings::Rule]| -> Vec<String> {
        rules.iter().map(ToString::to_string).collect()
    };
    assert_eq!(texts(&file.allow), ["Bash(npm run test:*)", "Read"]);
    assert_eq!(texts(&file.ask), ["Bash(git push:*)"]);
    assert_eq!(texts(&file.deny), ["Read(./.env)"]);
    assert_eq!(file.default_mode, Some(PermissionMode::AcceptEdits));
    assert_eq!(file.additional_directories, ["../docs"]);
    assert_eq!(file.env.get("FOO").map(String::as_str), Some("bar"));
    let other: Vec<&str> = file.other.keys().map(String::as_str).collect();
    assert_eq!(other, ["model", "statusLine"]);
    assert_eq!(
        file.other_permissions.get("disableBypassPermissionsMode"),
        Some(&json!("disable"))
    );
}

#[test]
fn text_that_is_not_json_names_file_line_and_column() {
    let world = World::new();
    let path = world.write_text(
        &world.project.join(".claude/settings.json"),
        "{\n  \"permissions\": {\n    \"allow\": [\"Bash\",,]\n  }\n}\n",
    );
    let error =
        EffectiveSettings::load(&world.locations(), FlagSettings::default(), None).unwrap_err();
    assert_eq!(error.code(), "SETTINGS_INVALID");
    assert_eq!(
        error.to_string(),
        format!("{}:3:22: expected value", path.display())
    );
}

#[test]
fn a_known_key_of_the_wrong_type_names_file_and_key() {
    let path = Path::new("/p/.claude/settings.json");
    let cases = [
        (
            r#"{"permissions": {"allow": "Bash"}}"#,
            "permissions.allow: must be an array of rule strings",
        ),
        (
            r#"{"permissions": {"deny": [1]}}"#,
            "permissions.deny: must be an array of rule strings",
        ),
        (r#"{"permissions": []}"#, "permissions: must be an object"),
        (
            r#"{"permissions": {"defaultMode": "yolo"}}"#,
            "permissions.defaultMode: must be one of default, acceptEdits, plan, dontAsk, bypassPermissions",
        ),
        (r#"{"env": {"A": 1}}"#, "env.A: must be a string"),
        (r#"{"env": []}"#, "env: must be an object of strings"),
        (r#"["x"]"#, "(top level): must be a JSON object"),
        (r#"{"hooks": []}"#, "hooks: must be an object of events"),
        (
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}}"#,
            "hooks.Stop[0].hooks[0].timeout: must be a positive number of seconds",
        ),
    ];
    for (text, message) in cases {
        let error = SettingsFile::parse(text, path, Scope::Project).unwrap_err();
        assert_eq!(
            (error.code(), error.to_string()),
            (
                "SETTINGS_INVALID",
                format!("/p/.claude/settings.json: {message}")
            ),
            "{text}"
        );
    }
}

#[test]
fn a_rule_that_does_not_parse_is_an_error_naming_where() {
    let error = SettingsFile::parse(
        r#"{"permissions": {"allow": ["Read", "Bash(npm run"]}}"#,
        Path::new("/p/s.json"),
        Scope::User,
    )
    .unwrap_err();
    assert_eq!(error.code(), "PERMISSION_RULE_INVALID");
    assert_eq!(
        error.to_string(),
        "/p/s.json: permissions.allow[1]: permission rule \"Bash(npm run\": unbalanced parentheses: the rule must end with `)`"
    );
}

#[test]
fn missing_files_are_absent_and_an_empty_file_is_empty() {
    let world = World::new();
    let settings = world.load();
    assert_eq!(settings.files.len(), 7);
    assert!(settings.files.iter().all(|f| !f.found));
    assert!(settings.permissions.allow.is_empty() && settings.hooks.is_empty());
    world.write_text(&world.home.join(".claude/settings.json"), "  \n");
    let settings = world.load();
    assert_eq!(settings.files.iter().filter(|f| f.found).count(), 1);
}

#[test]
fn a_file_that_cannot_be_read_is_an_error() {
    let world = World::new();
    let path = world.project.join(".claude/settings.json");
    std::fs::create_dir_all(&path).unwrap();
    let error =
        EffectiveSettings::load(&world.locations(), FlagSettings::default(), None).unwrap_err();
    assert_eq!(error.code(), "SETTINGS_UNREADABLE");
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}: a directory", path.display())),
        "{error}"
    );
}

#[test]
fn the_settings_flag_takes_a_file_or_json() {
    let world = World::new();
    world.write(&world.project.join("ci.json"), &json!({"env": {"CI": "1"}}));
    let flags = FlagSettings {
        settings: Some("ci.json".into()),
        ..FlagSettings::default()
    };
    let settings = EffectiveSettings::load(&world.locations(), flags, None).unwrap();
    let ci = &settings.env["CI"];
    assert_eq!(
        (ci.value.as_str(), ci.scope, ci.file.clone()),
        ("1", Scope::Flags, Some(world.project.join("ci.json")))
    );
    let flags = FlagSettings {
        settings: Some("{\"env\": ".into()),
        ..FlagSettings::default()
    };
    let error = EffectiveSettings::load(&world.locations(), flags, None).unwrap_err();
    assert_eq!(
        (error.code(), error.to_string()),
        (
            "SETTINGS_INVALID",
            "--settings:1:8: EOF while parsing a value".to_owned()
        )
    );
    let flags = FlagSettings {
        settings: Some("missing.json".into()),
        ..FlagSettings::default()
    };
    let error = EffectiveSettings::load(&world.locations(), flags, None).unwrap_err();
    assert_eq!(error.code(), "SETTINGS_UNREADABLE");
}

#[test]
fn bad_flags_are_errors() {
    let world = World::new();
    let flags = FlagSettings {
        permission_mode: Some("yolo".into()),
        ..FlagSettings::default()
    };
    let error = EffectiveSettings::load(&world.locations(), flags, None).unwrap_err();
    assert_eq!(error.code(), "SETTINGS_INVALID");
    let flags = FlagSettings {
        allowed_tools: vec!["Bash(".into()],
        ..FlagSettings::default()
    };
    let error = EffectiveSettings::load(&world.locations(), flags, None).unwrap_err();
    assert_eq!(
        (error.code(), error.to_string()),
        (
            "PERMISSION_RULE_INVALID",
            "--allowedTools: permission rule \"Bash(\": unbalanced parentheses: the rule must end with `)`".to_owned()
        )
    );
    assert_eq!(
        FlagSettings::split_tools("Bash(npm run test:*) Edit,Read , mcp__s__t"),
        ["Bash(npm run test:*)", "Edit", "Read", "mcp__s__t"]
    );
}

#[test]
fn a_preset_settings_value_is_a_source() {
    let world = World::new();
    let preset = json!({"permissions": {"deny": ["Bash(rm *)"]}, "env": {"P": "1"}});
    let settings =
        EffectiveSettings::load(&world.locations(), FlagSettings::default(), Some(&preset))
            .unwrap();
    assert_eq!(settings.permissions.deny[0].scope, Scope::Preset);
    assert_eq!(settings.env["P"].scope, Scope::Preset);
    let bad = json!({"permissions": {"allow": "x"}});
    let error = EffectiveSettings::load(&world.locations(), FlagSettings::default(), Some(&bad))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "preset settings: permissions.allow: must be an array of rule strings"
    );
}
