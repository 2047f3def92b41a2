//! The command line of one run: argv, environment and the prompt, from a request and the config.

use std::path::PathBuf;

use serde_json::Value;
use subagent_core::agents::wildcard_match;
use subagent_core::memory::AgentMemory;
use subagent_core::{PermissionMode, StartRequest, ToolFilter};

use subagent_runtime::RunMemory;

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

/// The settings `claude` does not read itself, as its `--settings` JSON: the permission rules
/// of the command line's flags, the preset's `settings:`, our `.subagents/` twins and a managed
/// file elsewhere than claude looks (`SUBAGENT_MANAGED_SETTINGS`). The user's and the project's
/// `.claude/` files claude reads itself (same `HOME`, same directory), with the same trust.
/// `None` when there is nothing to hand over.
/// The hooks claude does not read itself (those of the flags' `--settings`, the preset, our
/// `.subagents/` twins) go along as its `hooks`, in its own shape.
pub(crate) fn handed_settings(
    settings: &subagent_settings::EffectiveSettings,
) -> Option<serde_json::Map<String, Value>> {
    let texts = |rules: &[subagent_settings::SourcedRule]| -> Vec<String> {
        rules
            .iter()
            .filter(|rule| !claude_reads(rule.scope, rule.file.as_deref()))
            .map(|rule| rule.value.claude_text())
            .collect()
    };
    let permissions = &settings.permissions;
    let (allow, ask, deny) = (
        texts(&permissions.allow),
        texts(&permissions.ask),
        texts(&permissions.deny),
    );
    let mut handed = serde_json::Map::new();
    if !(allow.is_empty() && ask.is_empty() && deny.is_empty()) {
        let mut rules = serde_json::Map::new();
        for (key, texts) in [("allow", allow), ("ask", ask), ("deny", deny)] {
            if !texts.is_empty() {
                rules.insert(key.to_owned(), Value::from(texts));
            }
        }
        handed.insert("permissions".to_owned(), Value::Object(rules));
    }
    let hooks = claude_hooks(&settings.hooks, |hook| {
        !claude_reads(hook.source, hook.file.as_deref())
    });
    if !hooks.is_empty() {
        handed.insert("hooks".to_owned(), Value::Object(hooks));
    }
    (!handed.is_empty()).then_some(handed)
}

/// Whether claude reads a value of `scope` from `file` itself: its managed file, and the user's
/// and the project's `.claude/` files.
fn claude_reads(scope: subagent_settings::Scope, file: Option<&std::path::Path>) -> bool {
    use subagent_settings::{Locations, Scope};
    match scope {
        Scope::Managed => file == Some(std::path::Path::new(Locations::DEFAULT_MANAGED)),
        Scope::User | Scope::Project | Scope::ProjectLocal => {
            file.is_some_and(|file| file.components().any(|c| c.as_os_str() == ".claude"))
        }
        _ => false,
    }
}

/// `hooks` (those `keep` keeps) in Claude Code's settings shape: `{"<Event>": [{"matcher": …,
/// "hooks": [{"type": "command", "command": …, "timeout": <seconds>}]}]}`.
pub(crate) fn claude_hooks(
    hooks: &subagent_settings::Hooks,
    keep: impl Fn(&subagent_settings::HookCommand) -> bool,
) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for (event, groups) in &hooks.events {
        let groups: Vec<Value> = groups
            .iter()
            .filter_map(|group| {
                let commands: Vec<Value> = group
                    .hooks
                    .iter()
                    .filter(|hook| keep(hook))
                    .map(|hook| {
                        serde_json::json!({
                            "type": "command",
                            "command": hook.command,
                            "timeout": hook.timeout.as_secs_f64(),
                        })
                    })
                    .collect();
                if commands.is_empty() {
                    return None;
                }
                let mut entry = serde_json::Map::new();
                if let Some(matcher) = &group.matcher {
                    entry.insert("matcher".to_owned(), Value::from(matcher.as_str()));
                }
                entry.insert("hooks".to_owned(), Value::Array(commands));
                Some(Value::Object(entry))
            })
            .collect();
        if !groups.is_empty() {
            out.insert(event.name().to_owned(), Value::Array(groups));
        }
    }
    out
}

