//! The MCP client's integration tests: real servers (the MCP reference server on node, and a
//! hostile one) started over stdio under the process owner.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Every test needs node and the reference server (`cargo xtask install-clis`).
#[cfg(feature = "e2e")]
mod suite;
