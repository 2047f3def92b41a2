//! A transcript file as a resume loads it, then the dangling-tool-call repair. The body is
//! `subagent_fuzz_targets::transcript` (`crates/fuzz-targets`), which the workspace's tests also
//! run briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::transcript(data));
