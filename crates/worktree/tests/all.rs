#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Integration tests of the worktree isolator, with real git.

mod suite;
