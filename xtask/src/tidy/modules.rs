//! The tidy rule that every integration-test file is compiled.
//!
//! A test binary is a `.rs` file directly in a crate's `tests/` (`tests/all.rs`); every other
//! `.rs` file under `tests/` is compiled only when a `mod` line reaches it from one of those
//! (`mod suite;` → `suite/mod.rs` → `mod worktree;` → `suite/worktree.rs`). A file no `mod` line
//! reaches is silently left out with all its tests (a lost `mod worktree;` once hid four), so
//! this check walks the `mod` lines as rustc resolves them and names every file they miss, with
//! the line to add.
//!
//! Understood: `mod name;` with any visibility and attributes (`#[cfg(feature = "e2e")]` still
//! compiles the file, under its feature), `#[path = "…"]` on the line before, `mod.rs` and
//! `name.rs` + `name/` layouts, and `include!("file.rs")` (the file is compiled where it is
//! pasted). Deliberately not: file modules declared inside an inline `mod name { … }` block
//! (none exist; such a file would be reported, and the fix is to move the declaration out), and
//! macros that expand to `mod` items.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{Violation, relative, rust_files};

pub(super) const RULE_TEST_MODULES: &str =
    "every integration-test file is compiled (a `mod` line reaches it from a tests/*.rs binary)";

/// The module a `mod` line declares and the `#[path]` it carries, if any.
#[derive(Debug, PartialEq, Eq)]
struct Declared {
    name: String,
    path: Option<String>,
}

/// `mod name;` on `line` (after any attributes and visibility), with the `#[path = "…"]` of
/// `attributes` (the lines just before it); `None` for anything else (an inline `mod x {`).
fn declared(line: &str, attributes: &str) -> Option<Declared> {
    let mut rest = line.trim();
    if rest.starts_with("//") {
        return None;
    }
    let mut path = path_attribute(attributes);
    // Attributes on the same line: `#[cfg(test)] mod tests;`.
    while let Some(after) = rest.strip_prefix("#[") {
        let end = after.find(']')?;
        path = path.or_else(|| path_attribute(&rest[..end + 3]));
        rest = after[end + 1..].trim_start();
    }
    if let Some(after) = rest.strip_prefix("pub") {
        rest = after.trim_start();
        if let Some(after) = rest.strip_prefix('(') {
            rest = after.split_once(')')?.1.trim_start();
        }
    }
    let rest = rest.strip_prefix("mod ")?.trim_start();
    let (name, tail) = rest.split_once(';')?;
    let name = name.trim();
    let name = name.strip_prefix("r#").unwrap_or(name);
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && (tail.trim().is_empty() || tail.trim_start().starts_with("//"));
    valid.then(|| Declared {
        name: name.to_owned(),
        path,
    })
}

/// The value of a `#[path = "…"]` attribute in `text`.
fn path_attribute(text: &str) -> Option<String> {
    let at = text.find("#[path")?;
    let rest = text[at + "#[path".len()..].trim_start().strip_prefix('=')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    rest.split_once('"').map(|(value, _)| value.to_owned())
}

/// The folder in which the modules that `file` declares live: its own folder for a `mod.rs` or
/// a test binary (`tests/all.rs`), else `<folder>/<file stem>`.
fn module_dir(file: &Path, binary: bool) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new(""));
    if binary || file.file_name().is_some_and(|name| name == "mod.rs") {
        parent.to_path_buf()
    } else {
        parent.join(file.file_stem().unwrap_or_default())
    }
}

/// Whether `file` sits directly in a crate's `tests/` folder (a test binary of its own).
fn is_binary(file: &Path) -> bool {
    file.parent()
        .and_then(Path::file_name)
        .is_some_and(|name| name == "tests")
}

/// The file an `include!("…")` on `line` pastes in, if any.
fn included(line: &str) -> Option<&str> {
    let at = line.find("include!(")?;
    let rest = line[at + "include!(".len()..]
        .trim_start()
        .strip_prefix('"')?;
    rest.split_once('"').map(|(path, _)| path)
}

