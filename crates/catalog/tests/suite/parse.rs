//! One file → a definition or an error naming `path:line:column`.

use std::path::Path;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use subagent_catalog::{
    Error, Isolation, Origin, Source, WarningKind, load_file, parse_definition, split_tool_list,
};
use subagent_core::mcp::AgentMcpServer;
use subagent_core::memory::MemoryScope;
use subagent_core::{Capability, Effort, PermissionMode, ToolFilter};

fn parse(text: &str) -> Result<subagent_catalog::Parsed, Error> {
    parse_definition(Path::new("agents/reviewer.md"), text, Source::Project)
}

#[test]
fn every_claude_code_field_and_ours() {
    let text = "---
name: code-reviewer
description: Reviews diffs. Use after every change.
tools: Read, Grep, Glob
disallowedTools: [Bash, write_file]
model: sonnet
maxTurns: 12
permissionMode: acceptEdits
background: true
isolation: worktree
color: blue
initialPrompt: Start with git diff.
skills: [review, style]
mcpServers:
  - github: {command: gh-mcp}
effort: high
memory: project
hooks:
  Stop: []
provider: claude-code
persona: Be terse.
---

You review code.

Point at lines.
";
    let parsed = parse(text).unwrap();
    // Read, kept, and reported: the fields no provider acts on yet (`skills`, line 13,
    // `mcpServers`, line 14, and `memory`, line 17, are honoured).
    assert_eq!(
        parsed
            .warnings
            .iter()
            .map(|w| (w.kind, w.location.line))
            .collect::<Vec<_>>(),
        vec![
            (WarningKind::UnsupportedField, Some(12)),
            (WarningKind::UnsupportedField, Some(18)),
        ]
    );
    let d = parsed.definition;
    assert_eq!(d.name, "code-reviewer");
    assert_eq!(d.description, "Reviews diffs. Use after every change.");
    assert_eq!(d.prompt, "You review code.\n\nPoint at lines.");
    assert_eq!(
        d.tools,
        Some(vec!["Read".into(), "Grep".into(), "Glob".into()])
    );
    assert_eq!(d.disallowed_tools, vec!["Bash", "write_file"]);
    assert_eq!(d.model.as_deref(), Some("sonnet"));
    assert_eq!(d.max_turns, Some(12));
    assert_eq!(d.permission_mode, Some(PermissionMode::AcceptEdits));
    assert!(d.background);
    assert_eq!(d.isolation, Some(Isolation::Worktree));
    assert_eq!(d.color.as_deref(), Some("blue"));
    assert_eq!(d.initial_prompt.as_deref(), Some("Start with git diff."));
    assert_eq!(d.skills, vec!["review", "style"]);
    assert_eq!(
        d.mcp_servers,
        vec![AgentMcpServer::Defined(
            serde_json::json!({"github": {"command": "gh-mcp"}})
                .as_object()
                .unwrap()
                .clone()
        )]
    );
    assert_eq!(d.effort, Some(Effort::High));
    assert_eq!(d.memory, Some(MemoryScope::Project));
    assert_eq!(d.hooks, Some(serde_json::json!({"Stop": []})));
    assert_eq!(d.provider.as_deref(), Some("claude-code"));
    assert_eq!(d.persona.as_deref(), Some("Be terse."));
    assert_eq!(d.source, Source::Project);
    assert_eq!(d.origin, Origin::File("agents/reviewer.md".into()));
    assert_eq!(
        d.field_location("maxTurns"),
        Some(subagent_catalog::Location::at(7, 1))
    );

    // What the delegation tool gets.
    let profile = d.profile();
    assert_eq!(profile.name, "code-reviewer");
    assert_eq!(profile.isolation.as_deref(), Some("worktree"));
    assert_eq!(
        profile.instructions.as_deref(),
        Some("You review code.\n\nPoint at lines.\n\nBe terse.")
    );
    assert_eq!(
        profile.tool_filter,
        Some(ToolFilter {
            allow: Some(vec![
                "Read".into(),
                "read_file".into(),
                "Grep".into(),
                "grep".into(),
                "Glob".into(),
                "glob".into(),
                // `memory:` keeps the tools that reach it.
                "Write".into(),
                "write_file".into(),
                "Edit".into(),
                "edit_file".into()
            ]),
            deny: vec![
                "Bash".into(),
                "bash".into(),
                "write_file".into(),
                "Write".into()
            ],
        })
    );
    assert_eq!(profile.model.as_deref(), Some("sonnet"));
    assert_eq!(profile.effort, Some(Effort::High));
    assert_eq!(profile.max_turns, Some(12));
    assert_eq!(profile.permission_mode, Some(PermissionMode::AcceptEdits));
    assert_eq!(profile.provider.as_deref(), Some("claude-code"));
    assert!(profile.background);
    assert_eq!(profile.source, "agents/reviewer.md");
}

