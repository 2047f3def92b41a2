//! Integration tests of `subagent-model`: every client against the fake server over real HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
