//! A skill's `SKILL.md` (Markdown, YAML frontmatter). The body is
//! `subagent_fuzz_targets::skill_file` (`crates/fuzz-targets`), which the workspace's tests also
//! run briefly; what it feeds is documented there.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| subagent_fuzz_targets::skill_file(data));
