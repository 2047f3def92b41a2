#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The `nats` provider and the worker against a real `nats-server` (the pinned binary, started
//! per test on 127.0.0.1 with a temporary store). The worker runs a small provider written
//! here (this crate may not depend on a real one); the conformance kit with spawn rows runs in
//! crates/cli/tests.

mod suite;
