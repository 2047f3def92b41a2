//! What servers there are: their configurations, read from the places Claude Code reads them,
//! with `${VAR}` and `${VAR:-default}` expanded.
//!
//! Deliberately not here: starting a server ([`crate::servers`]), deciding whether a project's
//! servers may start (the caller passes whether the project is trusted).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use subagent_core::mcp::{McpReach, McpScope, McpServerSpec};

use crate::error::{Error, ErrorCode, Result};

/// Where a server's configuration came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// The user's servers for this project only: `~/.claude.json`'s `projects["<dir>"].mcpServers`
    /// (Claude Code's local scope).
    Local {
        /// The file.
        path: PathBuf,
    },
    /// A project's `.mcp.json` (Claude Code's project scope).
    Project {
        /// The file.
        path: PathBuf,
    },
    /// The user's servers for every project: `~/.claude.json`'s `mcpServers` (user scope).
    User {
        /// The file.
        path: PathBuf,
    },
    /// A preset's `mcp_servers:`.
    Preset {
        /// The preset's file.
        path: PathBuf,
    },
    /// An ACP client's, for one session (`session/new {mcpServers}`).
    Session,
    /// An agent definition's `mcpServers:`, for that agent's children.
    Agent {
        /// The agent type.
        agent: String,
    },
}

impl Source {
    /// Claude Code's name for where the server is configured.
    pub fn scope(&self) -> McpScope {
        match self {
            Self::Local { .. } => McpScope::Local,
            Self::Project { .. } => McpScope::Project,
            Self::User { .. } => McpScope::User,
            Self::Preset { .. } => McpScope::Preset,
            Self::Session => McpScope::Session,
            Self::Agent { .. } => McpScope::Agent,
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Local { path } => write!(f, "{} (this project)", path.display()),
            Self::Project { path } | Self::User { path } | Self::Preset { path } => {
                write!(f, "{}", path.display())
            }
            Self::Session => f.write_str("the editor's session"),
            Self::Agent { agent } => write!(f, "agent `{agent}`'s definition"),
        }
    }
}

/// How a server is reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "transport", rename_all = "snake_case")]
pub enum Transport {
    /// A program we start, speaking MCP on its stdin and stdout.
    Stdio {
        /// The program (a name looked up on `PATH`, or a path).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment (values withheld from listings).
        #[serde(serialize_with = "names_only")]
        env: BTreeMap<String, String>,
    },
    /// A server at a URL (`http`: streamable HTTP; `sse`: the older SSE transport).
    Http {
        /// `http` or `sse`, as configured.
        #[serde(rename = "type")]
        kind: String,
        /// The URL.
        url: String,
        /// Headers sent with every request (values withheld from listings).
        #[serde(serialize_with = "names_only")]
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    /// Whether the server is a program we start (else one at a URL).
    pub fn is_stdio(&self) -> bool {
        matches!(self, Self::Stdio { .. })
    }
}

impl ServerConfig {
    /// The server `spec` describes (given already expanded), configured by `source`.
    pub fn from_spec(spec: McpServerSpec, source: Source) -> Self {
        let transport = match spec.reach {
            McpReach::Stdio { command, args, env } => Transport::Stdio { command, args, env },
            McpReach::Http { url, headers } => Transport::Http {
                kind: "http".to_owned(),
                url,
                headers,
            },
            McpReach::Sse { url, headers } => Transport::Http {
                kind: "sse".to_owned(),
                url,
                headers,
            },
        };
        Self {
            name: spec.name,
            transport,
            source,
            timeout_ms: spec.timeout_ms,
        }
    }

