//! Checks over the recorded transcripts a product CLI's crate keeps in `tests/fixtures` (the
//! lines [`crate::cli_lines::transcript_lines`] reads): the same check in each crate, with the
//! crate's own reading of a line.

use std::collections::BTreeSet;
use std::path::Path;

/// Every line of the recorded transcripts in `tests/fixtures` of the crate at `manifest_dir`
/// (its `CARGO_MANIFEST_DIR`), with its file's name, in file-name order.
///
/// # Panics
/// When the fixtures cannot be read.
#[must_use]
pub fn fixture_lines(manifest_dir: &str) -> Vec<(String, String)> {
    let dir = Path::new(manifest_dir).join("tests/fixtures");
    crate::cli_lines::transcript_lines(&dir)
        .unwrap_or_else(|e| panic!("the fixtures in {}: {e}", dir.display()))
}

/// Checks that every line of `lines` is read as what it says it is (`read_as`, the parser's
/// reading, names each line's kind as `written_as`, its own fields, do), and returns the kinds
/// read, each once, in order.
///
/// # Panics
/// When a line is read as anything else (the first such line's file and both kinds shown).
#[must_use]
pub fn kinds_read_as_written(
    lines: &[(String, String)],
    read_as: impl Fn(&str) -> String,
    written_as: impl Fn(&str) -> String,
) -> Vec<String> {
    let mut kinds = BTreeSet::new();
    for (name, line) in lines {
        let read = read_as(line);
        assert_eq!(read, written_as(line), "{name}: {line}");
        kinds.insert(read);
    }
    kinds.into_iter().collect()
}
