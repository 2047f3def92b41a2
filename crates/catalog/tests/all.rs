//! Integration tests of `subagent-catalog`: files in temporary directories, loaded as the CLI
//! and the delegation tool load them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
