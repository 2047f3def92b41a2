#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The A2A wire types against the literal JSON the official SDKs write.

mod suite;