/// The `--settings` JSON of one request: the provider's handed settings with the request's
/// permission rules added to their lists (each once) and the agent definition's `hooks:` (of
/// the request's agent type) after the settings' own. `None` when there is nothing to hand over.
pub(crate) fn request_settings(
    handed: Option<&serde_json::Map<String, Value>>,
    agent_hooks: Option<&subagent_settings::Hooks>,
    rules: Option<&subagent_core::PermissionRules>,
) -> Option<String> {
    let mut settings = handed.cloned().unwrap_or_default();
    if let Some(rules) = rules {
        add_rules(&mut settings, rules);
    }
    if let Some(agent_hooks) = agent_hooks {
        let extra = claude_hooks(agent_hooks, |_| true);
        if !extra.is_empty() {
            let Value::Object(hooks) = settings
                .entry("hooks")
                .or_insert_with(|| Value::Object(serde_json::Map::new()))
            else {
                return None;
            };
            for (event, groups) in extra {
                if let (Some(Value::Array(have)), Value::Array(more)) =
                    (hooks.get_mut(&event), &groups)
                {
                    have.extend(more.iter().cloned());
                } else {
                    hooks.insert(event, groups);
                }
            }
        }
    }
    (!settings.is_empty()).then(|| Value::Object(settings).to_string())
}

/// `rules` added to the `permissions` lists of `settings`, each once.
fn add_rules(
    settings: &mut serde_json::Map<String, Value>,
    rules: &subagent_core::PermissionRules,
) {
    let Value::Object(permissions) = settings
        .entry("permissions")
        .or_insert_with(|| Value::Object(serde_json::Map::new()))
    else {
        return;
    };
    for (key, texts) in [
        ("allow", &rules.allow),
        ("ask", &rules.ask),
        ("deny", &rules.deny),
    ] {
        if texts.is_empty() {
            continue;
        }
        if let Value::Array(list) = permissions
            .entry(key)
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            for text in texts {
                if !list.iter().any(|held| held.as_str() == Some(text)) {
                    list.push(Value::from(text.as_str()));
                }
            }
        }
    }
    if permissions.is_empty() {
        settings.remove("permissions");
    }
}

/// Hands `settings` (from [`request_settings`]) to the invocation as claude's `--settings`,
/// ahead of the variadic flags that would take it as a tool name.
pub(crate) fn with_settings(mut invocation: Invocation, settings: Option<&str>) -> Invocation {
    if let Some(settings) = settings {
        let at = invocation
            .args
            .iter()
            .position(|arg| arg == "--permission-mode")
            .map_or(0, |i| i + 2);
        invocation
            .args
            .splice(at..at, ["--settings".to_owned(), settings.to_owned()]);
    }
    invocation
}

/// The servers of `servers` that claude does not read itself (the preset's: claude reads
/// `~/.claude.json` and `.mcp.json` on its own), as its `--mcp-config` JSON; `None` when there
/// is none.
pub(crate) fn mcp_config(servers: &subagent_core::mcp::HostMcpServers) -> Option<String> {
    use subagent_core::mcp::McpReach;
    let handed: serde_json::Map<String, Value> = servers
        .0
        .iter()
        .filter(|server| !server.scope.read_by_claude())
        .map(|server| {
            let mut entry = match &server.reach {
                McpReach::Stdio { command, args, env } => serde_json::json!({
                    "type": "stdio", "command": command, "args": args, "env": env,
                }),
                McpReach::Http { url, headers } => serde_json::json!({
                    "type": "http", "url": url, "headers": headers,
                }),
                McpReach::Sse { url, headers } => serde_json::json!({
                    "type": "sse", "url": url, "headers": headers,
                }),
            };
            if let (Some(timeout), Some(entry)) = (server.timeout_ms, entry.as_object_mut()) {
                entry.insert("timeout".into(), timeout.into());
            }
            (server.name.clone(), entry)
        })
        .collect();
    (!handed.is_empty()).then(|| serde_json::json!({ "mcpServers": handed }).to_string())
}