    /// The server as a product child is handed it; `None` for an `sse` server, which no child
    /// is given (it is refused here too).
    pub fn spec(&self) -> Option<McpServerSpec> {
        let reach = match &self.transport {
            Transport::Stdio { command, args, env } => McpReach::Stdio {
                command: command.clone(),
                args: args.clone(),
                env: env.clone(),
            },
            Transport::Http { kind, .. } if kind == "sse" => return None,
            Transport::Http { url, headers, .. } => McpReach::Http {
                url: url.clone(),
                headers: headers.clone(),
            },
        };
        Some(McpServerSpec {
            name: self.name.clone(),
            reach,
            scope: self.source.scope(),
            timeout_ms: self.timeout_ms,
        })
    }
}

/// A map's keys only: a listing names the variables and headers, never their values.
fn names_only<S: serde::Serializer>(
    map: &BTreeMap<String, String>,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_seq(map.keys())
}

/// One configured server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServerConfig {
    /// Its name: its tools are `mcp__<name>__<tool>`.
    pub name: String,
    /// How it is reached.
    #[serde(flatten)]
    pub transport: Transport,
    /// Where it was configured.
    pub source: Source,
    /// How long one tool call may take, in milliseconds (`timeout` in its configuration).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// The servers of one `mcpServers` object (`{"name": {"command": …}, …}`), in the object's
/// order, with `${VAR}` and `${VAR:-default}` expanded by `lookup` in `command`, `args`, `env`,
/// `url` and `headers`, as `.mcp.json` allows ([`subagent_core::mcp::parse_servers`]).
///
/// # Errors
/// [`ErrorCode::ConfigInvalid`] naming `path` and the server: a definition that is not an
/// object, a stdio server without `command`, a URL server without `url`, an unknown `type`, a
/// variable that is not set and has no default.
pub fn parse_servers(
    servers: &Value,
    source: &Source,
    path: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerConfig>> {
    let specs = subagent_core::mcp::parse_servers(servers, source.scope(), lookup)
        .map_err(|message| Error::config(path, message))?;
    Ok(specs
        .into_iter()
        .map(|spec| ServerConfig::from_spec(spec, source.clone()))
        .collect())
}

/// The servers configured for a run in `project` by the files Claude Code reads: the user's
/// (`~/.claude.json` `mcpServers`), the project's `.mcp.json` (only when `trusted`: a cloned
/// repository cannot start programs on its own), and the user's for this project
/// (`~/.claude.json` `projects["<project>"].mcpServers`), plus `extra` (a preset's) — a later
/// source's server replaces an earlier one of the same name, so the order of precedence is
/// local > project > user > preset, as Claude Code has local > project > user.
///
/// # Errors
/// A file that exists but does not parse ([`ErrorCode::ConfigInvalid`] with its
/// line:column), or a server of it that [`parse_servers`] refuses.
pub fn discover(
    project: &Path,
    home: Option<&Path>,
    trusted: bool,
    extra: Vec<ServerConfig>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Configured> {
    let mut servers: Vec<ServerConfig> = extra;
    let mut withheld = Vec::new();
    let claude_json = home.map(|home| home.join(".claude.json"));
    let user = match &claude_json {
        Some(path) => read_json(path)?,
        None => None,
    };
    if let (Some(path), Some(user)) = (&claude_json, &user)
        && let Some(found) = user.get("mcpServers")
    {
        let source = Source::User { path: path.clone() };
        merge(&mut servers, parse_servers(found, &source, path, lookup)?);
    }
    let mcp_json = project.join(".mcp.json");
    if let Some(file) = read_json(&mcp_json)? {
        let source = Source::Project {
            path: mcp_json.clone(),
        };
        let found = file.get("mcpServers").unwrap_or(&Value::Null);
        let parsed = if found.is_null() {
            Vec::new()
        } else {
            parse_servers(found, &source, &mcp_json, lookup)?
        };
        if trusted {
            merge(&mut servers, parsed);
        } else {
            withheld.extend(parsed);
        }
    }
    if let (Some(path), Some(user)) = (&claude_json, &user)
        && let Some(found) = user
            .get("projects")
            .and_then(|projects| projects.get(project.to_string_lossy().as_ref()))
            .and_then(|entry| entry.get("mcpServers"))
    {
        let source = Source::Local { path: path.clone() };
        merge(&mut servers, parse_servers(found, &source, path, lookup)?);
    }
    Ok(Configured { servers, withheld })
}

/// What [`discover`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Configured {
    /// The servers a run may start, each name once.
    pub servers: Vec<ServerConfig>,
    /// A project's servers that do not start because the project is not trusted.
    pub withheld: Vec<ServerConfig>,
}

/// `more` into `servers`: a server of a name already there replaces it in its place.
fn merge(servers: &mut Vec<ServerConfig>, more: Vec<ServerConfig>) {
    for server in more {
        match servers.iter_mut().find(|have| have.name == server.name) {
            Some(have) => *have = server,
            None => servers.push(server),
        }
    }
}

/// The most of a configuration file read (`~/.claude.json` keeps Claude Code's history too).
const MAX_CONFIG_BYTES: u64 = 64 << 20;

/// The JSON of `path`, `None` when it does not exist.
fn read_json(path: &Path) -> Result<Option<Value>> {
    let text = match subagent_session::read_user_text(path, MAX_CONFIG_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::config(path, e)),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        Error::new(
            ErrorCode::ConfigInvalid,
            format!("{}:{}:{}: {e}", path.display(), e.line(), e.column()),
        )
    })
}

#[cfg(test)]
mod tests;