#[test]
fn field_shapes() {
    type Check = fn(&subagent_catalog::Definition);
    let cases: Vec<(&str, &str, Check)> = vec![
        ("tools as a comma string", "tools: ls, read_file", |d| {
            assert_eq!(d.tools, Some(vec!["ls".into(), "read_file".into()]));
        }),
        ("tools as a list", "tools: [ls, read_file]", |d| {
            assert_eq!(d.tools, Some(vec!["ls".into(), "read_file".into()]));
        }),
        (
            "tools as a block list",
            "tools:\n  - ls\n  - read_file",
            |d| {
                assert_eq!(d.tools, Some(vec!["ls".into(), "read_file".into()]));
            },
        ),
        ("an empty tools list means no tools", "tools: []", |d| {
            assert_eq!(d.tools, Some(vec![]));
            assert_eq!(d.profile().tool_filter.unwrap().allow, Some(vec![]));
        }),
        ("null tools means inherit", "tools:", |d| {
            assert_eq!(d.tools, None);
            assert_eq!(d.profile().tool_filter, None);
        }),
        (
            "a Claude Code rule keeps its commas",
            "tools: Bash(git diff:*, git log:*), Read",
            |d| {
                assert_eq!(
                    d.tools,
                    Some(vec!["Bash(git diff:*, git log:*)".into(), "Read".into()])
                );
            },
        ),
        ("model inherit is no model", "model: inherit", |d| {
            assert_eq!(d.model, None);
        }),
        ("model id kept", "model: claude-sonnet-4-5", |d| {
            assert_eq!(d.model.as_deref(), Some("claude-sonnet-4-5"));
        }),
        ("our permission names", "permissionMode: dont-ask", |d| {
            assert_eq!(d.permission_mode, Some(PermissionMode::DontAsk));
        }),
        (
            "Claude Code permission names",
            "permissionMode: bypassPermissions",
            |d| {
                assert_eq!(d.permission_mode, Some(PermissionMode::Bypass));
            },
        ),
        ("maxTurns as a string", "maxTurns: \"5\"", |d| {
            assert_eq!(d.max_turns, Some(5));
        }),
        (
            "snake_case spellings",
            "max_turns: 3\ndisallowed_tools: bash",
            |d| {
                assert_eq!(d.max_turns, Some(3));
                assert_eq!(d.disallowed_tools, vec!["bash"]);
            },
        ),
        ("isolation none", "isolation: none", |d| {
            assert_eq!(d.isolation, None);
        }),
        ("background as yes", "background: \"yes\"", |d| {
            assert!(d.background)
        }),
        (
            "multi-line description",
            "description: |\n  Line one.\n  Line two.",
            |d| {
                assert_eq!(d.description, "Line one.\nLine two.");
            },
        ),
        ("numeric name", "name: 42\ndescription: d", |d| {
            assert_eq!(d.name, "42")
        }),
        ("name from the file stem", "description: x", |d| {
            assert_eq!(d.name, "reviewer");
        }),
    ];
    for (what, fields, check) in cases {
        let text = if fields.starts_with("description") || fields.starts_with("name") {
            format!("---\n{fields}\n---\nbody\n")
        } else {
            format!("---\nname: r\ndescription: d\n{fields}\n---\nbody\n")
        };
        let parsed = parse(&text).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(parsed.warnings, vec![], "{what}");
        check(&parsed.definition);
    }
}

