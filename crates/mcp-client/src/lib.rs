//! `subagent-mcp-client`: MCP servers as tool sources for in-process agents (the parent of
//! `subagent run` and every spawn or fork child).
//!
//! - [`config`]: the servers a run may use, read as Claude Code reads them (`~/.claude.json`'s
//!   user and local servers, a project's `.mcp.json` once the project is trusted, a preset's
//!   `mcp_servers:`), with `${VAR}` and `${VAR:-default}` expanded;
//! - [`McpServers`]: the servers of one run, each started once when first needed (a program
//!   over stdio, under the process owner, or a URL over streamable HTTP) and stopped with the
//!   run; a server that fails to start, exits,
//!   hangs or writes garbage gives a clear error with a stable [`ErrorCode`], and the run goes
//!   on;
//! - [`McpTool`]: each of a server's tools as `mcp__<server>__<tool>`, the name permission rules
//!   and hooks match.
//!
//! Deliberately not here: the server side (`subagent mcp`, crate `subagent-mcp`), handing
//! servers to product children (each product crate's command builder), and servers on the older
//! SSE transport, which rmcp no longer speaks ([`ErrorCode::UnsupportedTransport`]).

#![deny(missing_docs)]

pub mod config;
mod error;
mod http;
mod servers;
mod stdio;
mod tool;

pub use config::{Configured, ServerConfig, Source, Transport, discover, parse_servers};
pub use error::{Error, ErrorCode, Result};
pub use servers::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, MAX_MESSAGE_BYTES, McpServers, Options,
    ServerTool,
};
pub use tool::{McpTool, render};
