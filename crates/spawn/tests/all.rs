#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Integration tests of the spawn provider and the delegation tool, against the fake model
//! server over HTTP.

mod suite;