/// `invocation` reading the MCP servers of the file at `path` (`--mcp-config`), beside those
/// claude reads itself.
pub(crate) fn with_mcp_config(mut invocation: Invocation, path: &std::path::Path) -> Invocation {
    invocation
        .args
        .extend(["--mcp-config".to_owned(), path.display().to_string()]);
    invocation
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
    // A child that asks its parent runs where claude asks instead of refusing: `default` for
    // a `dontAsk` row (the other modes keep theirs), still under the ceiling.
    let asks = request.parent.asker.is_some();
    let configured = match config.permission_mode {
        ClaudePermissionMode::DontAsk if asks => ClaudePermissionMode::Default,
        mode => mode,
    };
    let mode = configured.under(ceiling);
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
    if asks {
        // The prompt and the answers as stream-json on stdin; claude's questions on stdout.
        args.extend(
            [
                "--input-format",
                "stream-json",
                "--permission-prompt-tool",
                "stdio",
            ]
            .map(str::to_owned),
        );
    }
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
    // An agent type's memory: claude is not told the agent type (its body is the appended
    // prompt), so the memory's instructions and index go there too, and a directory outside
    // the working directory is added to claude's (`--add-dir`, below).
    let memory = match request.parent.extensions.get::<AgentMemory>() {
        Some(memory) => Some(
            RunMemory::open_for(&memory, "the Write tool")
                .map_err(|e| Error::Request(format!("agent memory: {e}")))?,
        ),
        None => None,
    };
    let appended = match (&request.persona, &memory) {
        (Some(persona), Some(memory)) => Some(format!("{persona}\n\n{}", memory.instructions)),
        (Some(persona), None) => Some(persona.clone()),
        (None, Some(memory)) => Some(memory.instructions.clone()),
        (None, None) => None,
    };
    if let Some(appended) = appended {
        flag("--append-system-prompt", appended);
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
    if let Some(memory) = &memory
        && !memory.dir.starts_with(&cwd)
    {
        args.push("--add-dir".into());
        args.push(memory.dir.display().to_string());
    }
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
mod tests;

/// What is handed to claude as `--settings`: only what it does not read itself.
#[cfg(test)]
mod handed {
    #![allow(clippy::unwrap_used)]

    use subagent_settings::{EffectiveSettings, FlagSettings, Locations};

    #[test]
    fn only_what_claude_does_not_read_itself_is_handed_over() {
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("p");
        let write = |path: std::path::PathBuf, text: &str| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            home.path().join(".claude/settings.json"),
            r#"{"permissions": {"allow": ["Read"], "deny": ["WebFetch"]}}"#,
        );
        write(
            home.path().join(".subagents/settings.json"),
            r#"{"permissions": {"ask": ["bash(git push:*)"]}}"#,
        );
        write(
            project.join(".claude/settings.json"),
            r#"{"permissions": {"deny": ["Read(./.env)"]}}"#,
        );
        let mut locations = Locations::new(&project, Some(home.path().to_path_buf()));
        locations.managed = None;
        let flags = FlagSettings {
            allowed_tools: vec!["bash(touch made) Edit".to_owned()],
            ..FlagSettings::default()
        };
        let settings = EffectiveSettings::load(&locations, flags, None).unwrap();
        assert_eq!(
            super::request_settings(super::handed_settings(&settings).as_ref(), None, None)
                .unwrap(),
            r#"{"permissions":{"allow":["Bash(touch made)","Edit"],"ask":["Bash(git push:*)"]}}"#
        );
        let mut none = EffectiveSettings::load(&locations, FlagSettings::default(), None).unwrap();
        none.permissions.ask.clear();
        assert_eq!(super::handed_settings(&none), None);
        let rules = subagent_core::PermissionRules {
            deny: vec!["Bash(rm -rf:*)".into(), "Read(./.env)".into()],
            ask: Vec::new(),
            allow: vec!["Bash(ls:*)".into()],
        };
        let handed: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"permissions":{"deny":["Read(./.env)"]}}"#).unwrap();
        let merged = super::request_settings(Some(&handed), None, Some(&rules)).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&merged).unwrap(),
            serde_json::json!({"permissions": {
                "deny": ["Read(./.env)", "Bash(rm -rf:*)"],
                "allow": ["Bash(ls:*)"],
            }})
        );
        assert_eq!(
            super::request_settings(None, None, Some(&subagent_core::PermissionRules::default())),
            None
        );
    }
}
