//! A preset file with `${VAR}`, checked against the providers' config schemas. The body is
//! `subagent_fuzz_targets::preset` (`crates/fuzz-targets`), which the workspace's tests also run
//! briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::preset(data));
