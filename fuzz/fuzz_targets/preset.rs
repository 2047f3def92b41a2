//! A preset file as `subagent` reads it (`subagent_preset::Preset::parse`): YAML, `${VAR}`
//! expansion, the format's rules and each provider row's config checked against its factory's
//! schema. Any text is a preset or an error at a position, never a panic.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use subagent_core::ProviderFactory;
use subagent_preset::Preset;

/// Variables for `${VAR}`: set, empty, one whose value looks like a reference, a long one.
fn env(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/fuzz".to_owned()),
        "EMPTY" => Some(String::new()),
        "NESTED" => Some("${HOME}/x".to_owned()),
        "API_KEY" => Some("sk-fuzz-0123456789".to_owned()),
        "LONG" => Some("x".repeat(4096)),
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let factories: Vec<Arc<dyn ProviderFactory>> = vec![
        Arc::new(subagent_spawn::SpawnFactory),
        Arc::new(subagent_fork::ForkFactory),
        Arc::new(subagent_claude_code::ClaudeCodeFactory),
        Arc::new(subagent_codex::CodexFactory),
        Arc::new(subagent_acp::AcpFactory),
        Arc::new(subagent_a2a::A2aFactory),
    ];
    let _ = Preset::parse(text, "/fuzz/preset.yaml", &factories, &env);
});
