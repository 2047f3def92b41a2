//! Claude Code's `--output-format stream-json` stdout, line by line, into run events
//! (`subagent_claude_code::StreamState::on_line`): whatever the child prints, no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use subagent_claude_code::StreamState;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut state = StreamState::default();
    for line in text.split('\n') {
        let _ = state.on_line(line);
    }
});
