//! A hostile A2A agent's card and streams as the a2a provider reads them. The body is
//! `subagent_fuzz_targets::a2a_client` (`crates/fuzz-targets`), which the workspace's tests also
//! run briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::a2a_client(data));
