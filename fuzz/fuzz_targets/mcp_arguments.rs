//! A `tools/call`'s arguments as `subagent mcp` reads them, then the registry's gates. The body is
//! `subagent_fuzz_targets::mcp_arguments` (`crates/fuzz-targets`), which the workspace's tests also
//! run briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::mcp_arguments(data));
