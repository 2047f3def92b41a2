//! The MCP servers of a child's own (its request's `mcp_servers`: an agent definition's
//! `mcpServers:` definitions), started for that child alone as Claude Code connects an agent's
//! frontmatter servers when the agent starts; and the host's servers its definition names.
//!
//! Their tools join the child's after its agent type's tool filter, with only the filter's
//! `deny` applied (Claude Code adds an agent's servers' tools to the ones its `tools:` kept and
//! removes only `disallowedTools`). A server that does not start is said in a warning and the
//! child goes on without it. The servers stop when the child's tools are dropped (its run
//! ended), or at once when [`ChildServers`] is dropped first.
//!
//! Deliberately not here: the host's servers (started once per run by the host:
//! [`subagent_runtime::HostTools`]), reading the definition (`subagent-catalog`).

use std::sync::Arc;

use subagent_core::StartRequest;
use subagent_core::mcp::{AgentMcpNames, McpServerSpec};
use subagent_mcp_client::{McpServers, McpTool, Options, ServerConfig, Source};
use subagent_runtime::{Secrets, ToolSet};

/// The servers started for one child, and their tools.
pub(crate) struct ChildServers {
    /// The tools of the servers that started.
    pub tools: ToolSet,
}

impl ChildServers {
    /// Starts `request`'s own servers in its directory, `secrets` withheld from them. Nothing
    /// to start: no tools.
    pub(crate) async fn start(request: &StartRequest, secrets: &Secrets) -> Self {
        if request.mcp_servers.is_empty() {
            return Self {
                tools: ToolSet::default(),
            };
        }
        let agent = request
            .parent
            .extensions
            .get::<AgentMcpNames>()
            .map(|names| names.agent.clone())
            .unwrap_or_default();
        let configs = request
            .mcp_servers
            .iter()
            .cloned()
            .map(|spec: McpServerSpec| {
                ServerConfig::from_spec(
                    spec,
                    Source::Agent {
                        agent: agent.clone(),
                    },
                )
            })
            .collect();
        let servers = Arc::new(McpServers::new(
            configs,
            Options::new(&request.parent.cwd, secrets.clone()),
        ));
        let (tools, failed) = servers.start_all().await;
        for (name, error) in &failed {
            tracing::warn!(
                target: "subagent::mcp",
                "agent `{agent}`'s MCP server `{name}` is not available to its child: error[{}]: {}",
                error.code,
                error.message
            );
        }
        Self {
            tools: ToolSet::new(McpTool::all(&servers, tools)),
        }
    }
}

/// The host's tools of the servers `request`'s agent type names (`mcpServers: [github]`), which
/// join its tools past its `tools:` list as Claude Code has them.
pub(crate) fn named(request: &StartRequest, host: &ToolSet) -> ToolSet {
    let Some(names) = request.parent.extensions.get::<AgentMcpNames>() else {
        return ToolSet::default();
    };
    host.retain(|_, spec| {
        names.names.iter().any(|name| {
            spec.name
                .strip_prefix("mcp__")
                .and_then(|rest| rest.strip_prefix(name.as_str()))
                .is_some_and(|rest| rest.starts_with("__"))
        })
    })
}
