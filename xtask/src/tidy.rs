//! `cargo xtask tidy`: the house rules of `AGENTS.md` that neither rustc nor clippy checks, run
//! first by `cargo xtask test` so a violation fails CI.
//!
//! From `cargo metadata --no-deps` (dependencies of every kind: normal, build and dev):
//! - `session` depends on no crate of ours;
//! - `core` depends on no crate of ours but `session`;
//! - a provider never depends on another provider, not even for its tests (tests that need two
//!   providers live in `crates/cli/tests`, the one place that links them all);
//! - `model` does not depend on `runtime`;
//! - `settings` (settings files, permission rules, hook configuration: plain data and matching)
//!   depends on no crate of ours but `session` (the runtime, the CLI and the providers build on
//!   it);
//! - `worktree` (git worktree isolation, an infrastructure crate under the registry) depends on
//!   no crate of ours but `core`, `session` and `process`;
//! - nothing but `cli` links every provider (dev-dependencies are tests and are exempt).
//!
//! Which crates are providers is read from their manifests, never from a list here: a provider
//! crate says
//!
//! ```toml
//! [package.metadata.subagents]
//! kind = "provider"
//! ```
//!
//! and a crate whose `src/` implements `ProviderFactory` without saying so fails the check.
//! Every `.rs` file under `crates/` and `xtask/` stays within [`MAX_LINES`] lines. Finally,
//! every `.rs` file under a crate's `tests/` is compiled: a `mod` line reaches it from a test
//! binary (`modules.rs`; a file nothing declares silently hides its tests), and each crate's
//! top-level modules form no cycle through `crate::`/`super::` paths (`cycles.rs`, with its
//! short, commented allow-list).
//!
//! What it deliberately does not do: build anything, or look at third-party crates.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::cargo;

mod cycles;
mod modules;
mod reach;
mod reads;
mod sources;

/// The longest a source file may be (`AGENTS.md`: a file over ~800 lines is two files).
pub(crate) const MAX_LINES: usize = 800;

const SESSION: &str = "subagent-session";
const CORE: &str = "subagent-core";
const MODEL: &str = "subagent-model";
const RUNTIME: &str = "subagent-runtime";
const WORKTREE: &str = "subagent-worktree";
const SETTINGS: &str = "subagent-settings";
const PROCESS: &str = "subagent-process";
const CLI: &str = "subagent-cli";

/// The one value `[package.metadata.subagents] kind` may take.
const PROVIDER_KIND: &str = "provider";

/// The folders whose `.rs` files are held to [`MAX_LINES`].
const SOURCE_DIRS: &[&str] = &["crates", "xtask"];

/// How a crate depends on another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DepKind {
    Normal,
    Build,
    Dev,
}

impl DepKind {
    fn noun(self) -> &'static str {
        match self {
            Self::Normal => "dependency",
            Self::Build => "build-dependency",
            Self::Dev => "dev-dependency",
        }
    }
}

/// A dependency on another crate of the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dependency {
    pub name: String,
    pub kind: DepKind,
}

/// A workspace crate as the checks see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Package {
    pub name: String,
    /// The manifest, relative to the workspace root (`crates/fork/Cargo.toml`).
    pub manifest: PathBuf,
    /// `[package.metadata.subagents] kind`, if set.
    pub kind: Option<String>,
    /// Its dependencies on crates of the workspace, in manifest order.
    pub dependencies: Vec<Dependency>,
}

impl Package {
    fn is_provider(&self) -> bool {
        self.kind.as_deref() == Some(PROVIDER_KIND)
    }

    /// The crate's folder, relative to the workspace root.
    fn dir(&self) -> &Path {
        self.manifest.parent().unwrap_or(Path::new(""))
    }
}

/// One broken rule: what, which rule, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Violation {
    pub what: String,
    pub rule: &'static str,
    pub fix: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}\n    rule: {}\n    fix:  {}",
            self.what, self.rule, self.fix
        )
    }
}

