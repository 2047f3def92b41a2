//! The host's MCP servers in codex's terms: one `-c mcp_servers.<name>={…}` override each (codex
//! reads none of Claude Code's files, so it is handed every server the host has), with every
//! value that may be a secret passed through the child's environment, never on its command line:
//! a stdio server's `env` as `env_vars` (codex passes those variables of its own environment to
//! the server), an HTTP server's `headers` as `env_http_headers` (codex reads each header's
//! value from a variable we set).
//!
//! Observed with codex 0.171.0 (`tests/mcp.rs` of the CLI): the server's tools reach the model as
//! `mcp__<server>__<tool>`.

use std::collections::BTreeMap;

use subagent_core::mcp::{HostMcpServers, McpReach};

use crate::command::toml_string;

/// What a child is handed: the overrides (`-c` values) and the variables they name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Handover {
    /// `mcp_servers.<name>={…}`, one per server.
    pub overrides: Vec<String>,
    /// Variables set in codex's environment for the servers.
    pub env: Vec<(String, String)>,
}

/// `names` as a TOML array of strings.
fn toml_list<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let items: Vec<String> = names.map(|n| toml_string(n)).collect();
    format!("[{}]", items.join(", "))
}

/// Whether `name` can be a bare key of codex's `mcp_servers` table.
fn bare(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The handover of `servers`; `None` when there is none.
///
/// # Errors
/// What codex cannot be told, in words: a server name codex's `-c` cannot address, two servers
/// setting one variable to different values (codex passes variables by name), an SSE server
/// (codex speaks stdio and streamable HTTP only).
pub(crate) fn handover(servers: &HostMcpServers) -> Result<Option<Handover>, String> {
    if servers.0.is_empty() {
        return Ok(None);
    }
    let mut handover = Handover::default();
    let mut values: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (index, server) in servers.0.iter().enumerate() {
        let name = &server.name;
        if !bare(name) {
            return Err(format!(
                "MCP server `{name}`: codex takes server names of letters, digits, `_` and `-` only; rename it to hand it to codex"
            ));
        }
        let mut fields = match &server.reach {
            McpReach::Sse { .. } => {
                return Err(format!(
                    "MCP server `{name}` speaks SSE, which codex does not (stdio and streamable HTTP only); give it a `type: http` URL or run the agent on a claude-code row"
                ));
            }
            McpReach::Stdio { command, args, env } => {
                for (key, value) in env {
                    match values.get(key) {
                        Some((other, was)) if was != value => {
                            return Err(format!(
                                "MCP servers `{other}` and `{name}` set `{key}` to different values; codex passes variables to its servers by name, so one codex child cannot give each its own"
                            ));
                        }
                        Some(_) => {}
                        None => {
                            values.insert(key.clone(), (name.clone(), value.clone()));
                        }
                    }
                }
                let mut fields = vec![
                    format!("command={}", toml_string(command)),
                    format!("args={}", toml_list(args.iter())),
                ];
                if !env.is_empty() {
                    fields.push(format!("env_vars={}", toml_list(env.keys())));
                }
                fields
            }
            McpReach::Http { url, headers } => {
                let mut fields = vec![format!("url={}", toml_string(url))];
                if !headers.is_empty() {
                    let mut named = Vec::new();
                    for (number, (header, value)) in headers.iter().enumerate() {
                        let variable = format!("SUBAGENT_MCP_HEADER_{index}_{number}");
                        named.push(format!(
                            "{}={}",
                            toml_string(header),
                            toml_string(&variable)
                        ));
                        handover.env.push((variable, value.clone()));
                    }
                    fields.push(format!("env_http_headers={{{}}}", named.join(", ")));
                }
                fields
            }
        };
        if let Some(ms) = server.timeout_ms {
            // Milliseconds as seconds, exactly (a TOML float).
            fields.push(format!("tool_timeout_sec={:?}", ms as f64 / 1000.0));
        }
        handover
            .overrides
            .push(format!("mcp_servers.{name}={{{}}}", fields.join(", ")));
    }
    handover
        .env
        .extend(values.into_iter().map(|(key, (_, value))| (key, value)));
    Ok(Some(handover))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use subagent_core::mcp::{McpScope, McpServerSpec};

    use super::*;

    fn server(name: &str, reach: McpReach) -> McpServerSpec {
        McpServerSpec {
            name: name.into(),
            reach,
            scope: McpScope::User,
            timeout_ms: None,
        }
    }

    #[test]
    fn servers_go_as_overrides_and_their_secrets_as_variables() {
        let mut api = server(
            "api",
            McpReach::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: [("Authorization".to_owned(), "Bearer s3cret".to_owned())].into(),
            },
        );
        api.timeout_ms = Some(1500);
        let servers = HostMcpServers(vec![
            server(
                "files",
                McpReach::Stdio {
                    command: "npx".into(),
                    args: vec!["-y".into(), "a \"b\"".into()],
                    env: [("TOKEN".to_owned(), "t0ken".to_owned())].into(),
                },
            ),
            api,
        ]);
        let handover = handover(&servers).unwrap().unwrap();
        assert_eq!(
            handover.overrides,
            [
                r#"mcp_servers.files={command="npx", args=["-y", "a \"b\""], env_vars=["TOKEN"]}"#,
                r#"mcp_servers.api={url="http://127.0.0.1:9/mcp", env_http_headers={"Authorization"="SUBAGENT_MCP_HEADER_1_0"}, tool_timeout_sec=1.5}"#,
            ]
        );
        assert_eq!(
            handover.env,
            [
                (
                    "SUBAGENT_MCP_HEADER_1_0".to_owned(),
                    "Bearer s3cret".to_owned()
                ),
                ("TOKEN".to_owned(), "t0ken".to_owned()),
            ]
        );
        // No secret on the command line.
        assert!(!handover.overrides.concat().contains("s3cret"));
        assert!(!handover.overrides.concat().contains("t0ken"));
        assert_eq!(super::handover(&HostMcpServers::default()), Ok(None));
    }

    #[test]
    fn what_codex_cannot_be_told_is_refused() {
        let stdio = |value: &str| McpReach::Stdio {
            command: "x".into(),
            args: vec![],
            env: [("K".to_owned(), value.to_owned())].into(),
        };
        let clash = HostMcpServers(vec![server("a", stdio("1")), server("b", stdio("2"))]);
        assert!(
            handover(&clash)
                .unwrap_err()
                .contains("`K` to different values")
        );
        let same = HostMcpServers(vec![server("a", stdio("1")), server("b", stdio("1"))]);
        assert_eq!(handover(&same).unwrap().unwrap().env.len(), 1);
        let spaced = HostMcpServers(vec![server("my server", stdio("1"))]);
        assert!(handover(&spaced).unwrap_err().contains("letters, digits"));
    }
}
