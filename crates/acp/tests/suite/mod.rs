//! Integration tests of subagent-acp. `start` needs no adapter; `e2e` (feature `e2e`) runs the real pinned adapters
//! (`codex-acp`, `claude-agent-acp`) installed under `target/clis` against the fake model server.

mod hostile;
mod start;

#[cfg(feature = "e2e")]
mod conformance;
#[cfg(feature = "e2e")]
mod e2e;
#[cfg(feature = "e2e")]
mod e2e_asking;
#[cfg(feature = "e2e")]
mod harness;
