#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Integration tests of `subagent-claude-code`.

mod suite;
