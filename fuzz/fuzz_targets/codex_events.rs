//! `codex exec --json` stdout, line by line, into run events. The body is
//! `subagent_fuzz_targets::codex_events` (`crates/fuzz-targets`), which the workspace's tests also
//! run briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::codex_events(data));
