//! The MCP servers a client names in `session/new`, in the vocabulary the factory starts them
//! from ([`McpServerSpec`]).

use agent_client_protocol::v1::schema::McpServer;
use subagent_core::mcp::{McpReach, McpScope, McpServerSpec};

/// `servers` as specs; the older SSE transport (which `initialize` does not offer) is refused
/// with the text.
pub(crate) fn specs(servers: &[McpServer]) -> Result<Vec<McpServerSpec>, String> {
    servers
        .iter()
        .map(|server| {
            let (name, reach) = match server {
                McpServer::Stdio(stdio) => (
                    stdio.name.clone(),
                    McpReach::Stdio {
                        command: stdio.command.display().to_string(),
                        args: stdio.args.clone(),
                        env: stdio
                            .env
                            .iter()
                            .map(|var| (var.name.clone(), var.value.clone()))
                            .collect(),
                    },
                ),
                McpServer::Http(http) => (
                    http.name.clone(),
                    McpReach::Http {
                        url: http.url.clone(),
                        headers: http
                            .headers
                            .iter()
                            .map(|header| (header.name.clone(), header.value.clone()))
                            .collect(),
                    },
                ),
                McpServer::Sse(sse) => {
                    return Err(format!(
                        "MCP server `{}` uses the SSE transport, which this agent does not offer (mcpCapabilities.sse is false): give it over HTTP or stdio",
                        sse.name
                    ));
                }
                _ => return Err("an MCP server of a transport this agent does not know".to_owned()),
            };
            Ok(McpServerSpec {
                name,
                reach,
                scope: McpScope::Session,
                timeout_ms: None,
            })
        })
        .collect()
}
