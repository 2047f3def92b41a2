//! Integration tests of subagent-codex. `spawn` needs no CLI; `e2e` (feature `e2e`) runs the real
//! `codex` CLI installed under `target/clis` against the fake model server.

mod fake_cli;
mod spawn;

#[cfg(feature = "e2e")]
mod conformance;
#[cfg(feature = "e2e")]
mod e2e;
#[cfg(feature = "e2e")]
mod e2e_admission;
#[cfg(feature = "e2e")]
mod e2e_failures;
#[cfg(feature = "e2e")]
mod e2e_isolation;
#[cfg(feature = "e2e")]
mod harness;
