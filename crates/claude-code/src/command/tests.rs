use pretty_assertions::assert_eq;
use subagent_core::SessionRef;

use super::*;

fn request() -> subagent_core::StartRequestBuilder {
    StartRequest::builder("do it").cwd("/tmp/project")
}

#[test]
fn a_plain_request() {
    let invocation = build(
        &ClaudeCodeConfig::default(),
        &request().build(),
        "cc",
        false,
        None,
    )
    .unwrap();
    assert_eq!(
        invocation.args,
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "dontAsk"
        ]
    );
    assert_eq!(invocation.prompt, "do it");
    assert_eq!(invocation.cwd, PathBuf::from("/tmp/project"));
    assert_eq!(
        invocation.env.first(),
        Some(&("CLAUDE_CODE_MAX_RETRIES".to_owned(), "0".to_owned()))
    );
    assert!(
        invocation
            .env
            .iter()
            .any(|(k, v)| k == "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC" && v == "1")
    );
}

#[test]
fn every_field_maps_to_its_flag() {
    let config = ClaudeCodeConfig {
        allowed_tools: vec!["Bash".into()],
        extra_args: vec!["--bare".into()],
        ..ClaudeCodeConfig::default()
    };
    let request = request()
        .model("sonnet")
        .max_turns(3)
        .persona("You are terse.")
        .output_schema(serde_json::json!({"type": "object"}))
        .tool_filter(ToolFilter {
            allow: Some(vec!["Read".into(), "Web*".into(), "Agent".into()]),
            deny: vec!["WebSearch".into()],
        })
        .max_depth(1)
        .resume(SessionRef {
            provider: "cc".into(),
            id: "abc".into(),
            cwd: Some("/tmp/project".into()),
            transcript: None,
        })
        .build();
    let invocation = build(&config, &request, "cc", false, None).unwrap();
    assert_eq!(
        invocation.args,
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "dontAsk",
            "--model",
            "sonnet",
            "--max-turns",
            "3",
            "--append-system-prompt",
            "You are terse.",
            "--json-schema",
            "{\"type\":\"object\"}",
            "--resume",
            "abc",
            "--tools",
            "Read,WebFetch,WebSearch",
            "--disallowedTools",
            "WebSearch",
            "Agent",
            "Task",
            "--allowedTools",
            "Bash",
            "--bare",
        ]
    );
}

#[test]
fn any_depth_cap_removes_the_agent_tool() {
    let uncapped = request().build();
    assert_eq!(tool_flags(None, no_sub_agents(&uncapped)), (None, vec![]));
    let agents = (None, vec!["Agent".to_owned(), "Task".to_owned()]);
    let at = request().max_depth(1).build();
    assert_eq!(tool_flags(None, no_sub_agents(&at)), agents);
    let below = request().max_depth(5).build();
    assert_eq!(tool_flags(None, no_sub_agents(&below)), agents);
}

/// The `--permission-mode` the claude command line of `configured` under `ceiling` gets for
/// `builder`'s request.
fn mode_for(
    configured: ClaudePermissionMode,
    ceiling: Option<subagent_core::PermissionMode>,
    mut builder: subagent_core::StartRequestBuilder,
) -> String {
    let config = ClaudeCodeConfig {
        permission_mode: configured,
        ..ClaudeCodeConfig::default()
    };
    if let Some(ceiling) = ceiling {
        builder = builder.permission_ceiling(ceiling);
    }
    let invocation = build(&config, &builder.build(), "cc", false, None).unwrap();
    let at = invocation
        .args
        .iter()
        .position(|a| a == "--permission-mode")
        .unwrap();
    invocation.args[at + 1].clone()
}

#[test]
fn the_permission_ceiling_tightens_the_mode_and_never_loosens_it() {
    use ClaudePermissionMode as Mode;
    use subagent_core::PermissionMode as Ceiling;
    let mode_for = |configured, ceiling| mode_for(configured, ceiling, request());
    for (configured, ceiling, expected) in [
        (Mode::AcceptEdits, None, "acceptEdits"),
        (Mode::AcceptEdits, Some(Ceiling::Plan), "plan"),
        (Mode::AcceptEdits, Some(Ceiling::Default), "default"),
        (Mode::AcceptEdits, Some(Ceiling::DontAsk), "dontAsk"),
        (Mode::AcceptEdits, Some(Ceiling::Bypass), "acceptEdits"),
        (Mode::DontAsk, Some(Ceiling::AcceptEdits), "dontAsk"),
        (Mode::Auto, Some(Ceiling::AcceptEdits), "acceptEdits"),
        (Mode::BypassPermissions, Some(Ceiling::Plan), "plan"),
        (Mode::Plan, Some(Ceiling::Bypass), "plan"),
    ] {
        assert_eq!(
            mode_for(configured, ceiling),
            expected,
            "{configured:?} under {ceiling:?}"
        );
    }
    // A bypass config under a plan ceiling is no longer a bypass: root needs no IS_SANDBOX.
    let config = ClaudeCodeConfig {
        permission_mode: ClaudePermissionMode::BypassPermissions,
        ..ClaudeCodeConfig::default()
    };
    let planned = request().permission_ceiling(Ceiling::Plan).build();
    assert!(build(&config, &planned, "cc", true, None).is_ok());
}

