//! `subagent acp`'s stdin as it frames it: split across reads, lines over the bound, bytes that
//! are not UTF-8. The body is `subagent_fuzz_targets::acp_frames` (`crates/fuzz-targets`), which
//! the workspace's tests also run briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::acp_frames(data));
