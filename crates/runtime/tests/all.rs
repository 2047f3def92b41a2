#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Integration tests of the agent loop and its tools, against the fake model server over HTTP.

mod suite;
