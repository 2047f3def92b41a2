#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Integration tests of teams: the store under concurrent writers, the tools, delivery.

mod suite;
