//! MCP servers a host hands to the product children it starts: the vocabulary the host (which
//! reads `.mcp.json` and friends, crate `subagent-mcp-client`) and the product providers (which
//! give a child the servers in its own terms: claude's `--mcp-config`, codex's `mcp_servers`,
//! ACP's `session/new {mcpServers}`) share without depending on each other.
//!
//! The host puts a [`HostMcpServers`] in the build context's extensions; a provider that finds
//! it hands the servers on. Values of `env` and `headers` may be secrets: a provider never puts
//! them on a command line (other users of the machine read argv).
//!
//! An agent definition's `mcpServers:` ([`AgentMcpServer`]) names configured servers or
//! defines servers of its own; the defined ones go in the child's request
//! ([`StartRequest::mcp_servers`](crate::StartRequest::mcp_servers), gated by
//! [`Capability::McpServers`](crate::Capability::McpServers)): started for that child alone.
//! [`parse_servers`] reads the `.mcp.json` shape every source shares, `${VAR}`s expanded.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// Defined in an agent definition's `mcpServers:`, for that agent's children only.
    Agent,
}

impl McpScope {
    /// Whether Claude Code reads the server by itself (its own files), so a claude child needs
    /// it handed over only when it comes from the preset or a session.
    pub fn read_by_claude(self) -> bool {
        !matches!(self, Self::Preset | Self::Session | Self::Agent)
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
    /// A server at a URL over the older SSE transport (`type: sse`), which Claude Code still
    /// speaks and the MCP SDKs are dropping.
    Sse {
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

impl HostMcpServers {
    /// These servers and `more` (a request's [`StartRequest::mcp_servers`]
    /// (crate::StartRequest::mcp_servers)): a server of `more` replaces one of the same name in
    /// its place, as an agent's own server shadows a configured one in Claude Code.
    #[must_use]
    pub fn with(&self, more: &[McpServerSpec]) -> Self {
        let mut servers = self.0.clone();
        for server in more {
            match servers.iter_mut().find(|have| have.name == server.name) {
                Some(have) => *have = server.clone(),
                None => servers.push(server.clone()),
            }
        }
        Self(servers)
    }
}

/// The agent type a child runs and the configured servers its definition names (an extension
/// of the child's request, beside [`StartRequest::mcp_servers`](crate::StartRequest::mcp_servers)
/// for the ones it defines): an in-process provider offers the named servers' tools even where
/// the type's `tools:` leaves them out, as Claude Code does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentMcpNames {
    /// The agent type (named in what is said about its servers).
    pub agent: String,
    /// The configured servers it names.
    pub names: Vec<String>,
}

/// One entry of an agent definition's `mcpServers:` list, as Claude Code writes it: the name
/// of a configured server, or one server defined for this agent (`{name: {command: …}}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum AgentMcpServer {
    /// A server configured elsewhere (`.mcp.json`, `~/.claude.json`, the preset): its tools
    /// already reach every in-process agent, and a product child reads its own configuration.
    Named(String),
    /// A server defined in the definition, started for each of the agent's children and
    /// stopped when that child ends. Kept as written: its `${VAR}`s are expanded when a child
    /// starts ([`AgentMcpServer::expand`]).
    Defined(serde_json::Map<String, Value>),
}

impl AgentMcpServer {
    /// The entries of an `mcpServers:` value: Claude Code's list of names and single-server
    /// mappings, or (a shape Claude Code ignores) one mapping of servers by name.
    ///
    /// # Errors
    /// A sentence saying what is wrong: neither shape, an entry that is neither a name nor a
    /// mapping of exactly one server, or a definition [`parse_servers`] refuses (variables are
    /// not looked up here: a definition is checked as if each were set).
    pub fn list(value: &Value) -> Result<Vec<Self>, String> {
        let defined = |name: &String, definition: &Value| {
            let mut map = serde_json::Map::new();
            map.insert(name.clone(), definition.clone());
            parse_servers(&Value::Object(map.clone()), McpScope::Agent, &|_| {
                Some(String::new())
            })?;
            Ok(Self::Defined(map))
        };
        match value {
            Value::Null => Ok(Vec::new()),
            Value::Object(servers) => servers
                .iter()
                .map(|(name, definition)| defined(name, definition))
                .collect(),
            Value::Array(items) => items
                .iter()
                .map(|item| match item {
                    Value::String(name) if !name.trim().is_empty() => {
                        Ok(Self::Named(name.trim().to_owned()))
                    }
                    Value::Object(map) if map.len() == 1 => match map.iter().next() {
                        Some((name, definition)) => defined(name, definition),
                        None => Ok(Self::Defined(map.clone())),
                    },
                    other => Err(format!(
                        "each entry of `mcpServers` is a server's name or a mapping of exactly \
                         one server's name to its definition, not {other}"
                    )),
                })
                .collect(),
            _ => Err(
                "`mcpServers` must be a list of server names and `{name: {command: …}}` definitions"
                    .to_owned(),
            ),
        }
    }

