//! `codex exec --json` stdout, line by line, into run events
//! (`subagent_codex::StreamState::line`): whatever the child prints, no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use subagent_codex::StreamState;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut state = StreamState::default();
    let mut out = Vec::new();
    for line in text.split('\n') {
        let _ = state.line(line, &mut out);
    }
});