#[test]
fn invalid_files_name_path_line_and_column() {
    for (text, expected) in [
        (
            "# Reviewer\nNo frontmatter.\n",
            "agents/reviewer.md:1: no frontmatter: a definition starts with a `---` line, then \
             YAML fields, then another `---` line",
        ),
        (
            "---\nname: r\n",
            "agents/reviewer.md:1: no frontmatter: a definition starts with a `---` line, then \
             YAML fields, then another `---` line",
        ),
        (
            "---\nname: r\ndescription: [unclosed\n---\nbody\n",
            "agents/reviewer.md:3:14: invalid frontmatter: unclosed bracket '['",
        ),
        (
            "---\nname: r\nname: s\n---\n",
            "agents/reviewer.md:3:1: invalid frontmatter: duplicate mapping key `name` is not \
             allowed here",
        ),
        (
            "---\n- a list\n---\n",
            "agents/reviewer.md:2:1: invalid frontmatter: expected mapping start",
        ),
        (
            "---\nname: r\nmaxTurns: many\n---\n",
            "agents/reviewer.md:3:11: `maxTurns`: expected a whole number from 1 to 4294967295, \
             found \"many\"",
        ),
        (
            "---\nname: r\nmaxTurns: 0\n---\n",
            "agents/reviewer.md:3:11: `maxTurns`: expected a whole number from 1 to 4294967295, \
             found 0",
        ),
        (
            "---\nname: r\n\npermissionMode: yolo\n---\n",
            "agents/reviewer.md:4:17: `permissionMode`: unknown permission mode \"yolo\"; \
             expected one of default, accept-edits, acceptEdits, plan, dont-ask, dontAsk, bypass, \
             bypass-permissions, bypassPermissions",
        ),
        (
            "---\nname: r\ntools: {a: 1}\n---\n",
            "agents/reviewer.md:3:8: `tools`: expected a list or a comma-separated string, \
             found a mapping",
        ),
        (
            "---\nname: r\ntools: [ls, [x]]\n---\n",
            "agents/reviewer.md:3:8: `tools`: expected a list of names, found a list in the list",
        ),
        (
            "---\nname: r\neffort: extreme\n---\n",
            "agents/reviewer.md:3:9: `effort`: unknown effort \"extreme\"; expected one of low, \
             medium, high, xhigh, max",
        ),
        (
            "---\nname: r\nmemory: global\n---\n",
            "agents/reviewer.md:3:9: `memory`: unknown memory scope \"global\"; expected user, \
             project or local",
        ),
        (
            "---\nname: r\nisolation: vm\n---\n",
            "agents/reviewer.md:3:12: `isolation`: unknown isolation \"vm\"; expected worktree \
             or remote",
        ),
        (
            "---\nname: r\nbackground: maybe\n---\n",
            "agents/reviewer.md:3:13: `background`: expected true or false, found \"maybe\"",
        ),
        (
            "---\nname: my agent\n---\n",
            "agents/reviewer.md:2:7: agent name `my agent` contains ' '; use letters, digits, \
             `-`, `_`, `.` or `:`",
        ),
        (
            "---\nmaxTurns: 2\nmax_turns: 3\n---\n",
            "agents/reviewer.md:3:1: field `maxTurns` is given twice (as `max_turns`)",
        ),
    ] {
        let error = parse(text).unwrap_err();
        assert!(matches!(error, Error::Invalid { .. }), "{text:?}");
        assert_eq!(error.to_string(), expected, "{text:?}");
    }
}

