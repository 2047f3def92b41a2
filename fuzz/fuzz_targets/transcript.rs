//! A transcript file as a resume reads it (`subagent_session::parse_transcript`, the body of
//! `load_transcript`: torn last line skipped, a corrupt middle line an error), then the repair
//! a resumed or forked run applies: its completed-turn prefix, the dangling tool calls and
//! their placeholder answers. Whatever the file holds, no panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use subagent_session::{dangling_tool_calls, parse_transcript, repair_dangling_tool_calls};

fuzz_target!(|data: &[u8]| {
    let Ok(loaded) = parse_transcript(Path::new("/fuzz/session.jsonl"), data) else {
        return;
    };
    let prefix = loaded.log.completed_turn_prefix();
    for log in [&loaded.log, &prefix] {
        let messages = log.messages();
        let _ = dangling_tool_calls(&messages);
        let repaired = repair_dangling_tool_calls(messages);
        // Repairing twice changes nothing more.
        assert!(dangling_tool_calls(&repaired).is_empty());
    }
});