const RULE_SESSION: &str = "`session` depends on no crate of ours";
const RULE_CORE: &str = "`core` depends on no crate of ours but `session`";
const RULE_PROVIDER: &str = "a provider never depends on another provider, not even for its tests";
const RULE_MODEL: &str = "`model` does not depend on `runtime`";
const RULE_WORKTREE: &str =
    "`worktree` depends on no crate of ours but `core`, `session` and `process`";
const RULE_SETTINGS: &str = "`settings` depends on no crate of ours but `session`";
const RULE_EVERY_PROVIDER: &str = "only `cli` (and tests) link every provider";
const RULE_MARKER: &str = "a crate that implements `ProviderFactory` declares `[package.metadata.subagents] kind = \"provider\"`";
const RULE_KIND: &str = "`[package.metadata.subagents] kind` is \"provider\" or absent";
const RULE_LINES: &str = "a source file stays within 800 lines";

/// The workspace crates of `cargo metadata --format-version 1 --no-deps` output, by name.
pub(crate) fn parse_metadata(metadata: &Value) -> Result<Vec<Package>> {
    let root = metadata["workspace_root"]
        .as_str()
        .context("cargo metadata has no workspace_root")?;
    let raw = metadata["packages"]
        .as_array()
        .context("cargo metadata has no packages")?;
    let names: BTreeSet<&str> = raw.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut packages = Vec::new();
    for package in raw {
        let name = package["name"]
            .as_str()
            .context("a package without a name")?;
        let manifest = package["manifest_path"]
            .as_str()
            .with_context(|| format!("{name} has no manifest_path"))?;
        let manifest = Path::new(manifest)
            .strip_prefix(root)
            .unwrap_or(Path::new(manifest))
            .to_path_buf();
        let kind = match &package["metadata"]["subagents"]["kind"] {
            Value::Null => None,
            Value::String(kind) => Some(kind.clone()),
            other => Some(other.to_string()),
        };
        let mut dependencies = Vec::new();
        for dependency in package["dependencies"].as_array().into_iter().flatten() {
            let Some(dep) = dependency["name"].as_str() else {
                continue;
            };
            if !names.contains(dep) {
                continue;
            }
            let kind = match dependency["kind"].as_str() {
                None => DepKind::Normal,
                Some("build") => DepKind::Build,
                Some("dev") => DepKind::Dev,
                Some(other) => bail!("{name}: unknown dependency kind {other:?} for {dep}"),
            };
            dependencies.push(Dependency {
                name: dep.to_owned(),
                kind,
            });
        }
        packages.push(Package {
            name: name.to_owned(),
            manifest,
            kind,
            dependencies,
        });
    }
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(packages)
}

