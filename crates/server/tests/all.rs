#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `subagent-server` over real HTTP on 127.0.0.1: a registry of in-process children (spawn, fork)
//! against the fake model server, driven by an A2A client written from the wire reference.

mod suite;
