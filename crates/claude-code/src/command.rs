//! The command line of one run: argv, environment and the prompt, from a request and the config.

use std::path::PathBuf;

use serde_json::Value;
use subagent_core::agents::wildcard_match;
use subagent_core::{PermissionMode, StartRequest, ToolFilter};

use crate::config::{ClaudeCodeConfig, ClaudePermissionMode};
use crate::{Error, Result};

/// The built-in tools of Claude Code 2.1.197 as the model sees them (`Glob` and `Grep` appear
/// when `Bash` is removed). Wildcard patterns of a tool filter are expanded against this list;
/// exact names are passed through as written (MCP tools, newer tools).
pub const KNOWN_TOOLS: &[&str] = &[
    "Agent",
    "Bash",
    "CronCreate",
    "CronDelete",
    "CronList",
    "Edit",
    "EnterWorktree",
    "ExitWorktree",
    "Glob",
    "Grep",
    "NotebookEdit",
    "Read",
    "ReportFindings",
    "ScheduleWakeup",
    "SendMessage",
    "Skill",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "WebFetch",
    "WebSearch",
    "Workflow",
    "Write",
];

/// The tool Claude Code runs its own sub-agents with, under both of its names (the init event
/// calls it `Task`).
pub const AGENT_TOOLS: [&str; 2] = ["Agent", "Task"];

/// Everything needed to start one `claude` child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    /// The executable as configured.
    pub program: PathBuf,
    /// The arguments (the prompt is not among them: it goes to stdin, so no size limit of argv
    /// and no prompt mistaken for a flag).
    pub args: Vec<String>,
    /// Variables set in the child.
    pub env: Vec<(String, String)>,
    /// Variables passed through the scrub.
    pub pass_env: Vec<String>,
    /// The child's working directory: the parent's.
    pub cwd: PathBuf,
    /// The prompt, written to stdin.
    pub prompt: String,
}

/// Expands `*` patterns against [`KNOWN_TOOLS`]; exact names stay as written.
fn expand(patterns: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut push = |name: &str| {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    };
    for pattern in patterns {
        if pattern.contains('*') {
            KNOWN_TOOLS
                .iter()
                .filter(|tool| wildcard_match(pattern, tool))
                .for_each(|tool| push(tool));
        } else {
            push(pattern);
        }
    }
    names
}

/// The tools the child may see (`--tools`, `None` = all) and the tools removed
/// (`--disallowedTools`), from the filter and the depth cap.
pub fn tool_flags(
    filter: Option<&ToolFilter>,
    without_agents: bool,
) -> (Option<Vec<String>>, Vec<String>) {
    let allow = filter
        .and_then(|f| f.allow.as_ref())
        .map(|allow| expand(allow))
        .map(|mut allow| {
            if without_agents {
                allow.retain(|tool| !AGENT_TOOLS.contains(&tool.as_str()));
            }
            allow
        });
    let mut deny = filter.map(|f| expand(&f.deny)).unwrap_or_default();
    if without_agents {
        for tool in AGENT_TOOLS {
            if !deny.iter().any(|d| d == tool) {
                deny.push(tool.to_owned());
            }
        }
    }
    (allow, deny)
}

/// Whether the child must not run Claude Code's own sub-agents: whenever the request carries a
/// depth cap. Claude's sub-agents nest without a limit of their own (observed with 2.1.197: a
/// sub-agent's `Agent` call ran a sub-sub-agent), so removing the tool only at the cap would let
/// a child below the cap nest past it; the only nesting depth claude can be held to is none.
/// Without `max_depth` the child keeps the tool: its in-process agents are then its own affair.
pub fn no_sub_agents(request: &StartRequest) -> bool {
    request.max_depth.is_some()
}