/// The files reached from the test binaries among `files` (path and text; paths as given):
/// through `mod` lines, and through `include!("…")` (a file pasted in, as `crates/process`'s
/// suite runs one file twice).
fn reached(files: &[(PathBuf, String)]) -> BTreeSet<PathBuf> {
    let known: BTreeSet<&Path> = files.iter().map(|(path, _)| path.as_path()).collect();
    let text_of = |path: &Path| {
        files
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, text)| text.as_str())
    };
    let mut seen = BTreeSet::new();
    // A file to read, with the folder its `mod` lines resolve in.
    let mut queue: Vec<(PathBuf, PathBuf)> = files
        .iter()
        .map(|(path, _)| path)
        .filter(|path| is_binary(path))
        .map(|path| (path.clone(), module_dir(path, true)))
        .collect();
    while let Some((file, dir)) = queue.pop() {
        if !seen.insert((file.clone(), dir.clone())) {
            continue;
        }
        let Some(text) = text_of(&file) else {
            continue;
        };
        let here = file.parent().unwrap_or(Path::new(""));
        let mut attributes = String::new();
        for line in text.lines() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") {
                continue;
            }
            if let Some(path) = included(trimmed) {
                // Pasted into the including module: its `mod` lines resolve there.
                queue.push((here.join(path), dir.clone()));
            }
            if trimmed.starts_with("#[") && !trimmed.contains("mod ") {
                attributes.push_str(trimmed);
                continue;
            }
            if let Some(declared) = declared(line, &attributes) {
                let candidates = match &declared.path {
                    Some(path) => vec![here.join(path)],
                    None => vec![
                        dir.join(format!("{}.rs", declared.name)),
                        dir.join(&declared.name).join("mod.rs"),
                    ],
                };
                queue.extend(
                    candidates
                        .into_iter()
                        .filter(|candidate| known.contains(candidate.as_path()))
                        .map(|child| {
                            let dir = module_dir(&child, false);
                            (child, dir)
                        }),
                );
            }
            attributes.clear();
        }
    }
    seen.into_iter().map(|(file, _)| file).collect()
}

/// The `.rs` files under some crate's `tests/` (path and text) that no `mod` line reaches from
/// a test binary, each with the line that would compile it.
pub(super) fn check_test_modules(files: &[(PathBuf, String)]) -> Vec<Violation> {
    let reached = reached(files);
    let mut orphans: Vec<&PathBuf> = files
        .iter()
        .map(|(path, _)| path)
        .filter(|path| !reached.contains(*path))
        .collect();
    orphans.sort();
    orphans
        .into_iter()
        .map(|path| {
            let (name, dir) = if path.file_name().is_some_and(|name| name == "mod.rs") {
                let dir = path.parent().unwrap_or(Path::new(""));
                (
                    dir.file_name().unwrap_or_default(),
                    dir.parent().unwrap_or(Path::new("")),
                )
            } else {
                (
                    path.file_stem().unwrap_or_default(),
                    path.parent().unwrap_or(Path::new("")),
                )
            };
            let name = name.to_string_lossy();
            let parent = if dir.file_name().is_some_and(|name| name == "tests") {
                // Directly under tests/: a module of a binary, say tests/all.rs.
                format!(
                    "the test binary that should hold it ({}/all.rs)",
                    dir.display()
                )
            } else {
                let mod_rs = dir.join("mod.rs");
                let sibling = dir.with_extension("rs");
                let parent = if files.iter().any(|(p, _)| *p == sibling) {
                    sibling
                } else {
                    mod_rs
                };
                parent.display().to_string()
            };
            Violation {
                what: format!(
                    "{} is not compiled: no `mod` line reaches it, so its tests never run",
                    path.display()
                ),
                rule: RULE_TEST_MODULES,
                fix: format!("add `mod {name};` to {parent}, or delete the file if it is dead"),
            }
        })
        .collect()
}