    /// The server this entry defines, `${VAR}`s expanded by `lookup`; `None` for a name.
    ///
    /// # Errors
    /// A sentence naming the server and what is wrong (an unset variable without a default).
    pub fn expand(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<McpServerSpec>, String> {
        match self {
            Self::Named(_) => Ok(None),
            Self::Defined(map) => {
                let servers = parse_servers(&Value::Object(map.clone()), McpScope::Agent, lookup)?;
                Ok(servers.into_iter().next())
            }
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Named(name) => name,
            Self::Defined(map) => map.keys().next().map_or("", String::as_str),
        }
    }
}

/// The servers of one `mcpServers` object (`{"name": {"command": …}, …}`), in the object's
/// order, configured in `scope`, with `${VAR}` and `${VAR:-default}` expanded by `lookup` in
/// `command`, `args`, `env`, `url` and `headers`, as `.mcp.json` allows.
///
/// # Errors
/// A sentence naming the server: a definition that is not an object, a stdio server without
/// `command`, a URL server without `url`, an unknown `type`, a variable that is not set and has
/// no default.
pub fn parse_servers(
    servers: &Value,
    scope: McpScope,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<McpServerSpec>, String> {
    let Some(servers) = servers.as_object() else {
        return Err("`mcpServers` must be an object of servers by name".to_owned());
    };
    servers
        .iter()
        .map(|(name, definition)| {
            parse_server(name, definition, lookup)
                .map(|(reach, timeout_ms)| McpServerSpec {
                    name: name.clone(),
                    reach,
                    scope,
                    timeout_ms,
                })
                .map_err(|message| format!("server `{name}`: {message}"))
        })
        .collect()
}

fn parse_server(
    name: &str,
    definition: &Value,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(McpReach, Option<u64>), String> {
    if name.is_empty() || name.contains("__") {
        return Err(
            "a server's name must not be empty nor contain `__` (its tools are mcp__<server>__<tool>)"
                .into(),
        );
    }
    let Some(definition) = definition.as_object() else {
        return Err("its definition must be an object".into());
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match definition.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(value)) => expand(value, lookup).map(Some),
            Some(_) => Err(format!("`{key}` must be a string")),
        }
    };
    let map = |key: &str| -> Result<BTreeMap<String, String>, String> {
        match definition.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(entries)) => entries
                .iter()
                .map(|(k, v)| match v {
                    Value::String(v) => Ok((k.clone(), expand(v, lookup)?)),
                    _ => Err(format!("`{key}.{k}` must be a string")),
                })
                .collect(),
            Some(_) => Err(format!("`{key}` must be an object of strings")),
        }
    };
    let kind = text("type")?;
    let reach = match kind.as_deref() {
        None | Some("stdio") if definition.contains_key("command") || kind.is_some() => {
            let command = text("command")?
                .filter(|c| !c.is_empty())
                .ok_or("a stdio server needs a `command`")?;
            let args = match definition.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(args)) => args
                    .iter()
                    .map(|arg| match arg {
                        Value::String(arg) => expand(arg, lookup),
                        _ => Err("`args` must be a list of strings".to_owned()),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("`args` must be a list of strings".into()),
            };
            McpReach::Stdio {
                command,
                args,
                env: map("env")?,
            }
        }
        None | Some("http" | "sse" | "streamable-http") => {
            let url =
                text("url")?.ok_or("a server needs a `command` (stdio) or a `url` (http, sse)")?;
            let headers = map("headers")?;
            if kind.as_deref() == Some("sse") {
                McpReach::Sse { url, headers }
            } else {
                McpReach::Http { url, headers }
            }
        }
        Some(other) => return Err(format!("unknown `type` `{other}` (stdio, http or sse)")),
    };
    let timeout_ms = match definition.get("timeout") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .filter(|ms| *ms > 0)
                .ok_or("`timeout` must be a positive number of milliseconds")?,
        ),
    };
    Ok((reach, timeout_ms))
}

/// `text` with every `${VAR}` replaced by the variable's value and every `${VAR:-default}` by
/// the value or, when it is unset or empty, the default. A `$` not followed by `{` stays.
///
/// # Errors
/// A sentence naming a variable that is unset without a default, or an unclosed `${`.
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("`{text}` has a `${{` without its `}}`"));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let value = lookup(name).filter(|v| !(default.is_some() && v.is_empty()));
        match (value, default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "the environment variable `{name}` is not set and `${{{name}}}` has no default (write `${{{name}:-default}}`)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
