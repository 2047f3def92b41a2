//! `subagent mcp`'s stdin as it frames and reads it: split across reads, lines over the bound,
//! bytes that are not UTF-8, lines that are not JSON or not messages. The body is
//! `subagent_fuzz_targets::mcp_frames` (`crates/fuzz-targets`), which the workspace's tests also
//! run briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::mcp_frames(data));
