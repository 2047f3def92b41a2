//! One HTTP request to `subagent serve`'s router, in process. The body is
//! `subagent_fuzz_targets::a2a_server` (`crates/fuzz-targets`), which the workspace's tests also
//! run briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::a2a_server(data));
