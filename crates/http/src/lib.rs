//! `subagent-http`: the HTTP serving that `subagent serve` (A2A, `subagent-server`) and
//! `subagent mcp --listen` (MCP streamable HTTP, `subagent-mcp`) share.
//!
//! - [`Token`]: the bearer token a client presents (`Authorization: Bearer …`), compared in
//!   constant time and never shown by `Debug`.
//! - [`serve`]: the accept loop, driving hyper per connection with a header read timeout and
//!   bounds on connections (in all, per peer, sockets held) that keep clients without a token
//!   from starving the server (`connections`), and a graceful stop.
//!
//! Deliberately not here: no route, no protocol and no refusal of a request without the token
//! (each server answers `401` its own way; the token here only decides which connections are
//! proven and never pushed out), no TLS.

mod auth;
mod connections;

pub use auth::Token;
pub use connections::{
    Bounds, MAX_HEAD, default_bounds, fd_limit, raise_fd_limit, reserved_fds, serve, socket_bound,
};