/// The dependency rules and the marker's spelling.
pub(crate) fn check_dependencies(packages: &[Package]) -> Vec<Violation> {
    let providers: Vec<&str> = packages
        .iter()
        .filter(|p| p.is_provider())
        .map(|p| p.name.as_str())
        .collect();
    let mut violations = Vec::new();
    for package in packages {
        let manifest = package.manifest.display();
        let name = package.name.as_str();
        if let Some(kind) = package.kind.as_deref().filter(|k| *k != PROVIDER_KIND) {
            violations.push(Violation {
                what: format!("{name} declares [package.metadata.subagents] kind = {kind:?}"),
                rule: RULE_KIND,
                fix: format!(
                    "write kind = \"provider\" if it is a provider, else remove the table from {manifest}"
                ),
            });
        }
        for dep in &package.dependencies {
            let (on, noun) = (dep.name.as_str(), dep.kind.noun());
            let what = format!("{name} has a {noun} on {on}");
            if name == SESSION {
                violations.push(Violation {
                    what,
                    rule: RULE_SESSION,
                    fix: format!(
                        "session is plain data: move what needs {on} out of session (or the shared type into it) and remove {on} from {manifest}"
                    ),
                });
            } else if name == CORE && on != SESSION {
                violations.push(Violation {
                    what,
                    rule: RULE_CORE,
                    fix: format!(
                        "core is the seam every crate builds on: move the code that needs {on} out of core (to {on} or a crate above both) and remove {on} from {manifest}"
                    ),
                });
            } else if package.is_provider() && providers.contains(&on) {
                violations.push(Violation {
                    what: format!("provider {name} has a {noun} on provider {on}"),
                    rule: RULE_PROVIDER,
                    fix: format!(
                        "move what needs both providers (tests included) to crates/cli/tests, the one place that links every provider, and remove {on} from {manifest}"
                    ),
                });
            } else if name == WORKTREE && ![CORE, SESSION, PROCESS].contains(&on) {
                violations.push(Violation {
                    what,
                    rule: RULE_WORKTREE,
                    fix: format!(
                        "worktree isolation sits under the registry, beside the providers: move what needs {on} to the caller (a test of both goes to crates/cli/tests or the other crate's tests) and remove {on} from {manifest}"
                    ),
                });
            } else if name == SETTINGS && on != SESSION {
                violations.push(Violation {
                    what,
                    rule: RULE_SETTINGS,
                    fix: format!(
                        "settings is plain data the CLI, the runtime and the providers all read: move what needs {on} to the caller and remove {on} from {manifest}"
                    ),
                });
            } else if name == MODEL && on == RUNTIME {
                violations.push(Violation {
                    what,
                    rule: RULE_MODEL,
                    fix: format!(
                        "the runtime builds on model, not the reverse: move the code that needs the runtime into {RUNTIME} and remove it from {manifest}"
                    ),
                });
            }
        }
        let linked: BTreeSet<&str> = package
            .dependencies
            .iter()
            .filter(|d| d.kind != DepKind::Dev)
            .map(|d| d.name.as_str())
            .collect();
        if name != CLI && !providers.is_empty() && providers.iter().all(|p| linked.contains(p)) {
            violations.push(Violation {
                what: format!(
                    "{name} depends on every provider ({})",
                    providers.join(", ")
                ),
                rule: RULE_EVERY_PROVIDER,
                fix: format!(
                    "only {CLI} composes the providers: take them as `ProviderFactory` values from the caller, or move this code into crates/cli (a test may dev-depend on them); then remove them from {manifest}"
                ),
            });
        }
    }
    violations
}

/// Crates that implement `ProviderFactory` (`implementors`: crate name and the file) without
/// the provider marker.
pub(crate) fn check_markers(
    packages: &[Package],
    implementors: &[(String, PathBuf)],
) -> Vec<Violation> {
    implementors
        .iter()
        .filter_map(|(name, file)| {
            let package = packages.iter().find(|p| &p.name == name)?;
            if package.is_provider() {
                return None;
            }
            Some(Violation {
                what: format!(
                    "{name} implements ProviderFactory ({}) but does not declare itself a provider",
                    file.display()
                ),
                rule: RULE_MARKER,
                fix: format!(
                    "add `[package.metadata.subagents]` with `kind = \"provider\"` to {} (docs/writing-a-provider.md), or move a test-only factory under tests/",
                    package.manifest.display()
                ),
            })
        })
        .collect()
}

/// Source files over [`MAX_LINES`] (`files`: path and line count).
pub(crate) fn check_lengths(files: &[(PathBuf, usize)]) -> Vec<Violation> {
    files
        .iter()
        .filter(|(_, lines)| *lines > MAX_LINES)
        .map(|(path, lines)| Violation {
            what: format!("{} has {lines} lines", path.display()),
            rule: RULE_LINES,
            fix: "split it into two coherent modules (AGENTS.md: a file over ~800 lines is two files)"
                .to_owned(),
        })
        .collect()
}

