//! The settings crate's integration tests: real files in temporary directories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