#[test]
fn unknown_fields_are_warnings_and_the_file_loads() {
    let parsed = parse(
        "---\nname: r\ndescription: d\ntool: bash\ntemperature: 0.2\ndisallowedTool: bash\n---\n",
    )
    .unwrap();
    assert_eq!(parsed.definition.name, "r");
    assert_eq!(parsed.definition.tools, None);
    let shown: Vec<(WarningKind, String)> = parsed
        .warnings
        .iter()
        .map(|w| (w.kind, w.to_string()))
        .collect();
    assert_eq!(
        shown,
        vec![
            (
                WarningKind::UnknownField,
                "agents/reviewer.md:4:1: unknown field `tool` ignored (did you mean `tools`?)"
                    .to_owned()
            ),
            (
                WarningKind::UnknownField,
                "agents/reviewer.md:5:1: unknown field `temperature` ignored".to_owned()
            ),
            (
                WarningKind::UnknownField,
                "agents/reviewer.md:6:1: unknown field `disallowedTool` ignored (did you mean \
                 `disallowedTools`?)"
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn agent_in_tools_limits_the_agent_types_it_may_start() {
    let types = |tools: &str| {
        parse(&format!(
            "---\nname: r\ndescription: d\ntools: {tools}\n---\n"
        ))
        .unwrap()
        .definition
        .profile()
        .agent_types
    };
    let cases = [
        ("Read, Agent(explore, plan)", Some(vec!["explore", "plan"])),
        (
            "'Task(explore), Agent(plan, explore)'",
            Some(vec!["explore", "plan"]),
        ),
        ("Agent()", Some(vec![])),
        ("Read, Agent", None),
        ("Read", None),
    ];
    for (tools, expected) in cases {
        assert_eq!(
            types(tools),
            expected.map(|names| names.into_iter().map(str::to_owned).collect()),
            "{tools}"
        );
    }
}

/// `mcpServers` as Claude Code writes it (names and single-server mappings) is read without a
/// warning: the named servers are configured elsewhere, the defined ones start for each child.
/// A shape neither Claude Code nor we read refuses the file, saying what is wrong.
#[test]
fn mcp_servers_are_names_and_definitions() {
    let parsed = parse(
        "---\nname: r\ndescription: d\nmcpServers: [github, {x: {command: srv, args: ['${A:-1}']}}]\n---\nbody",
    )
    .unwrap();
    assert_eq!(parsed.warnings.len(), 0, "{:?}", parsed.warnings);
    let d = parsed.definition;
    assert_eq!(d.mcp_servers[0], AgentMcpServer::Named("github".into()));
    assert!(d.defines_servers());
    assert!(d.required_capabilities().contains(&Capability::McpServers));
    assert_eq!(d.profile().mcp_servers, d.mcp_servers);
    let names = parse("---\nname: r\ndescription: d\nmcpServers: [github]\n---\nbody").unwrap();
    assert!(!names.definition.defines_servers());
    assert!(
        !names
            .definition
            .required_capabilities()
            .contains(&Capability::McpServers)
    );
    for (bad, says) in [
        ("[{a: {command: x}, b: {command: y}}]", "exactly one server"),
        (
            "[{a: {args: [x]}}]",
            "server `a`: a server needs a `command`",
        ),
        (
            "[{a__b: {command: x}}]",
            "must not be empty nor contain `__`",
        ),
        ("github", "must be a list"),
    ] {
        let error = parse(&format!(
            "---\nname: r\ndescription: d\nmcpServers: {bad}\n---\nbody"
        ))
        .unwrap_err()
        .to_string();
        assert!(error.contains(says), "{bad}: {error}");
    }
}

#[test]
fn fields_no_provider_honours_are_warnings_where_they_are_written() {
    // `mcpServers` (line 4), `skills` (line 7) and `memory` (line 8) are honoured: no warning.
    let parsed = parse(
        "---\nname: r\ndescription: d\nmcpServers:\n  gh: {command: gh}\nhooks: {Stop: []}\n\
         skills: [a]\nmemory: user\ninitialPrompt: go\neffort: high\nisolation: remote\n\
         color: red\n---\nbody",
    )
    .unwrap();
    let shown: Vec<(WarningKind, String)> = parsed
        .warnings
        .iter()
        .map(|w| (w.kind, w.to_string()))
        .collect();
    let unsupported = |text: &str| (WarningKind::UnsupportedField, text.to_owned());
    assert_eq!(
        shown,
        vec![
            unsupported(
                "agents/reviewer.md:6:1: `hooks` run only where the agent runs in process \
                 (spawn): on a claude-code, codex, acp, a2a or nats provider it runs without them"
            ),
            unsupported(
                "agents/reviewer.md:9:1: `initialPrompt` is not supported: the task given to the \
                 agent is its first message"
            ),
            unsupported(
                "agents/reviewer.md:11:1: `isolation: remote` is not supported (only `worktree` \
                 is): starting this agent is refused"
            ),
        ]
    );
    // Blank and empty values ask for nothing.
    let parsed =
        parse("---\nname: r\ndescription: d\nskills: []\nmemory: ''\nhooks:\neffort: ' '\n---\n")
            .unwrap();
    assert_eq!(parsed.warnings, vec![]);
}

#[test]
fn missing_description_is_a_warning() {
    let parsed = parse("---\nname: r\n---\nbody").unwrap();
    assert_eq!(
        parsed
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        vec![
            "agents/reviewer.md:1: agent `r` has no `description`: the model is not told when \
             to use it"
        ]
    );
    assert_eq!(parsed.warnings[0].kind, WarningKind::MissingDescription);
}

#[test]
fn crlf_and_byte_order_mark() {
    let parsed = parse("\u{feff}---\r\nname: r\r\ndescription: d\r\n---\r\nline one\r\n").unwrap();
    assert_eq!(parsed.definition.name, "r");
    assert_eq!(parsed.definition.description, "d");
    assert_eq!(parsed.definition.prompt, "line one");
}

#[test]
fn load_file_reports_unreadable_files() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.md");
    assert!(matches!(
        load_file(&missing, Source::User),
        Err(Error::Io { .. })
    ));
    let binary = dir.path().join("binary.md");
    std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
    let error = load_file(&binary, Source::User).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("{}: not UTF-8 text", binary.display())
    );
    let big = dir.path().join("big.md");
    std::fs::write(&big, vec![b'a'; 1024 * 1024 + 1]).unwrap();
    assert_eq!(
        load_file(&big, Source::User).unwrap_err().to_string(),
        format!(
            "{}: larger than the limit of 1048576 bytes; refused (a definition may have at most 1048576 bytes)",
            big.display()
        )
    );
}

fn tool_name() -> impl Strategy<Value = String> {
    // Always an underscore: never a YAML keyword (`null`, `true`) or number.
    "[a-z][a-z0-9]{0,5}_[A-Za-z0-9_*.-]{0,6}"
}

proptest! {
    #[test]
    fn a_comma_string_and_a_list_mean_the_same(
        names in proptest::collection::vec(tool_name(), 0..8),
        spaces in proptest::collection::vec(" {0,2}", 8),
    ) {
        let mut unique: Vec<String> = Vec::new();
        for name in &names {
            if !unique.contains(name) {
                unique.push(name.clone());
            }
        }
        // Comma string with arbitrary spacing.
        let joined: Vec<String> = names
            .iter()
            .zip(spaces.iter().cycle())
            .map(|(n, s)| format!("{s}{n}{s}"))
            .collect();
        prop_assert_eq!(split_tool_list(&joined.join(",")), unique.clone());

        // The same names as a YAML list and as a YAML comma string.
        let as_list = format!("---\nname: r\ndescription: d\ntools: [{}]\n---\n", names.join(", "));
        let as_string = format!("---\nname: r\ndescription: d\ntools: \"{}\"\n---\n", names.join(", "));
        let from_list = parse(&as_list).unwrap().definition.tools;
        let from_string = parse(&as_string).unwrap().definition.tools;
        prop_assert_eq!(&from_list, &from_string);
        prop_assert_eq!(from_list, Some(unique));
    }

    #[test]
    fn splitting_never_loses_a_name_outside_parentheses(text in "[a-z, ()]{0,40}") {
        let items = split_tool_list(&text);
        for item in &items {
            prop_assert!(!item.is_empty());
            prop_assert_eq!(item.trim(), item.as_str());
        }
        let kept: String = items.concat().chars().filter(|c| !matches!(c, ',' | ' ')).collect();
        let all: String = text.chars().filter(|c| !matches!(c, ',' | ' ')).collect();
        // Duplicates are dropped, so what is kept is a subsequence of the input's non-separators.
        let mut rest = all.chars();
        prop_assert!(kept.chars().all(|c| rest.any(|d| d == c)));
    }
}
