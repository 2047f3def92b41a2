//! Holding a known adapter's own sub-agents to a request's depth cap. The registry does not see
//! an ACP agent's sub-agents (Claude Code's Agent/Task tool through claude-agent-acp, codex's
//! multi-agent tools through codex-acp), so the only nesting depth it can hold them to is none:
//! whenever a request carries `max_depth`, the agent is told to run none, as the claude-code and
//! codex providers tell their CLIs.
//!
//! | adapter | how it is told |
//! | --- | --- |
//! | claude-agent-acp | `session/new` (and `session/load`) `_meta.claudeCode.options.disallowedTools: ["Agent", "Task"]`: the adapter hands its `claudeCode.options` to the Claude Agent SDK, which drops the tools from every model request |
//! | codex-acp | launched with `-c features.multi_agent=false -c features.multi_agent_v2=false` (what `codex --disable` sets; its codex takes no `agents.enabled`) |
//!
//! An adapter is known by its program's file name or, run by an interpreter (`node
//! …/claude-agent-acp/dist/index.js`), by an argument's path naming its package. Any other ACP
//! agent cannot be told: its row does not declare `depth_limit`, so a delegation row that must
//! forward a cap is refused before it starts (`UNSUPPORTED_CAPABILITY`).
//!
//! Deliberately not here: checking at run time that the agent is the one its program's name
//! says (`initialize` names it, but codex-acp must be told before it starts).

use std::path::Path;

use serde_json::json;

use crate::config::AcpConfig;

/// An adapter whose own sub-agents can be turned off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Adapter {
    /// `@zed-industries/claude-agent-acp`.
    Claude,
    /// `@zed-industries/codex-acp`.
    Codex,
}

impl Adapter {
    /// The adapter a row runs, when it is one of these.
    pub(crate) fn of(config: &AcpConfig) -> Option<Self> {
        let named = |path: &Path| {
            path.iter().find_map(|part| match part.to_str()? {
                "claude-agent-acp" => Some(Self::Claude),
                "codex-acp" => Some(Self::Codex),
                _ => None,
            })
        };
        named(&config.command).or_else(|| {
            config
                .args
                .iter()
                .find_map(|arg| named(Path::new(arg.as_str())))
        })
    }

    /// The arguments that turn the adapter's sub-agents off at launch.
    pub(crate) fn launch_args(self) -> Vec<String> {
        match self {
            Self::Claude => Vec::new(),
            // Not `agents.enabled=false` (which the codex CLI takes): codex-acp's codex reads
            // `agents.<name>` as agent roles and fails to start.
            Self::Codex => [
                "features.multi_agent=false",
                "features.multi_agent_v2=false",
            ]
            .into_iter()
            .flat_map(|value| ["-c".to_owned(), value.to_owned()])
            .collect(),
        }
    }

    /// The `_meta` of `session/new` and `session/load` that turns them off.
    pub(crate) fn session_meta(self) -> Option<serde_json::Map<String, serde_json::Value>> {
        match self {
            Self::Claude => {
                match json!({"claudeCode": {"options": {"disallowedTools": ["Agent", "Task"]}}}) {
                    serde_json::Value::Object(meta) => Some(meta),
                    _ => None,
                }
            }
            Self::Codex => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_adapter_is_known_by_its_program_or_an_argument_naming_its_package() {
        let of = |command: &str, args: &[&str]| {
            let mut config = AcpConfig::new(command);
            config.args = args.iter().map(|arg| (*arg).to_owned()).collect();
            Adapter::of(&config)
        };
        assert_eq!(of("codex-acp", &[]), Some(Adapter::Codex));
        assert_eq!(
            of("/opt/x/bin/claude-agent-acp", &["--verbose"]),
            Some(Adapter::Claude)
        );
        assert_eq!(
            of(
                "node",
                &["/n/node_modules/@zed-industries/claude-agent-acp/dist/index.js"]
            ),
            Some(Adapter::Claude)
        );
        assert_eq!(of("gemini", &["--experimental-acp"]), None);
        // A name that only contains one is not it.
        assert_eq!(of("my-codex-acp-wrapper", &[]), None);
    }
}
