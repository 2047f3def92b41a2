//! The tidy rule that every file the project reads goes through one bounded reader.
//!
//! A path someone else can name or plant (a preset, a transcript in the state dir, a team's
//! task list) may be `/dev/zero`, a FIFO nobody writes or a link to either: `std::fs::read` of
//! the first grew `run --resume` to 23 GB, of the second hung it past SIGTERM. So outside the
//! one reader (`subagent_session::read_user_file` and its siblings in
//! `crates/session/src/user_file.rs`), the product code of `crates/*/src` may not call
//! `fs::read`, `fs::read_to_string`, `File::open` or `tokio::fs::read*`.
//!
//! What is checked: each `.rs` file under a crate's `src/` up to its `#[cfg(test)]` module (the
//! house puts unit tests last), comment lines skipped. Allowed, each for a stated reason:
//! [`ALLOWED`]. Deliberately not checked: `tests/` and `benches/` (test code reads its own
//! fixtures), and `xtask`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{Violation, relative, rust_files};

pub(super) const RULE_READS: &str = "every file is read through subagent_session::read_user_file (bounded, regular files only, never blocking)";

/// The calls that read a file without those guarantees.
const FORBIDDEN: &[&str] = &[
    "tokio::fs::read",
    "fs::read(",
    "fs::read_to_string(",
    "File::open(",
];

/// Paths (a file, or a folder ending in `/`) allowed to read directly, and why.
pub(super) const ALLOWED: &[(&str, &str)] = &[
    ("crates/session/src/user_file.rs", "the reader itself"),
    (
        "crates/process/src/",
        "reads only /proc files the kernel writes and /dev/null, and depends on no crate of ours",
    ),
    (
        "crates/test-support/",
        "test fixtures, never in the product",
    ),
    (
        "crates/test-browser/",
        "test fixtures (the page tests' browser), never in the product",
    ),
];

/// The forbidden calls in `text` (the file at `path`), before its `#[cfg(test)]` module.
pub(super) fn check_file(path: &Path, text: &str) -> Vec<Violation> {
    let shown = path.to_string_lossy().replace('\\', "/");
    if ALLOWED.iter().any(|(allowed, _)| {
        if allowed.ends_with('/') {
            shown.starts_with(allowed)
        } else {
            shown == *allowed
        }
    }) {
        return Vec::new();
    }
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        if let Some(call) = FORBIDDEN.iter().find(|call| line.contains(*call)) {
            found.push(Violation {
                what: format!("{shown}:{} calls `{call}…`", index + 1),
                rule: RULE_READS,
                fix: "read it with subagent_session::read_user_file / read_user_text (a bound that fits \
                      the file), or open it with subagent_session::open_user_file; write state files \
                      through subagent_session::private"
                    .to_owned(),
            });
        }
    }
    found
}

/// Every product source file of `crates/*/src`, paths relative to `root`, with its text.
pub(super) fn product_sources(root: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut files = Vec::new();
    let crates = root.join("crates");
    for entry in
        std::fs::read_dir(&crates).with_context(|| format!("reading {}", crates.display()))?
    {
        let src = entry?.path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files)?;
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            Ok((relative(root, &path), text))
        })
        .collect()
}

/// The rule over `files`.
pub(super) fn check_reads(files: &[(PathBuf, String)]) -> Vec<Violation> {
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
    fn a_direct_read_in_product_code_is_named_with_its_line() {
        let text = "fn a() {\n    // std::fs::read(p) in a comment is fine\n    let b = std::fs::read(p);\n    let c = tokio::fs::read_to_string(p).await;\n}\n#[cfg(test)]\nmod tests {\n    fn t() { std::fs::read(p); }\n}\n";
        let found = check_file(Path::new("crates/x/src/lib.rs"), text);
        let what: Vec<&str> = found.iter().map(|v| v.what.as_str()).collect();
        assert_eq!(
            what,
            [
                "crates/x/src/lib.rs:3 calls `fs::read(…`",
                "crates/x/src/lib.rs:4 calls `tokio::fs::read…`"
            ]
        );
        assert!(found[0].to_string().contains("read_user_file"));
    }

    #[test]
    fn the_reader_and_the_allowed_places_may_read() {
        let text = "let f = File::open(path)?;\n";
        assert!(check_file(Path::new("crates/session/src/user_file.rs"), text).is_empty());
        assert!(check_file(Path::new("crates/process/src/kill.rs"), text).is_empty());
        assert_eq!(
            check_file(Path::new("crates/session/src/other.rs"), text).len(),
            1
        );
    }
}