#[test]
fn refusals() {
    let config = ClaudeCodeConfig {
        permission_mode: ClaudePermissionMode::BypassPermissions,
        ..ClaudeCodeConfig::default()
    };
    assert!(matches!(
        build(&config, &request().build(), "cc", true, None),
        Err(Error::BypassAsRoot)
    ));
    assert!(build(&config, &request().build(), "cc", true, Some("1")).is_ok());
    assert!(build(&config, &request().build(), "cc", false, None).is_ok());

    let elsewhere = request()
        .resume(SessionRef {
            provider: "cc".into(),
            id: "abc".into(),
            cwd: Some("/elsewhere".into()),
            transcript: None,
        })
        .build();
    assert!(matches!(
        build(&ClaudeCodeConfig::default(), &elsewhere, "cc", false, None),
        Err(Error::NotResumable(_))
    ));
    let empty = StartRequest::builder("  ").cwd("/tmp").build();
    assert!(matches!(
        build(&ClaudeCodeConfig::default(), &empty, "cc", false, None),
        Err(Error::Request(_))
    ));
}

#[test]
fn isolation_keeps_the_mode_at_accept_edits_at_most() {
    use subagent_core::{Isolation, PermissionMode as Ceiling};
    let mode_for = |configured, ceiling| {
        mode_for(
            configured,
            ceiling,
            request().isolation(Isolation::Worktree),
        )
    };
    let modes: Vec<String> = [
        (ClaudePermissionMode::BypassPermissions, None),
        (ClaudePermissionMode::Auto, None),
        (ClaudePermissionMode::AcceptEdits, None),
        (ClaudePermissionMode::DontAsk, None),
        (ClaudePermissionMode::BypassPermissions, Some(Ceiling::Plan)),
    ]
    .into_iter()
    .map(|(configured, ceiling)| mode_for(configured, ceiling))
    .collect();
    assert_eq!(
        modes,
        [
            "acceptEdits",
            "acceptEdits",
            "acceptEdits",
            "dontAsk",
            "plan"
        ]
    );
}

/// An asker that is never asked (the argv is all these tests look at).
struct Nobody;

#[async_trait::async_trait]
impl subagent_core::ParentAsker for Nobody {
    async fn ask(&self, _: subagent_core::ToolQuestion) -> subagent_core::ToolAnswer {
        subagent_core::ToolAnswer::Deny {
            message: String::new(),
        }
    }
}

/// A request with an asker: claude takes stream-json on stdin and asks on stdio; a `dontAsk`
/// row runs in `default` (where claude asks), other rows keep their mode, and the ceiling
/// still caps it.
#[test]
fn a_child_that_asks_its_parent() {
    let asking = |config: ClaudePermissionMode, ceiling: Option<PermissionMode>| {
        let mut request = request();
        if let Some(ceiling) = ceiling {
            request = request.permission_ceiling(ceiling);
        }
        let mut request = request.build();
        request.parent.asker = Some(subagent_core::Asker(std::sync::Arc::new(Nobody)));
        let config = ClaudeCodeConfig {
            permission_mode: config,
            ..ClaudeCodeConfig::default()
        };
        build(&config, &request, "cc", false, None).unwrap().args
    };
    assert_eq!(
        asking(ClaudePermissionMode::DontAsk, None),
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "default",
            "--input-format",
            "stream-json",
            "--permission-prompt-tool",
            "stdio"
        ]
    );
    let mode = |args: Vec<String>| {
        let at = args.iter().position(|a| a == "--permission-mode").unwrap();
        args[at + 1].clone()
    };
    assert_eq!(
        mode(asking(ClaudePermissionMode::AcceptEdits, None)),
        "acceptEdits"
    );
    assert_eq!(
        mode(asking(
            ClaudePermissionMode::BypassPermissions,
            Some(PermissionMode::Bypass)
        )),
        "bypassPermissions"
    );
    assert_eq!(
        mode(asking(
            ClaudePermissionMode::DontAsk,
            Some(PermissionMode::Plan)
        )),
        "plan"
    );
    assert_eq!(
        mode(asking(
            ClaudePermissionMode::DontAsk,
            Some(PermissionMode::DontAsk)
        )),
        "dontAsk"
    );
}

