//! Integration tests of `subagent-test-support`: the fake server as the real CLIs use it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
