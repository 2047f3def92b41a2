//! A test's sandbox for a product CLI: a temp dir of named subdirectories (HOME, TMPDIR, a
//! project) that a test hands the child through the provider's config, never through this
//! process's environment.

use tempfile::TempDir;

/// A temp dir named `prefix…` holding the subdirectories `dirs`, made in order (a nested one
/// after its parent).
///
/// # Panics
/// When the temp dir or a subdirectory cannot be made.
#[must_use]
pub fn dirs(prefix: &str, dirs: &[&str]) -> TempDir {
    let root = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .unwrap_or_else(|e| panic!("a temp dir {prefix}…: {e}"));
    for dir in dirs {
        let path = root.path().join(dir);
        std::fs::create_dir(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    root
}
