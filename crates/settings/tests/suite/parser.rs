//! The rule parser under generated input.

use std::path::Path;

use proptest::prelude::*;
use subagent_settings::{MatchContext, Rule, ToolCall};

fn ctx() -> MatchContext<'static> {
    MatchContext {
        cwd: Path::new("/w/p"),
        project_root: Path::new("/w/p"),
        home: Some(Path::new("/h")),
    }
}

proptest! {
    /// Any text parses or is refused with the rule code; never a panic.
    #[test]
    fn any_text_parses_or_is_refused(text in "\\PC{0,40}") {
        match Rule::parse(&text) {
            Ok(rule) => prop_assert_eq!(rule.to_string(), text.trim()),
            Err(error) => prop_assert_eq!(error.code(), "PERMISSION_RULE_INVALID"),
        }
    }

    /// Text made of the syntax's own characters, where the edge cases are.
    #[test]
    fn syntax_soup_parses_or_is_refused(text in "[A-Za-z_():*/.~ -]{0,24}") {
        if let Ok(rule) = Rule::parse(&text) {
            let call = ToolCall::new(rule.tool()).command("x").path(Path::new("/w/p/x"));
            let _ = rule.matches(&call, &ctx());
            let _ = rule.catches(&call, &ctx());
        }
    }

    /// Well-formed rules always parse and keep their text.
    #[test]
    fn well_formed_rules_parse(tool in "[A-Z][A-Za-z]{0,9}", spec in "[a-z0-9 ._*-]{0,12}[a-z0-9]") {
        prop_assume!(tool != "WebFetch");
        let text = format!("{tool}({spec})");
        let rule = Rule::parse(&text).unwrap();
        prop_assert_eq!(rule.to_string(), text);
        prop_assert!(!rule.is_bare());
    }

    /// A prefix allow rule never covers a command line that adds an operator it does not spell.
    #[test]
    fn chained_commands_are_never_allowed(
        prefix in "[a-z]{1,6}( [a-z]{1,6})?",
        op in prop::sample::select(vec![";", "&&", "||", "|", "`", "$(", ">", "<", "\n", "&"]),
        tail in "[a-z ]{0,10}",
    ) {
        let rule = Rule::parse(&format!("Bash({prefix}:*)")).unwrap();
        let command = format!("{prefix} {op}{tail}");
        prop_assert!(!rule.matches(&ToolCall::new("Bash").command(&command), &ctx()));
        prop_assert!(rule.matches(&ToolCall::new("Bash").command(&prefix), &ctx()));
    }

    /// `..` in a call's path never takes it out of an allowed directory.
    #[test]
    fn dot_dot_never_escapes(ups in 1usize..5, name in "[a-z]{1,8}") {
        let rule = Rule::parse("Edit(src/**)").unwrap();
        let spelled = format!("src/{}{name}", "../".repeat(ups));
        let call = ToolCall::new("Edit").path(Path::new(&spelled));
        prop_assert!(!rule.matches(&call, &ctx()), "{}", spelled);
    }
}

/// A JSON value built from settings-like pieces: known keys with values of any shape.
fn settings_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{Value, json};
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5i64..100).prop_map(Value::from),
        prop::sample::select(vec![
            "Bash",
            "Bash(git *)",
            "Read(./.env)",
            "Bash(",
            "WebFetch(x)",
            "acceptEdits",
            "yolo",
            "*",
            "Edit|Write",
            "(",
            "command",
            "PreToolUse",
            "Stop",
            "x",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        let key = prop::sample::select(vec![
            "permissions",
            "allow",
            "ask",
            "deny",
            "defaultMode",
            "additionalDirectories",
            "hooks",
            "env",
            "matcher",
            "type",
            "command",
            "timeout",
            "PreToolUse",
            "Stop",
            "model",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec((key, inner), 0..4).prop_map(|pairs| {
                let map: serde_json::Map<String, Value> =
                    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
                json!(map)
            }),
        ]
    })
}

proptest! {
    /// Any settings-shaped JSON loads or is refused with one of the settings codes.
    #[test]
    fn any_settings_value_loads_or_is_refused(value in settings_value()) {
        let text = value.to_string();
        match subagent_settings::SettingsFile::parse(&text, Path::new("/p/s.json"), subagent_settings::Scope::Project) {
            Ok(_) => {}
            Err(error) => prop_assert!(
                ["SETTINGS_INVALID", "PERMISSION_RULE_INVALID", "HOOK_MATCHER_INVALID"].contains(&error.code()),
                "{error}"
            ),
        }
    }

    /// Any text, too (cut settings files, garbage).
    #[test]
    fn any_text_loads_or_is_refused(text in "[{}\\[\\]\":, a-zA-Z0-9*|()]{0,60}") {
        if let Err(error) = subagent_settings::SettingsFile::parse(&text, Path::new("/p/s.json"), subagent_settings::Scope::User) {
            prop_assert!(error.to_string().starts_with("/p/s.json"), "{error}");
        }
    }
}
