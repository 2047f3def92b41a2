//! Tidy rules read from the source text: where `unsafe` may be allowed, and why a test is
//! ignored.
//!
//! The workspace lints deny `unsafe_code` (not `forbid`, which no inner `allow` can lift, so the
//! one module that needs it can share the workspace lints), and every `unsafe` block needs its
//! `// SAFETY:` line (`clippy::undocumented_unsafe_blocks`). This check keeps the effect of
//! `forbid`: `allow(unsafe_code)` appears only where [`UNSAFE_ALLOWED`] says, with the reason.
//! An `#[ignore]` must say why (`#[ignore = "…"]`): AGENTS.md has no ignored tests, and one
//! that is ignored without a reason is a test nobody will run again.

use std::path::{Path, PathBuf};

use super::Violation;

pub(super) const RULE_UNSAFE: &str =
    "`unsafe` is allowed only where tidy's list says (the process owner's clone and exec)";
pub(super) const RULE_IGNORE: &str = "an ignored test says why: #[ignore = \"reason\"]";

/// Files that may `allow(unsafe_code)`, and why.
pub(super) const UNSAFE_ALLOWED: &[(&str, &str)] = &[
    (
        "crates/process/src/vfork.rs",
        "the parent-death signal must be set by the child between clone and exec",
    ),
    (
        "crates/process/tests/suite/spawn.rs",
        "a helper test closes its own stdin to test a host without one",
    ),
];

/// The violations in `text`, the file at `path` (relative to the workspace).
pub(super) fn check_file(path: &Path, text: &str) -> Vec<Violation> {
    let shown = path.to_string_lossy().replace('\\', "/");
    let unsafe_allowed = UNSAFE_ALLOWED.iter().any(|(file, _)| *file == shown);
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let at = format!("{shown}:{}", index + 1);
        let attribute = code.starts_with("#[") || code.starts_with("#![");
        if !unsafe_allowed && attribute && code.contains("allow(") && code.contains("unsafe_code") {
            found.push(Violation {
                what: format!("{at} allows unsafe code"),
                rule: RULE_UNSAFE,
                fix: "do it without `unsafe` (rustix has safe wrappers for most system calls), or move \
                      it into crates/process/src/vfork.rs"
                    .to_owned(),
            });
        }
        if code.starts_with("#[ignore]") {
            found.push(Violation {
                what: format!("{at} ignores a test without a reason"),
                rule: RULE_IGNORE,
                fix: "make the test run (AGENTS.md: no #[ignore]), or say why: #[ignore = \"reason\"]"
                    .to_owned(),
            });
        }
    }
    found
}

/// The rules over `files` (path relative to the workspace, text).
pub(super) fn check_sources(files: &[(PathBuf, String)]) -> Vec<Violation> {
    files
        .iter()
        .flat_map(|(path, text)| check_file(path, text))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn unsafe_outside_the_list_and_a_bare_ignore_are_named() {
        let text = "#![allow(unsafe_code)]\n// #[allow(unsafe_code)] in a comment\n#[ignore]\nfn a() {}\n#[ignore = \"needs a GPU\"]\nfn b() {}\n";
        let found = check_file(Path::new("crates/x/src/lib.rs"), text);
        let what: Vec<&str> = found.iter().map(|v| v.what.as_str()).collect();
        assert_eq!(
            what,
            [
                "crates/x/src/lib.rs:1 allows unsafe code",
                "crates/x/src/lib.rs:3 ignores a test without a reason"
            ]
        );
        assert!(
            check_file(Path::new("crates/process/src/vfork.rs"), text)
                .iter()
                .all(|v| v.rule == RULE_IGNORE)
        );
    }
}
