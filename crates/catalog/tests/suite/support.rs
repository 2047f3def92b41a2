//! Fixtures: definition files in temporary directories.

use std::path::{Path, PathBuf};

/// Writes `text` to `root/relative`, creating parent directories.
pub(super) fn write(root: &Path, relative: &str, text: &str) -> PathBuf {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// A temp dir and its `agents/` holding `files` (name, text).
pub(super) fn agents_in(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("agents");
    for (name, text) in files {
        write(&dir, name, text);
    }
    (root, dir)
}

/// A minimal valid definition.
pub(super) fn agent(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nYou are {name}.\n")
}

/// The warnings as displayed, with `root` replaced by `<root>` so tables can spell them.
pub(super) fn shown(warnings: &[subagent_catalog::Warning], root: &Path) -> Vec<String> {
    warnings
        .iter()
        .map(|w| w.to_string().replace(&root.display().to_string(), "<root>"))
        .collect()
}
