//! The host's MCP servers in ACP's terms: `session/new` (and `session/load`) carry them in
//! `mcpServers`, as the protocol has the client give an agent its servers. A stdio server's
//! command is named by an absolute path (ACP asks for one: a bare name is looked up on `PATH`
//! here); an HTTP server goes only to an agent whose `initialize` answer says
//! `mcpCapabilities.http`.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    EnvVariable, HttpHeader, McpCapabilities, McpServer, McpServerHttp, McpServerSse,
    McpServerStdio,
};
use subagent_core::mcp::{HostMcpServers, McpReach};

/// `command` as an absolute path: as written when it has a `/` (relative to `cwd`), else the
/// first executable file of that name on `path` (our `PATH`); as written when none is found (the
/// agent then says it cannot start it).
fn absolute(command: &str, cwd: &Path, path: Option<&str>) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    if command.contains('/') {
        return cwd.join(command);
    }
    path.into_iter()
        .flat_map(|path| path.split(':'))
        .filter(|dir| !dir.is_empty())
        .map(|dir| Path::new(dir).join(command))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .unwrap_or_else(|| PathBuf::from(command))
}

/// The servers of `host` for a session in `cwd`, HTTP and SSE ones only when the agent takes
/// them (its `mcpCapabilities`); each server left out is named in the returned list of skipped
/// names.
pub(crate) fn servers(
    host: &HostMcpServers,
    cwd: &Path,
    takes: &McpCapabilities,
) -> (Vec<McpServer>, Vec<String>) {
    let path = std::env::var("PATH").ok();
    let mut servers = Vec::new();
    let mut skipped = Vec::new();
    for server in &host.0 {
        match &server.reach {
            McpReach::Stdio { command, args, env } => {
                let mut stdio = McpServerStdio::new(
                    server.name.clone(),
                    absolute(command, cwd, path.as_deref()),
                );
                stdio.args = args.clone();
                stdio.env = env
                    .iter()
                    .map(|(name, value)| EnvVariable::new(name.clone(), value.clone()))
                    .collect();
                servers.push(McpServer::Stdio(stdio));
            }
            McpReach::Http { url, headers } if takes.http => {
                let mut remote = McpServerHttp::new(server.name.clone(), url.clone());
                remote.headers = headers
                    .iter()
                    .map(|(name, value)| HttpHeader::new(name.clone(), value.clone()))
                    .collect();
                servers.push(McpServer::Http(remote));
            }
            McpReach::Sse { url, headers } if takes.sse => {
                let mut remote = McpServerSse::new(server.name.clone(), url.clone());
                remote.headers = headers
                    .iter()
                    .map(|(name, value)| HttpHeader::new(name.clone(), value.clone()))
                    .collect();
                servers.push(McpServer::Sse(remote));
            }
            McpReach::Http { .. } | McpReach::Sse { .. } => skipped.push(server.name.clone()),
        }
    }
    (servers, skipped)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use subagent_core::mcp::{McpScope, McpServerSpec};

    use super::*;

    #[test]
    fn stdio_commands_become_absolute_and_http_servers_wait_for_the_agents_word() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let tool = bin.join("mcp-tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let lookup = Some(format!("/nonexistent:{}", bin.display()));
        assert_eq!(absolute("mcp-tool", dir.path(), lookup.as_deref()), tool);
        assert_eq!(
            absolute("./x/run", Path::new("/p"), lookup.as_deref()),
            PathBuf::from("/p/./x/run")
        );
        assert_eq!(
            absolute("missing", dir.path(), None),
            PathBuf::from("missing")
        );

        let host = HostMcpServers(vec![
            McpServerSpec {
                name: "files".into(),
                reach: McpReach::Stdio {
                    command: "/usr/bin/env".into(),
                    args: vec!["a".into()],
                    env: [("K".to_owned(), "v".to_owned())].into(),
                },
                scope: McpScope::Preset,
                timeout_ms: None,
            },
            McpServerSpec {
                name: "api".into(),
                reach: McpReach::Http {
                    url: "http://127.0.0.1:9/mcp".into(),
                    headers: [("Authorization".to_owned(), "Bearer t".to_owned())].into(),
                },
                scope: McpScope::User,
                timeout_ms: None,
            },
        ]);
        let (without, skipped) = servers(&host, dir.path(), &McpCapabilities::new());
        assert_eq!(skipped, ["api"]);
        assert_eq!(
            serde_json::to_value(&without).unwrap(),
            serde_json::json!([{"name": "files", "command": "/usr/bin/env", "args": ["a"], "env": [{"name": "K", "value": "v"}]}])
        );
        let (with, skipped) = servers(&host, dir.path(), &McpCapabilities::new().http(true));
        assert!(skipped.is_empty());
        assert_eq!(
            serde_json::to_value(&with[1]).unwrap(),
            serde_json::json!({"type": "http", "name": "api", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "Authorization", "value": "Bearer t"}]})
        );
    }
}
