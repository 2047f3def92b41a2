//! `--agents '<json>'`: definitions on the command line, as Claude Code's flag takes them.

use pretty_assertions::assert_eq;
use subagent_catalog::{Catalog, CatalogConfig, Origin, Source, WarningKind, parse_agents_json};
use subagent_core::agents::AgentDirectory;
use subagent_core::{PermissionMode, ToolFilter};

use super::support::{agent, write};

/// Claude Code's documented example, word for word.
const CLAUDE_EXAMPLE: &str = r#"{
  "code-reviewer": {
    "description": "Expert code reviewer. Use proactively after code changes.",
    "prompt": "You are a senior code reviewer. Focus on code quality, security, and best practices.",
    "tools": ["Read", "Grep", "Glob", "Bash"],
    "model": "sonnet"
  }
}"#;

#[test]
fn claude_codes_example_is_one_definition_from_the_option() {
    let parsed = parse_agents_json("--agents", CLAUDE_EXAMPLE, Source::Flag).unwrap();
    assert_eq!(parsed.len(), 1);
    let d = &parsed[0].definition;
    assert_eq!(parsed[0].warnings, []);
    assert_eq!(d.name, "code-reviewer");
    assert_eq!(
        d.description,
        "Expert code reviewer. Use proactively after code changes."
    );
    assert_eq!(
        d.prompt,
        "You are a senior code reviewer. Focus on code quality, security, and best practices."
    );
    assert_eq!(
        d.tools.as_deref(),
        Some(&["Read", "Grep", "Glob", "Bash"].map(String::from)[..])
    );
    assert_eq!(d.model.as_deref(), Some("sonnet"));
    assert_eq!(d.source, Source::Flag);
    assert_eq!(d.origin, Origin::CommandLine("--agents".into()));
    assert_eq!(d.origin.to_string(), "--agents");
}

#[test]
fn every_frontmatter_field_in_either_spelling_and_warnings_for_the_rest() {
    let parsed = parse_agents_json(
        "--agents",
        r#"{"a": {"description": "A.", "prompt": "Be A.", "disallowedTools": "Bash",
                  "max_turns": 3, "permissionMode": "plan", "effort": "low", "provider": "spawn",
                  "memory": "local", "tempreature": 1},
            "b": {"prompt": "Be B.", "name": "b"}}"#,
        Source::Flag,
    )
    .unwrap();
    let a = &parsed[0].definition;
    assert_eq!(a.max_turns, Some(3));
    assert_eq!(a.permission_mode, Some(PermissionMode::Plan));
    assert_eq!(a.provider.as_deref(), Some("spawn"));
    assert_eq!(a.memory, Some(subagent_core::memory::MemoryScope::Local));
    assert_eq!(
        a.tool_filter(),
        Some(ToolFilter {
            allow: None,
            deny: vec!["Bash".into(), "bash".into()],
        })
    );
    let shown = |i: usize| -> Vec<(WarningKind, String)> {
        parsed[i]
            .warnings
            .iter()
            .map(|w| (w.kind, w.to_string()))
            .collect()
    };
    assert_eq!(
        shown(0),
        [(
            WarningKind::UnknownField,
            "--agents: agent `a`: unknown field `tempreature` ignored".to_owned()
        )]
    );
    assert_eq!(
        shown(1),
        [(
            WarningKind::MissingDescription,
            "--agents: agent `b`: no `description`: the model is not told when to use it"
                .to_owned()
        )]
    );
}

#[test]
fn a_bad_value_or_shape_refuses_the_option_naming_the_agent() {
    let refused = |text: &str| {
        parse_agents_json("--agents", text, Source::Flag)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused(r#"{"a": {"maxTurns": "many"}}"#),
        "--agents: agent `a`: `maxTurns`: expected a whole number from 1 to 4294967295, found \"many\""
    );
    assert_eq!(
        refused(r#"{"a": {"memory": "team"}}"#),
        "--agents: agent `a`: `memory`: unknown memory scope \"team\"; expected user, project or local"
    );
    assert_eq!(
        refused(r#"["a"]"#),
        r#"--agents: expected a JSON object of agent names, e.g. '{"reviewer": {"description": "Reviews code", "prompt": "You review code."}}'"#
    );
    assert!(refused("{oops").starts_with("--agents: not JSON: "));
    assert_eq!(
        refused(r#"{"a b": {}}"#),
        "--agents: agent `a b`: agent name `a b` contains ' '; use letters, digits, `-`, `_`, `.` or `:`"
    );
    assert_eq!(
        refused(r#"{"a": {"name": "b"}}"#),
        "--agents: agent `a`: `name` is \"b\", but the agent's name is its key"
    );
    assert_eq!(
        refused(r#"{"a": "text"}"#),
        "--agents: agent `a`: expected an object of fields (description, prompt, tools, model, …)"
    );
}

#[test]
fn they_override_the_files_and_say_where_they_came_from() {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    write(&project, "explore.md", &agent("explore", "The project's."));
    let parsed = parse_agents_json(
        "--agents",
        r#"{"explore": {"description": "Mine.", "prompt": "Explore my way.", "tempreature": 1}}"#,
        Source::Flag,
    )
    .unwrap();
    let catalog = Catalog::load(
        CatalogConfig::new()
            .dir(Source::Project, &project)
            .parsed(parsed),
    );
    let explore = catalog.get("explore").unwrap();
    assert_eq!(explore.description, "Mine.");
    assert_eq!(explore.source, "--agents");
    let entry = catalog
        .entries()
        .into_iter()
        .find(|e| e.definition.name == "explore")
        .unwrap();
    assert_eq!(
        entry
            .overridden
            .iter()
            .map(|d| d.source)
            .collect::<Vec<_>>(),
        [Source::Project, Source::Builtin]
    );
    // The option's warnings are the catalog's.
    assert_eq!(
        catalog
            .warnings()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["--agents: agent `explore`: unknown field `tempreature` ignored"]
    );
}