/// Every `.rs` file under `dir` (skipping `target` and hidden folders), sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out)?;
            }
        } else if kind.is_file() && name.ends_with(".rs") {
            out.push(path);
        }
    }
    Ok(())
}

fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

/// Every `.rs` file under `crates/` and `xtask/` with its text, paths relative to `root`.
fn sources(root: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        rust_files(&root.join(dir), &mut files)?;
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

/// Whether a line opens an `impl ProviderFactory for …` (plain or path-qualified).
fn implements_factory(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("impl") && line.contains("ProviderFactory for ")
}

/// The crates whose `src/` implements `ProviderFactory`, with the first such file.
fn factory_implementors(root: &Path, packages: &[Package]) -> Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    for package in packages {
        let mut files = Vec::new();
        let src = root.join(package.dir()).join("src");
        if src.is_dir() {
            rust_files(&src, &mut files)?;
        }
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            if text.lines().any(implements_factory) {
                found.push((package.name.clone(), relative(root, &file)));
                break;
            }
        }
    }
    Ok(found)
}

/// Every rule over the workspace at `root`.
pub(crate) fn violations(root: &Path) -> Result<Vec<Violation>> {
    let output = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .context("could not run cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let metadata: Value =
        serde_json::from_slice(&output.stdout).context("cargo metadata printed invalid JSON")?;
    let packages = parse_metadata(&metadata)?;
    let mut found = check_dependencies(&packages);
    found.extend(reach::check_reach(&packages));
    found.extend(check_markers(
        &packages,
        &factory_implementors(root, &packages)?,
    ));
    let sources = sources(root)?;
    let lengths: Vec<(PathBuf, usize)> = sources
        .iter()
        .map(|(path, text)| (path.clone(), text.lines().count()))
        .collect();
    found.extend(check_lengths(&lengths));
    found.extend(sources::check_sources(&sources));
    found.extend(modules::check_test_modules(&modules::test_files(root)?));
    found.extend(reads::check_reads(&reads::product_sources(root)?));
    found.extend(cycles::check_cycles(&cycles::crate_sources(
        root, &packages,
    )?));
    Ok(found)
}

/// `cargo xtask tidy`: prints every violation and fails if there is one.
pub(crate) fn run(root: &Path) -> Result<()> {
    let found = violations(root)?;
    if found.is_empty() {
        eprintln!("xtask: tidy: the house rules hold");
        return Ok(());
    }
    for violation in &found {
        eprintln!("tidy: {violation}\n");
    }
    bail!(
        "tidy: {} house rule violation(s), listed above",
        found.len()
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn package(name: &str, provider: bool, deps: &[(&str, Option<&str>)]) -> Value {
        let folder = name.trim_start_matches("subagent-");
        json!({
            "name": name,
            "manifest_path": format!("/ws/crates/{folder}/Cargo.toml"),
            "metadata": if provider { json!({"subagents": {"kind": "provider"}}) } else { Value::Null },
            "dependencies": deps
                .iter()
                .map(|(dep, kind)| json!({"name": dep, "kind": kind}))
                .chain([json!({"name": "serde", "kind": null})])
                .collect::<Vec<_>>(),
        })
    }

    fn metadata(packages: Vec<Value>) -> Value {
        json!({"workspace_root": "/ws", "packages": packages})
    }

    fn messages(violations: &[Violation]) -> Vec<String> {
        violations.iter().map(ToString::to_string).collect()
    }

    /// The layering of the real workspace, in small.
    fn layered() -> Vec<Value> {
        vec![
            package("subagent-session", false, &[]),
            package("subagent-core", false, &[("subagent-session", None)]),
            package("subagent-model", false, &[("subagent-session", None)]),
            package(
                "subagent-runtime",
                false,
                // The hook runner reads the hook configuration: settings sits below the runtime.
                &[
                    ("subagent-core", None),
                    ("subagent-model", None),
                    ("subagent-settings", None),
                ],
            ),
            package(
                "subagent-spawn",
                true,
                &[
                    ("subagent-core", None),
                    ("subagent-runtime", None),
                    ("subagent-test-support", Some("dev")),
                ],
            ),
            package("subagent-codex", true, &[("subagent-core", None)]),
            package("subagent-test-support", false, &[("subagent-model", None)]),
            package(
                "subagent-worktree",
                false,
                &[("subagent-core", None), ("subagent-process", None)],
            ),
            package(
                "subagent-cli",
                false,
                &[
                    ("subagent-spawn", None),
                    ("subagent-codex", None),
                    ("subagent-test-support", Some("dev")),
                ],
            ),
            // A crate whose tests link every provider: allowed.
            package(
                "subagent-preset",
                false,
                &[
                    ("subagent-core", None),
                    ("subagent-spawn", Some("dev")),
                    ("subagent-codex", Some("dev")),
                ],
            ),
            package("subagent-settings", false, &[("subagent-session", None)]),
        ]
    }

    #[test]
    fn a_layered_graph_passes() {
        let packages = parse_metadata(&metadata(layered())).unwrap();
        assert_eq!(
            messages(&check_dependencies(&packages)),
            Vec::<String>::new()
        );
        assert_eq!(
            packages
                .iter()
                .filter(|p| p.is_provider())
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>(),
            ["subagent-codex", "subagent-spawn"]
        );
        // Third-party dependencies are not ours and are dropped.
        assert_eq!(
            packages[0],
            Package {
                name: "subagent-cli".into(),
                manifest: "crates/cli/Cargo.toml".into(),
                kind: None,
                dependencies: vec![
                    Dependency {
                        name: "subagent-spawn".into(),
                        kind: DepKind::Normal
                    },
                    Dependency {
                        name: "subagent-codex".into(),
                        kind: DepKind::Normal
                    },
                    Dependency {
                        name: "subagent-test-support".into(),
                        kind: DepKind::Dev
                    },
                ],
            }
        );
    }

    #[test]
    fn every_broken_dependency_rule_is_named_with_its_fix() {
        let mut packages = layered();
        let settings = packages.len() - 1;
        packages[settings] = package(
            "subagent-settings",
            false,
            &[("subagent-session", None), ("subagent-core", Some("dev"))],
        );
        packages[0] = package(
            "subagent-session",
            false,
            &[("subagent-model", Some("dev"))],
        );
        packages[1] = package(
            "subagent-core",
            false,
            &[
                ("subagent-session", None),
                ("subagent-runtime", Some("build")),
            ],
        );
        packages[2] = package(
            "subagent-model",
            false,
            &[("subagent-session", None), ("subagent-runtime", None)],
        );
        packages[5] = package(
            "subagent-codex",
            true,
            &[("subagent-core", None), ("subagent-spawn", Some("dev"))],
        );
        packages.push(package(
            "subagent-glue",
            false,
            &[("subagent-codex", None), ("subagent-spawn", None)],
        ));
        packages[7] = package(
            "subagent-worktree",
            false,
            &[("subagent-core", None), ("subagent-runtime", Some("dev"))],
        );
        let mut typo = package("subagent-echo", false, &[("subagent-core", None)]);
        typo["metadata"] = json!({"subagents": {"kind": "provder"}});
        packages.push(typo);
        let packages = parse_metadata(&metadata(packages)).unwrap();
        assert_eq!(
            messages(&check_dependencies(&packages)),
            [
                format!(
                    "provider subagent-codex has a dev-dependency on provider subagent-spawn\n    rule: {RULE_PROVIDER}\n    fix:  move what needs both providers (tests included) to crates/cli/tests, the one place that links every provider, and remove subagent-spawn from crates/codex/Cargo.toml"
                ),
                format!(
                    "subagent-core has a build-dependency on subagent-runtime\n    rule: {RULE_CORE}\n    fix:  core is the seam every crate builds on: move the code that needs subagent-runtime out of core (to subagent-runtime or a crate above both) and remove subagent-runtime from crates/core/Cargo.toml"
                ),
                format!(
                    "subagent-echo declares [package.metadata.subagents] kind = \"provder\"\n    rule: {RULE_KIND}\n    fix:  write kind = \"provider\" if it is a provider, else remove the table from crates/echo/Cargo.toml"
                ),
                format!(
                    "subagent-glue depends on every provider (subagent-codex, subagent-spawn)\n    rule: {RULE_EVERY_PROVIDER}\n    fix:  only subagent-cli composes the providers: take them as `ProviderFactory` values from the caller, or move this code into crates/cli (a test may dev-depend on them); then remove them from crates/glue/Cargo.toml"
                ),
                format!(
                    "subagent-model has a dependency on subagent-runtime\n    rule: {RULE_MODEL}\n    fix:  the runtime builds on model, not the reverse: move the code that needs the runtime into subagent-runtime and remove it from crates/model/Cargo.toml"
                ),
                format!(
                    "subagent-session has a dev-dependency on subagent-model\n    rule: {RULE_SESSION}\n    fix:  session is plain data: move what needs subagent-model out of session (or the shared type into it) and remove subagent-model from crates/session/Cargo.toml"
                ),
                format!(
                    "subagent-settings has a dev-dependency on subagent-core\n    rule: {RULE_SETTINGS}\n    fix:  settings is plain data the CLI, the runtime and the providers all read: move what needs subagent-core to the caller and remove subagent-core from crates/settings/Cargo.toml"
                ),
                format!(
                    "subagent-worktree has a dev-dependency on subagent-runtime\n    rule: {RULE_WORKTREE}\n    fix:  worktree isolation sits under the registry, beside the providers: move what needs subagent-runtime to the caller (a test of both goes to crates/cli/tests or the other crate's tests) and remove subagent-runtime from crates/worktree/Cargo.toml"
                ),
            ]
        );
    }

    #[test]
    fn a_factory_without_the_marker_is_named() {
        let packages = parse_metadata(&metadata(layered())).unwrap();
        let implementors = vec![
            (
                "subagent-spawn".to_owned(),
                PathBuf::from("crates/spawn/src/lib.rs"),
            ),
            (
                "subagent-runtime".to_owned(),
                PathBuf::from("crates/runtime/src/x.rs"),
            ),
        ];
        assert_eq!(
            messages(&check_markers(&packages, &implementors)),
            [format!(
                "subagent-runtime implements ProviderFactory (crates/runtime/src/x.rs) but does not declare itself a provider\n    rule: {RULE_MARKER}\n    fix:  add `[package.metadata.subagents]` with `kind = \"provider\"` to crates/runtime/Cargo.toml (docs/writing-a-provider.md), or move a test-only factory under tests/"
            )]
        );
        assert!(implements_factory(
            "impl ProviderFactory for SpawnFactory {"
        ));
        assert!(implements_factory(
            "    impl subagent_core::ProviderFactory for Echo {"
        ));
        assert!(!implements_factory("/// a ProviderFactory for presets"));
    }

    #[test]
    fn files_over_the_limit_are_listed_with_their_length() {
        let files = vec![
            (PathBuf::from("crates/a/src/lib.rs"), MAX_LINES),
            (PathBuf::from("crates/b/src/big.rs"), MAX_LINES + 12),
            (PathBuf::from("xtask/src/main.rs"), 10),
        ];
        assert_eq!(
            messages(&check_lengths(&files)),
            [format!(
                "crates/b/src/big.rs has 812 lines\n    rule: {RULE_LINES}\n    fix:  split it into two coherent modules (AGENTS.md: a file over ~800 lines is two files)"
            )]
        );
    }

    #[test]
    fn the_real_workspace_passes() {
        let root = crate::workspace_root().unwrap();
        assert_eq!(messages(&violations(&root).unwrap()), Vec::<String>::new());
    }
}
