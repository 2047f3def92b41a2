//! The MCP servers a run's in-process agents use (crate `subagent-mcp-client`): the user's
//! (`~/.claude.json`), a trusted project's `.mcp.json` and the preset's `mcp_servers:`, started
//! when a run begins; their tools go to the parent and, through the [`HostTools`] handle every
//! spawn provider was built with, to every spawn child (a fork copies its parent's tools).
//!
//! Deliberately not here: `subagent mcp`, the server side (`crate::mcp`).

use std::path::Path;
use std::sync::Arc;

use subagent_core::mcp::HostMcpServers;
use subagent_mcp_client::{Configured, McpServers, McpTool, Options, Source};
use subagent_preset::Preset;
use subagent_runtime::{HostTools, Secrets, Tool};
use subagent_settings::EffectiveSettings;

use crate::{Refusal, RefusalCode};

/// A run's MCP servers: what is configured, the servers (none started yet) and the handle their
/// tools go into.
pub(crate) struct McpSetup {
    /// The servers and the project's withheld ones.
    pub configured: Configured,
    /// The servers of the run.
    pub servers: Arc<McpServers>,
    /// Filled with their tools by [`McpSetup::start`].
    pub host_tools: HostTools,
    /// The tools [`McpSetup::start`] gave (the servers start once, however often it is called).
    started: tokio::sync::OnceCell<Vec<Arc<dyn Tool>>>,
}

impl McpSetup {
    /// The servers configured for a run in `cwd`: the settings' trust decides whether the
    /// project's `.mcp.json` counts.
    pub(crate) fn configure(
        preset: &Preset,
        settings: &EffectiveSettings,
        cwd: &Path,
        secrets: &Secrets,
    ) -> Result<Self, Refusal> {
        let lookup = |name: &str| subagent_session::env::var(name);
        let refuse = |error: subagent_mcp_client::Error| {
            Refusal::new(RefusalCode::Mcp(error.code), error.message)
        };
        let from_preset = match &preset.mcp_servers {
            Some(servers) => subagent_mcp_client::parse_servers(
                servers,
                &Source::Preset {
                    path: preset.path.clone(),
                },
                &preset.path,
                &lookup,
            )
            .map_err(refuse)?,
            None => Vec::new(),
        };
        let configured = subagent_mcp_client::discover(
            &settings.locations.project,
            settings.locations.home.as_deref(),
            settings.trust.trusted,
            from_preset,
            &lookup,
        )
        .map_err(refuse)?;
        let servers = Arc::new(McpServers::new(
            configured.servers.clone(),
            Options::new(cwd, secrets.clone()),
        ));
        Ok(Self {
            configured,
            servers,
            host_tools: HostTools::new(),
            started: tokio::sync::OnceCell::new(),
        })
    }

    /// The servers as product children are handed them (claude's `--mcp-config`, codex's
    /// `mcp_servers`, ACP's `session/new`).
    pub(crate) fn handed(&self) -> HostMcpServers {
        HostMcpServers(
            self.configured
                .servers
                .iter()
                .filter_map(subagent_mcp_client::ServerConfig::spec)
                .collect(),
        )
    }

    /// Starts every server (once: a later call gives the same tools), says on stderr which
    /// could not start (and which of the project's wait for trust), fills the host's handle and
    /// returns the tools for the parent.
    pub(crate) async fn start(&self) -> Vec<Arc<dyn Tool>> {
        self.started.get_or_init(|| self.start_once()).await.clone()
    }

    async fn start_once(&self) -> Vec<Arc<dyn Tool>> {
        if !self.configured.withheld.is_empty() {
            let names: Vec<&str> = self
                .configured
                .withheld
                .iter()
                .map(|server| server.name.as_str())
                .collect();
            eprintln!(
                "warning: the project's .mcp.json servers ({}) do not start until you trust the project: `subagent trust` (see `subagent settings`)",
                names.join(", ")
            );
        }
        if self.configured.servers.is_empty() {
            return Vec::new();
        }
        let (tools, failed) = self.servers.start_all().await;
        for (name, error) in &failed {
            eprintln!(
                "warning: MCP server `{name}` is not available to this run: error[{}]: {}",
                error.code, error.message
            );
        }
        let tools = McpTool::all(&self.servers, tools);
        self.host_tools.set(tools.iter().cloned());
        tools
    }
}

/// The servers an ACP client names for one session (`session/new {mcpServers}`), started in
/// `cwd` with `secrets` withheld: their tools for the session's parents, and the servers, which
/// stop when the session's tools are dropped. A server that does not start is said on stderr
/// and the session goes on without it, as a run does.
#[cfg(feature = "acp")]
pub(crate) async fn session_servers(
    specs: Vec<subagent_core::mcp::McpServerSpec>,
    cwd: &Path,
    secrets: &Secrets,
) -> subagent_acp_agent::SessionTools {
    if specs.is_empty() {
        return subagent_acp_agent::SessionTools::default();
    }
    let configs = specs
        .into_iter()
        .map(|spec| subagent_mcp_client::ServerConfig::from_spec(spec, Source::Session))
        .collect();
    let servers = Arc::new(McpServers::new(configs, Options::new(cwd, secrets.clone())));
    let (tools, failed) = servers.start_all().await;
    for (name, error) in &failed {
        eprintln!(
            "warning: the session's MCP server `{name}` is not available: error[{}]: {}",
            error.code, error.message
        );
    }
    subagent_acp_agent::SessionTools {
        tools: McpTool::all(&servers, tools),
        keep: Some(servers),
    }
}
