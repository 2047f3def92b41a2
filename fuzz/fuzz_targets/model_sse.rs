//! A model server's streamed answer: the SSE parser and the three protocols' decoders. The body is
//! `subagent_fuzz_targets::model_sse` (`crates/fuzz-targets`), which the workspace's tests also run
//! briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::model_sse(data));
