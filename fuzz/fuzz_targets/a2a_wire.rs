//! The A2A wire as the a2a provider and `subagent serve` read it. The body is
//! `subagent_fuzz_targets::a2a_wire` (`crates/fuzz-targets`), which the workspace's tests also run
//! briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::a2a_wire(data));
