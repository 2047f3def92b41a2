//! `subagent-fuzz-targets`: what each fuzz target of `fuzz/` does with its input, one function a
//! target, shared by the two ways they run so they cannot drift:
//!
//! - the libFuzzer binaries of `fuzz/fuzz_targets/` (`cargo xtask fuzz`: coverage-guided, long,
//!   its own cargo workspace, a separate build of 16 minutes here);
//! - this crate's tests (`tests/suite/smoke.rs`, in `cargo xtask test`): every target's seeds
//!   plus a few thousand inputs mutated from them by a seeded generator, a few seconds in all.
//!   Not coverage-guided: it finds what a mutation of a seed reaches, and keeps every target
//!   building and its seeds passing in the normal tests.
//!
//! Each function takes any bytes; a panic (a failed assertion included) or a hang is a finding.
//! What each feeds and through which entry point is in `docs/reliability.md`.
//!
//! Deliberately not here: libFuzzer (the binaries link it), corpora and the seeding
//! (`cargo xtask fuzz`), anything that reaches beyond 127.0.0.1 (nothing here opens a socket).

mod a2a;
mod a2a_client;
mod acp;
mod mcp;
mod stdio;
mod text;

pub use a2a::{a2a_server, a2a_wire};
pub use a2a_client::a2a_client;
pub use acp::acp_updates;
pub use mcp::mcp_arguments;
pub use stdio::{acp_frames, mcp_frames};
pub use text::{
    agent_definition, claude_stream, codex_events, model_sse, preset, skill_file, transcript,
};

/// A fuzz target: its name (the binary's and the folder's under `fuzz/seeds`) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, in the order `cargo xtask fuzz` runs them.
pub const TARGETS: &[Target] = &[
    ("claude_stream", claude_stream),
    ("codex_events", codex_events),
    ("model_sse", model_sse),
    ("preset", preset),
    ("agent_definition", agent_definition),
    ("a2a_wire", a2a_wire),
    ("a2a_server", a2a_server),
    ("acp_updates", acp_updates),
    ("transcript", transcript),
    ("mcp_arguments", mcp_arguments),
    ("a2a_client", a2a_client),
    ("acp_frames", acp_frames),
    ("mcp_frames", mcp_frames),
    ("skill_file", skill_file),
];