/// Hooks claude does not read itself (here: `--settings` JSON of the flags) and an agent
/// type's hooks reach the child as `--settings` `hooks`, in Claude Code's shape, the agent's
/// after the settings'; the hooks of the project's `.claude/settings.json`, which claude reads
/// itself, are not handed again.
#[test]
fn agent_hooks_go_with_the_settings_hooks() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("p");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(
        project.join(".claude/settings.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./own.sh"}]}]}}"#,
    )
    .unwrap();
    let mut locations =
        subagent_settings::Locations::new(&project, Some(home.path().to_path_buf()));
    locations.managed = None;
    let flags = subagent_settings::FlagSettings {
        settings: Some(
            r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}]}}"#
                .to_owned(),
        ),
        ..subagent_settings::FlagSettings::default()
    };
    let settings = subagent_settings::EffectiveSettings::load(&locations, flags, None).unwrap();
    let agent = subagent_settings::Hooks::from_value(
        &serde_json::json!({
            "PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "./agent-guard.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "./agent-stop.sh"}]}],
        }),
        subagent_settings::Scope::Agent,
        None,
        "agent",
    )
    .unwrap();
    let handed = handed_settings(&settings);
    let json: Value =
        serde_json::from_str(&request_settings(handed.as_ref(), Some(&agent), None).unwrap())
            .unwrap();
    assert_eq!(
        json,
        serde_json::json!({"hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5.0}]},
                {"matcher": "Write", "hooks": [{"type": "command", "command": "./agent-guard.sh", "timeout": 60.0}]},
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "./agent-stop.sh", "timeout": 60.0}]}],
        }})
    );
    assert_eq!(request_settings(None, None, None), None);
}

/// Only the preset's servers are handed over (claude reads `~/.claude.json` and `.mcp.json`
/// itself), in claude's `--mcp-config` shape, stdio and HTTP alike.
#[test]
fn the_presets_mcp_servers_are_handed_in_claudes_shape() {
    use subagent_core::mcp::{HostMcpServers, McpReach, McpScope, McpServerSpec};
    let server = |name: &str, scope, reach| McpServerSpec {
        name: name.into(),
        reach,
        scope,
        timeout_ms: None,
    };
    let stdio = McpReach::Stdio {
        command: "npx".into(),
        args: vec!["-y".into(), "files".into()],
        env: [("TOKEN".to_owned(), "s3cret".to_owned())].into(),
    };
    let http = McpReach::Http {
        url: "http://127.0.0.1:9/mcp".into(),
        headers: [("Authorization".to_owned(), "Bearer t".to_owned())].into(),
    };
    let mut timed = server("api", McpScope::Preset, http);
    timed.timeout_ms = Some(5000);
    let servers = HostMcpServers(vec![
        server("files", McpScope::Preset, stdio.clone()),
        server("users", McpScope::User, stdio.clone()),
        server("project", McpScope::Project, stdio.clone()),
        server("local", McpScope::Local, stdio),
        timed,
    ]);
    let json: Value = serde_json::from_str(&mcp_config(&servers).unwrap()).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"mcpServers": {
            "files": {"type": "stdio", "command": "npx", "args": ["-y", "files"], "env": {"TOKEN": "s3cret"}},
            "api": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer t"}, "timeout": 5000},
        }})
    );
    let mine = HostMcpServers(vec![servers.0[1].clone()]);
    assert_eq!(mcp_config(&mine), None);
    let invocation = with_mcp_config(
        Invocation {
            program: "claude".into(),
            args: vec!["-p".into()],
            env: vec![],
            pass_env: vec![],
            cwd: "/p".into(),
            prompt: "x".into(),
        },
        std::path::Path::new("/tmp/servers.json"),
    );
    assert_eq!(invocation.args, ["-p", "--mcp-config", "/tmp/servers.json"]);
}

#[test]
fn an_agent_types_memory_goes_after_its_body_and_outside_the_cwd_as_an_added_dir() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".claude/agent-memory/keeper");
    let mut request = request().persona("You keep notes.").build();
    request
        .parent
        .extensions
        .insert(subagent_core::memory::AgentMemory {
            scope: subagent_core::memory::MemoryScope::User,
            dir: dir.clone(),
        });
    let invocation = build(&ClaudeCodeConfig::default(), &request, "cc", false, None).unwrap();
    let after = |flag: &str| {
        let at = invocation.args.iter().position(|a| a == flag).unwrap();
        invocation.args[at + 1].clone()
    };
    let appended = after("--append-system-prompt");
    assert!(
        appended.starts_with(&format!(
            "You keep notes.\n\n# Persistent Agent Memory\n\nYou have a persistent, file-based memory at `{}/`. This directory already exists — write to it directly with the Write tool",
            dir.display()
        )),
        "{appended}"
    );
    assert!(appended.ends_with("## MEMORY.md\n\nYour MEMORY.md is currently empty. When you save new memories, they will appear here."));
    assert_eq!(after("--add-dir"), dir.display().to_string());
    // The directory was made for it, private.
    assert!(dir.is_dir());
    // A memory inside the working directory needs no added directory.
    let mut inside = StartRequest::builder("do it").cwd(home.path()).build();
    inside
        .parent
        .extensions
        .insert(subagent_core::memory::AgentMemory {
            scope: subagent_core::memory::MemoryScope::Project,
            dir: home.path().join(".claude/agent-memory/keeper"),
        });
    let invocation = build(&ClaudeCodeConfig::default(), &inside, "cc", false, None).unwrap();
    assert!(!invocation.args.iter().any(|a| a == "--add-dir"));
    assert!(
        invocation
            .args
            .iter()
            .any(|a| a.starts_with("# Persistent Agent Memory"))
    );
}
