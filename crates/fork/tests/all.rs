#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Integration tests of the fork provider, against the fake model server over HTTP.

mod suite;
