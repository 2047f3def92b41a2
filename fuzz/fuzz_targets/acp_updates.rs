//! What an ACP agent sends the acp provider's client. The body is
//! `subagent_fuzz_targets::acp_updates` (`crates/fuzz-targets`), which the workspace's tests also
//! run briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::acp_updates(data));
