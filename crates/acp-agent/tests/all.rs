#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Integration tests of the `subagent acp` server: the official SDK's client over a pipe, the
//! parent on the fake model server.

mod suite;
