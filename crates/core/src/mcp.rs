//! MCP servers a host hands to the product children it starts: the vocabulary the host (which
//! reads `.mcp.json` and friends, crate `subagent-mcp-client`) and the product providers (which
//! give a child the servers in its own terms: claude's `--mcp-config`, codex's `mcp_servers`,
//! ACP's `session/new {mcpServers}`) share without depending on each other.
//!
//! The host puts a [`HostMcpServers`] in the build context's extensions; a provider that finds
//! it hands the servers on. Values of `env` and `headers` may be secrets: a provider never puts
//! them on a command line (other users of the machine read argv).

use std::collections::BTreeMap;

/// Where a server is configured, in Claude Code's names for its scopes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McpScope {
    /// The preset's `mcp_servers:` (no product reads it by itself).
    Preset,
    /// `~/.claude.json`'s top-level `mcpServers`.
    User,
    /// A trusted project's `.mcp.json`.
    Project,
    /// `~/.claude.json`'s `projects["<dir>"].mcpServers`.
    Local,
    /// Given by an ACP client for one session (`session/new {mcpServers}`).
    Session,
}

impl McpScope {
    /// Whether Claude Code reads the server by itself (its own files), so a claude child needs
    /// it handed over only when it comes from the preset or a session.
    pub fn read_by_claude(self) -> bool {
        !matches!(self, Self::Preset | Self::Session)
    }
}

/// How a server is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpReach {
    /// A program started with `args`, `env` added to its environment, speaking MCP on stdio.
    Stdio {
        /// The program (looked up on `PATH`, or a path).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: BTreeMap<String, String>,
    },
    /// A server at a URL, over MCP's streamable HTTP, `headers` sent with every request.
    Http {
        /// The endpoint.
        url: String,
        /// Headers for every request.
        headers: BTreeMap<String, String>,
    },
}

/// One server, its `${VAR}`s already expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServerSpec {
    /// Its name: its tools are `mcp__<name>__<tool>`.
    pub name: String,
    /// How it is reached.
    pub reach: McpReach,
    /// Where it is configured.
    pub scope: McpScope,
    /// How long one tool call may take, in milliseconds, when configured.
    pub timeout_ms: Option<u64>,
}

/// The MCP servers of the host's run, in their configured order (an extension of the build
/// context: product providers hand them to their children).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostMcpServers(pub Vec<McpServerSpec>);