/// Every `.rs` file under `crates/*/tests/` with its text, paths relative to `root`, sorted.
pub(super) fn test_files(root: &Path) -> Result<Vec<(PathBuf, String)>> {
    let crates = root.join("crates");
    let mut files = Vec::new();
    let entries =
        std::fs::read_dir(&crates).with_context(|| format!("reading {}", crates.display()))?;
    for entry in entries {
        let tests = entry
            .with_context(|| format!("reading {}", crates.display()))?
            .path()
            .join("tests");
        if tests.is_dir() {
            rust_files(&tests, &mut files)?;
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

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn tree(files: &[(&str, &str)]) -> Vec<(PathBuf, String)> {
        files
            .iter()
            .map(|(path, text)| (PathBuf::from(path), (*text).to_owned()))
            .collect()
    }

    fn messages(violations: &[Violation]) -> Vec<String> {
        violations.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_suite_whose_every_file_is_declared_passes() {
        let files = tree(&[
            ("crates/cli/tests/all.rs", "//! The suite.\nmod suite;\n"),
            (
                "crates/cli/tests/suite/mod.rs",
                "mod config;\n#[cfg(feature = \"e2e\")]\nmod cross_product;\npub(crate) mod support;\nmod nested;\n#[path = \"odd_name.rs\"]\nmod renamed;\n",
            ),
            ("crates/cli/tests/suite/config.rs", "#[test]\nfn a() {}\n"),
            ("crates/cli/tests/suite/cross_product.rs", ""),
            ("crates/cli/tests/suite/support.rs", ""),
            ("crates/cli/tests/suite/nested.rs", "mod inner;\n"),
            ("crates/cli/tests/suite/nested/inner.rs", ""),
            ("crates/cli/tests/suite/odd_name.rs", ""),
            ("crates/core/tests/all.rs", "mod suite;"),
            (
                "crates/core/tests/suite/mod.rs",
                "mod r#codes; // the snapshot\n",
            ),
            ("crates/core/tests/suite/codes.rs", ""),
            // One file compiled twice, pasted into two inline modules.
            ("crates/process/tests/all.rs", "mod suite;\n"),
            (
                "crates/process/tests/suite/mod.rs",
                "mod capture {\n    const GUARDED: bool = false;\n    include!(\"capture.rs\");\n}\n",
            ),
            (
                "crates/process/tests/suite/capture.rs",
                "use super::helpers;\n",
            ),
        ]);
        assert_eq!(messages(&check_test_modules(&files)), Vec::<String>::new());
    }

    #[test]
    fn an_orphan_file_is_named_with_the_mod_line_that_compiles_it() {
        let files = tree(&[
            ("crates/cli/tests/all.rs", "mod suite;\n"),
            (
                "crates/cli/tests/suite/mod.rs",
                "mod config;\n// mod worktree;\nmod helpers {\n    pub fn x() {}\n}\n",
            ),
            ("crates/cli/tests/suite/config.rs", ""),
            (
                "crates/cli/tests/suite/worktree.rs",
                "#[test]\nfn kept() {}\n",
            ),
            ("crates/cli/tests/suite/lost/mod.rs", "mod deeper;\n"),
            ("crates/cli/tests/suite/lost/deeper.rs", ""),
            ("crates/spawn/tests/all.rs", "mod suite;\n"),
            ("crates/spawn/tests/suite/mod.rs", "mod group;\n"),
            ("crates/spawn/tests/suite/group.rs", "mod found;\n"),
            ("crates/spawn/tests/suite/group/found.rs", ""),
            ("crates/spawn/tests/suite/group/stray.rs", ""),
        ]);
        let fix = |path: &str, name: &str, parent: &str| {
            format!(
                "{path} is not compiled: no `mod` line reaches it, so its tests never run\n    rule: {RULE_TEST_MODULES}\n    fix:  add `mod {name};` to {parent}, or delete the file if it is dead"
            )
        };
        assert_eq!(
            messages(&check_test_modules(&files)),
            [
                // Unreached, and so is what it declares.
                fix(
                    "crates/cli/tests/suite/lost/deeper.rs",
                    "deeper",
                    "crates/cli/tests/suite/lost/mod.rs"
                ),
                fix(
                    "crates/cli/tests/suite/lost/mod.rs",
                    "lost",
                    "crates/cli/tests/suite/mod.rs"
                ),
                // A commented-out line does not count.
                fix(
                    "crates/cli/tests/suite/worktree.rs",
                    "worktree",
                    "crates/cli/tests/suite/mod.rs"
                ),
                // The `group.rs` + `group/` layout.
                fix(
                    "crates/spawn/tests/suite/group/stray.rs",
                    "stray",
                    "crates/spawn/tests/suite/group.rs"
                ),
            ]
        );
    }

    #[test]
    fn mod_lines_are_read_as_rustc_reads_them() {
        let plain = |name: &str| {
            Some(Declared {
                name: name.to_owned(),
                path: None,
            })
        };
        assert_eq!(declared("mod a;", ""), plain("a"));
        assert_eq!(declared("  pub(super) mod b; // note", ""), plain("b"));
        assert_eq!(declared("#[cfg(test)] pub mod c;", ""), plain("c"));
        assert_eq!(
            declared("mod d;", "#[path = \"x/y.rs\"]"),
            Some(Declared {
                name: "d".into(),
                path: Some("x/y.rs".into())
            })
        );
        assert_eq!(declared("mod e {", ""), None);
        assert_eq!(declared("// mod f;", ""), None);
        assert_eq!(declared("let model = 1;", ""), None);
    }
}
