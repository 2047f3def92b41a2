//! An agent-definition file (Markdown with YAML frontmatter) as the catalog reads it
//! (`subagent_catalog::parse_definition`): any text is a definition or an error, never a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use subagent_catalog::{Source, parse_definition};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_definition(Path::new("/fuzz/agents/fuzzed.md"), text, Source::Project);
});