/// Builds the invocation. `is_root` and `sandbox_env` (our own `IS_SANDBOX`) decide whether
/// `bypassPermissions` can work.
pub fn build(
    config: &ClaudeCodeConfig,
    request: &StartRequest,
    provider: &str,
    is_root: bool,
    sandbox_env: Option<&str>,
) -> Result<Invocation> {
    let prompt = request.prompt_text();
    if prompt.trim().is_empty() {
        return Err(Error::Request(
            "the prompt has no text (claude takes a text prompt)".into(),
        ));
    }
    let cwd = request.parent.cwd.clone();
    // Never looser than the parent: the request's ceiling wins over the configured mode. An
    // isolated child stays in its cwd (its worktree): claude's file tools leave the working
    // directory only in `auto` and `bypassPermissions`, so it runs in `acceptEdits` at most.
    let ceiling = match (request.permission_ceiling, request.isolation) {
        (ceiling, None) => ceiling,
        (None, Some(_)) => Some(PermissionMode::AcceptEdits),
        (Some(ceiling), Some(_)) => Some(ceiling.intersect(PermissionMode::AcceptEdits)),
    };
    let mode = config.permission_mode.under(ceiling);
    if mode == ClaudePermissionMode::BypassPermissions && is_root {
        let sandboxed = config
            .env
            .get("IS_SANDBOX")
            .map(String::as_str)
            .or(sandbox_env)
            == Some("1");
        if !sandboxed {
            return Err(Error::BypassAsRoot);
        }
    }

    let mut args: Vec<String> = [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        mode.as_flag(),
    ]
    .map(str::to_owned)
    .into();
    let mut flag = |name: &str, value: String| {
        args.push(name.to_owned());
        args.push(value);
    };
    if let Some(model) = &request.model {
        flag("--model", model.clone());
    }
    if let Some(max_turns) = request.max_turns {
        flag("--max-turns", max_turns.to_string());
    }
    if let Some(effort) = request.effort {
        flag("--effort", effort.as_str().to_owned());
    }
    if let Some(persona) = &request.persona {
        flag("--append-system-prompt", persona.clone());
    }
    if let Some(schema) = &request.output_schema {
        if !schema.is_object() {
            return Err(Error::Request(
                "the output schema must be a JSON object".into(),
            ));
        }
        flag("--json-schema", Value::to_string(schema));
    }
    if let Some(session) = &request.resume {
        if session.provider != provider {
            return Err(Error::NotResumable(format!(
                "the session belongs to provider \"{}\", not \"{provider}\"",
                session.provider
            )));
        }
        if session.id.trim().is_empty() {
            return Err(Error::NotResumable(
                "the session reference has no id".into(),
            ));
        }
        if let Some(session_cwd) = &session.cwd
            && *session_cwd != cwd
        {
            return Err(Error::NotResumable(format!(
                "Claude Code keys sessions by directory: session {} belongs to {}, the request \
                 runs in {}",
                session.id,
                session_cwd.display(),
                cwd.display()
            )));
        }
        flag("--resume", session.id.clone());
    }
    let (allow, deny) = tool_flags(request.tool_filter.as_ref(), no_sub_agents(request));
    if let Some(allow) = allow {
        flag("--tools", allow.join(","));
    }
    // Variadic flags last among ours, each name its own argument.
    if !deny.is_empty() {
        args.push("--disallowedTools".into());
        args.extend(deny);
    }
    if !config.allowed_tools.is_empty() {
        args.push("--allowedTools".into());
        args.extend(config.allowed_tools.iter().cloned());
    }
    args.extend(config.extra_args.iter().cloned());

    let mut env: Vec<(String, String)> = vec![(
        "CLAUDE_CODE_MAX_RETRIES".into(),
        config.max_retries.to_string(),
    )];
    if config.disable_nonessential_traffic {
        for name in [
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "DISABLE_TELEMETRY",
            "DISABLE_ERROR_REPORTING",
            "DISABLE_AUTOUPDATER",
        ] {
            env.push((name.into(), "1".into()));
        }
    }
    env.extend(config.env.iter().map(|(k, v)| (k.clone(), v.clone())));

    Ok(Invocation {
        program: config.binary.clone(),
        args,
        env,
        pass_env: config.pass_env.clone(),
        cwd,
        prompt,
    })
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn the_permission_ceiling_tightens_the_mode_and_never_loosens_it() {
        use subagent_core::PermissionMode as Ceiling;
        let mode_for = |configured: ClaudePermissionMode, ceiling: Option<Ceiling>| {
            let config = ClaudeCodeConfig {
                permission_mode: configured,
                ..ClaudeCodeConfig::default()
            };
            let mut builder = request();
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
        };
        for (configured, ceiling, expected) in [
            (ClaudePermissionMode::AcceptEdits, None, "acceptEdits"),
            (
                ClaudePermissionMode::AcceptEdits,
                Some(Ceiling::Plan),
                "plan",
            ),
            (
                ClaudePermissionMode::AcceptEdits,
                Some(Ceiling::Default),
                "default",
            ),
            (
                ClaudePermissionMode::AcceptEdits,
                Some(Ceiling::DontAsk),
                "dontAsk",
            ),
            (
                ClaudePermissionMode::AcceptEdits,
                Some(Ceiling::Bypass),
                "acceptEdits",
            ),
            (
                ClaudePermissionMode::DontAsk,
                Some(Ceiling::AcceptEdits),
                "dontAsk",
            ),
            (
                ClaudePermissionMode::Auto,
                Some(Ceiling::AcceptEdits),
                "acceptEdits",
            ),
            (
                ClaudePermissionMode::BypassPermissions,
                Some(Ceiling::Plan),
                "plan",
            ),
            (ClaudePermissionMode::Plan, Some(Ceiling::Bypass), "plan"),
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
        let mode_for = |configured: ClaudePermissionMode, ceiling: Option<Ceiling>| {
            let config = ClaudeCodeConfig {
                permission_mode: configured,
                ..ClaudeCodeConfig::default()
            };
            let mut builder = request().isolation(Isolation::Worktree);
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
}
