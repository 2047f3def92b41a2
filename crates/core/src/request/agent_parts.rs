//! What an agent type gives its child's request beyond its settings (which
//! [`crate::agents::resolve`] layers): the skills it preloads, its memory and its MCP servers. Every place that starts a
//! child of an agent type calls [`AgentProfile::give`]: the delegation tool, `subagent
//! delegate`, the MCP server's tools, the A2A server's skills. (Its hooks are parsed where hooks
//! run: `subagent_runtime::AgentHooks`.)

use crate::StartRequest;
use crate::agents::AgentProfile;
use crate::mcp::{AgentMcpNames, AgentMcpServer};
use crate::skills::PreloadSkills;

impl AgentProfile {
    /// Puts its preloaded skills ([`PreloadSkills`]), memory
    /// ([`AgentMemory`](crate::memory::AgentMemory)) and MCP servers (those it defines in
    /// [`StartRequest::mcp_servers`], `${VAR}`s expanded from the environment now, so a row that
    /// cannot take them refuses the request; those it names as [`AgentMcpNames`]) into
    /// `request`'s extensions. Returns what to warn about: a server whose definition cannot be
    /// expanded is left out, as Claude Code leaves out a server it cannot connect.
    pub fn give(&self, request: &mut StartRequest) -> Vec<String> {
        let extensions = &mut request.parent.extensions;
        extensions.insert(crate::agents::AgentType(self.name.clone()));
        if !self.skills.is_empty() {
            extensions.insert(PreloadSkills(self.skills.clone()));
        }
        if let Some(memory) = &self.memory {
            extensions.insert(memory.clone());
        }
        let mut warnings = Vec::new();
        if self.mcp_servers.is_empty() {
            return warnings;
        }
        let lookup = |name: &str| subagent_session::env::var(name);
        let mut names = Vec::new();
        for server in &self.mcp_servers {
            match server {
                AgentMcpServer::Named(name) => names.push(name.clone()),
                AgentMcpServer::Defined(_) => match server.expand(&lookup) {
                    Ok(Some(spec)) => request.mcp_servers.push(spec),
                    Ok(None) => {}
                    Err(error) => warnings.push(format!(
                        "agent `{}`'s MCP server {error}: its child starts without it",
                        self.name
                    )),
                },
            }
        }
        request.parent.extensions.insert(AgentMcpNames {
            agent: self.name.clone(),
            names,
        });
        warnings
    }
}
