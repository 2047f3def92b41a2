//! What it takes to get `subagent`: the checks `cargo xtask test` runs on the distribution.
//!
//! - `cargo xtask package`: every crate of the workspace but xtask and the fuzz harnesses
//!   (`publish = false`) has the metadata a registry asks for (description, license, repository, readme, keywords, categories) and packages
//!   (`cargo package --workspace --no-verify`, which also refuses a path dependency without a
//!   `version`), so a provider author can depend on core, session, process, model, runtime,
//!   conformance and the rest by version; and `cargo install` of `subagent-cli` gives both of
//!   its binaries (`subagent` and `subagent-guardian`: no binary behind a feature).
//! - `cargo xtask deps`: the crates `cargo build -p subagent-cli` compiles (its tree with the
//!   default features, normal and build dependencies, this host) stay within the budget of
//!   [`BUDGET_FILE`]; raising it takes a new line there with a note saying why.
//! - `cargo xtask lean`: `subagent` builds with `--no-default-features`, and a front door it
//!   leaves out is refused with the feature that brings it back.
//! - `cargo xtask install` (in `cargo xtask ci`, not `test`: it is a release build): the
//!   README's `cargo install --locked --path crates/cli`, run as written, installs both binaries.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{cargo, run};

/// The package whose tree is budgeted and whose binaries `cargo install` must give.
const CLI: &str = "subagent-cli";

/// The binaries `cargo install subagent-cli` must install.
const BINARIES: &[&str] = &["subagent", "subagent-guardian"];

/// The crate budget: one entry a line, `<crates> <note>`; the last entry is the budget.
pub(crate) const BUDGET_FILE: &str = "xtask/crate-budget.txt";

/// The fields every packaged crate carries (`cargo metadata` names).
const REQUIRED_FIELDS: &[&str] = &[
    "description",
    "license",
    "repository",
    "readme",
    "keywords",
    "categories",
];

/// `cargo xtask package`.
pub(crate) fn package(root: &Path) -> Result<()> {
    let metadata = metadata(root)?;
    let problems = manifest_problems(&metadata);
    if !problems.is_empty() {
        bail!(
            "crates that would not package cleanly:\n  {}",
            problems.join("\n  ")
        );
    }
    let mut command = cargo();
    command.args(["package", "--workspace", "--no-verify", "--allow-dirty"]);
    for name in unpublished(&metadata) {
        command.args(["--exclude", name]);
    }
    run(root, command)?;
    eprintln!(
        "xtask: every crate packages; `cargo install` of {CLI} gives {}",
        BINARIES.join(" and ")
    );
    Ok(())
}

fn metadata(root: &Path) -> Result<Value> {
    let output = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    serde_json::from_slice(&output.stdout).context("parsing cargo metadata")
}

/// The packages that say `publish = false` (xtask, the fuzz harnesses): never packaged.
fn unpublished(metadata: &Value) -> Vec<&str> {
    metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|package| package["publish"].as_array().is_some_and(Vec::is_empty))
        .filter_map(|package| package["name"].as_str())
        .collect()
}

/// What keeps the workspace's crates from packaging as a registry wants them, one line each
/// (the packages that say `publish = false` are not held to it, `subagent-cli` must not be one).
pub(crate) fn manifest_problems(metadata: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let empty = Vec::new();
    let packages = metadata["packages"].as_array().unwrap_or(&empty);
    for package in packages {
        let name = package["name"].as_str().unwrap_or("?");
        if package["publish"].as_array().is_some_and(Vec::is_empty) {
            if name == CLI {
                problems.push(format!("{CLI}: `publish = false`"));
            }
            continue;
        }
        for field in REQUIRED_FIELDS {
            let value = &package[*field];
            let missing = match value {
                Value::Null => true,
                Value::String(text) => text.trim().is_empty(),
                Value::Array(items) => items.is_empty(),
                _ => false,
            };
            if missing {
                problems.push(format!("{name}: no `{field}`"));
            }
        }
        for dependency in package["dependencies"].as_array().unwrap_or(&empty) {
            let dev = dependency["kind"].as_str() == Some("dev");
            let path = dependency["path"].is_string();
            let versioned = dependency["req"].as_str().is_some_and(|req| req != "*");
            if path && !dev && !versioned {
                problems.push(format!(
                    "{name}: path dependency `{}` has no `version`",
                    dependency["name"].as_str().unwrap_or("?")
                ));
            }
        }
        if name == CLI {
            problems.extend(binary_problems(package));
        }
    }
    if !packages.iter().any(|package| package["name"] == CLI) {
        problems.push(format!("no package {CLI}"));
    }
    problems
}

/// `cargo install` installs every binary target that needs no feature the install lacks.
fn binary_problems(package: &Value) -> Vec<String> {
    let empty = Vec::new();
    let targets = package["targets"].as_array().unwrap_or(&empty);
    let is_bin = |target: &&Value| {
        target["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|kind| kind == "bin"))
    };
    let mut problems = Vec::new();
    for binary in BINARIES {
        match targets
            .iter()
            .filter(is_bin)
            .find(|target| target["name"] == *binary)
        {
            None => problems.push(format!("{CLI}: no binary `{binary}`")),
            Some(target) => {
                let needs = target["required-features"].as_array().map_or(0, Vec::len);
                if needs > 0 {
                    problems.push(format!(
                        "{CLI}: binary `{binary}` needs features ({}), so `cargo install` without them leaves it out",
                        target["required-features"]
                    ));
                }
            }
        }
    }
    problems
}

/// One entry of the budget file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    /// The most crates the tree may have.
    pub crates: usize,
    /// Why (a raise must say so).
    pub note: String,
}

/// The entries of the budget file (`#` lines are comments), oldest first. An entry without a
/// note is an error: the budget moves only with a reason.
pub(crate) fn parse_budget(text: &str) -> Result<Vec<Budget>> {
    let mut entries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (count, note) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let crates = count.parse().with_context(|| {
            format!(
                "{BUDGET_FILE}:{}: expected `<crates> <note>`, got {line:?}",
                index + 1
            )
        })?;
        let note = note.trim();
        if note.is_empty() {
            bail!(
                "{BUDGET_FILE}:{}: the budget {crates} has no note: say why the tree grew (or shrank)",
                index + 1
            );
        }
        entries.push(Budget {
            crates,
            note: note.to_owned(),
        });
    }
    Ok(entries)
}

/// The packages of `cargo tree` output (`--prefix none -f "{p}"`), once each.
pub(crate) fn tree_packages(tree: &str) -> BTreeSet<String> {
    tree.lines()
        .map(|line| {
            line.trim_end_matches(" (*)")
                .trim_end_matches(" (proc-macro)")
                .trim()
        })
        .filter(|line| !line.is_empty())
        .map(|line| {
            // `name vX.Y.Z (/path)` for ours: the name and version are the package.
            line.split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The crates `cargo build -p subagent-cli` compiles: its tree with the default features,
/// normal and build dependencies, for this host.
pub(crate) fn cli_tree(root: &Path, features: &[&str]) -> Result<BTreeSet<String>> {
    let mut command = cargo();
    command.args(["tree", "-p", CLI, "-e", "normal,build", "--prefix", "none"]);
    command.args(features);
    let output = command
        .current_dir(root)
        .output()
        .context("running cargo tree")?;
    if !output.status.success() {
        bail!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(tree_packages(&String::from_utf8_lossy(&output.stdout)))
}

/// `cargo xtask deps`.
pub(crate) fn deps(root: &Path) -> Result<()> {
    let text = std::fs::read_to_string(root.join(BUDGET_FILE))
        .with_context(|| format!("reading {BUDGET_FILE}"))?;
    let entries = parse_budget(&text)?;
    let Some(budget) = entries.last() else {
        bail!("{BUDGET_FILE} has no budget line (`<crates> <note>`)");
    };
    let tree = cli_tree(root, &[])?;
    let lean = cli_tree(root, &["--no-default-features"])?;
    let duplicates = duplicates(&tree);
    eprintln!(
        "xtask: {CLI} compiles {} crates (budget {}), {} with --no-default-features; \
         more than one version of: {}",
        tree.len(),
        budget.crates,
        lean.len(),
        if duplicates.is_empty() {
            "none".to_owned()
        } else {
            duplicates.join(", ")
        }
    );
    if tree.len() > budget.crates {
        bail!(
            "{CLI}'s tree grew to {} crates, past the budget of {} in {BUDGET_FILE}: trim the \
             new dependency (`cargo tree -p {CLI} -e normal,build -i NAME` shows who brings it; \
             `default-features = false`), or add a line `{} <why it is worth it>` to {BUDGET_FILE}",
            tree.len(),
            budget.crates,
            tree.len()
        );
    }
    Ok(())
}

/// The names that come in more than one version.
fn duplicates(tree: &BTreeSet<String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut twice = BTreeSet::new();
    for package in tree {
        let name = package.split(' ').next().unwrap_or(package);
        if !seen.insert(name) {
            twice.insert(name.to_owned());
        }
    }
    twice.into_iter().collect()
}

/// `cargo xtask lean`: builds `subagent` without the default features and checks that a front
/// door it left out says which feature brings it back. Run after the tests (it replaces
/// `target/debug/subagent`, which the tests run; the main job rebuilds the default one).
pub(crate) fn lean(root: &Path) -> Result<()> {
    let mut build = cargo();
    build.args([
        "build",
        "-p",
        CLI,
        "--no-default-features",
        "--bin",
        "subagent",
    ]);
    run(root, build)?;
    let binary = root.join("target").join("debug").join("subagent");
    let output = Command::new(&binary)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .current_dir(root)
        .output()
        .with_context(|| format!("running {}", binary.display()))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = "error[INVALID_ARGUMENTS]: `subagent serve` is not in this build: this \
                    `subagent` was built without the `serve` feature of subagent-cli";
    if output.status.code() != Some(2) || !stderr.contains(expected) {
        bail!(
            "the lean `subagent serve` should be refused (exit 2) with\n{expected}…\nit exited {} with stderr:\n{stderr}",
            output.status
        );
    }
    eprintln!("xtask: the lean build builds and refuses what it left out: {stderr}");
    Ok(())
}

/// The README's install command for a clone: the first `` `cargo install … --path …` `` of its
/// set-up section.
pub(crate) fn install_line(readme: &str) -> Option<String> {
    let section = readme
        .split("\n## ")
        .find(|section| section.starts_with("Set up"))?;
    // Inline code may wrap across lines in the markdown: join them first.
    let text = section.split_whitespace().collect::<Vec<_>>().join(" ");
    text.split('`')
        .skip(1)
        .step_by(2)
        .find(|code| code.starts_with("cargo install ") && code.contains(" --path "))
        .map(str::to_owned)
}

/// `cargo xtask install`: runs the README's install command as written (a release build of
/// `subagent-cli`, in `target/`), into `target/install-check` (`CARGO_INSTALL_ROOT`, so nothing
/// lands in `~/.cargo/bin`), and checks that both binaries are there and run.
pub(crate) fn install(root: &Path) -> Result<()> {
    let readme = std::fs::read_to_string(root.join("README.md")).context("reading README.md")?;
    let Some(line) = install_line(&readme) else {
        bail!("README.md's set-up section shows no `cargo install … --path …` command");
    };
    let dest = root.join("target").join("install-check");
    let _ = std::fs::remove_dir_all(&dest);
    eprintln!("xtask: the README's install command, as written: {line}");
    let status = Command::new("bash")
        .args(["-c", &line])
        .current_dir(root)
        .env("CARGO_INSTALL_ROOT", &dest)
        .status()
        .context("running bash")?;
    if !status.success() {
        bail!("the README's install command failed ({status}): {line}");
    }
    for binary in BINARIES {
        let path = dest.join("bin").join(binary);
        if !path.is_file() {
            bail!("`{line}` did not install {binary}");
        }
    }
    let version = Command::new(dest.join("bin").join("subagent"))
        .arg("--version")
        .output()
        .context("running the installed subagent")?;
    if !version.status.success() {
        bail!(
            "the installed `subagent --version` failed: {}",
            version.status
        );
    }
    eprintln!(
        "xtask: it installed {}: {}",
        BINARIES.join(" and "),
        String::from_utf8_lossy(&version.stdout).trim()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_raise_without_a_note_is_refused() {
        let text = "# budget\n280 first count\n\n250 trimmed features\n";
        assert_eq!(
            parse_budget(text).unwrap(),
            vec![
                Budget {
                    crates: 280,
                    note: "first count".into()
                },
                Budget {
                    crates: 250,
                    note: "trimmed features".into()
                },
            ]
        );
        let error = parse_budget("250 trimmed\n260\n").unwrap_err().to_string();
        assert_eq!(
            error,
            "xtask/crate-budget.txt:2: the budget 260 has no note: say why the tree grew (or shrank)"
        );
        assert!(parse_budget("many crates\n").is_err());
    }

    #[test]
    fn the_tree_counts_each_package_once() {
        let tree = "subagent-cli v0.1.0 (/w/crates/cli)\nserde v1.0.1\nserde_derive v1.0.1 (proc-macro)\nserde v1.0.1 (*)\nbase64 v0.22.1\nbase64 v0.23.1\n";
        let packages = tree_packages(tree);
        assert_eq!(packages.len(), 5);
        assert_eq!(duplicates(&packages), vec!["base64".to_owned()]);
    }

    #[test]
    fn the_install_command_is_the_set_up_sections_path_install() {
        let readme = "# x\n\n`cargo install other`\n\n## Set up (fresh)\n\nInstall it: `cargo install\n--locked --path crates/cli` in a clone, or `cargo install --locked --git URL x`.\n\n## Later\n\n`cargo install --path later`\n";
        assert_eq!(
            install_line(readme).as_deref(),
            Some("cargo install --locked --path crates/cli")
        );
        assert_eq!(install_line("## Set up\n\nnone\n"), None);
        let real = std::fs::read_to_string(crate::workspace_root().unwrap().join("README.md"));
        assert_eq!(
            install_line(&real.unwrap()).as_deref(),
            Some("cargo install --locked --path crates/cli")
        );
    }

    fn package(name: &str, extra: Value) -> Value {
        let mut package = json!({
            "name": name,
            "description": "d",
            "license": "MIT OR Apache-2.0",
            "repository": "https://example.org/r",
            "readme": "README.md",
            "keywords": ["agents"],
            "categories": ["development-tools"],
            "dependencies": [],
            "targets": [],
        });
        if let (Some(object), Some(extra)) = (package.as_object_mut(), extra.as_object()) {
            for (key, value) in extra {
                object.insert(key.clone(), value.clone());
            }
        }
        package
    }

    #[test]
    fn missing_metadata_unversioned_paths_and_gated_binaries_are_named() {
        let bins = json!({"targets": [
            {"name": "subagent", "kind": ["bin"], "required-features": []},
            {"name": "subagent-guardian", "kind": ["bin"], "required-features": ["x"]},
        ]});
        let metadata = json!({"packages": [
            package("subagent-cli", bins),
            package("subagent-core", json!({"repository": null, "dependencies": [
                {"name": "subagent-session", "path": "/w/crates/session", "req": "*", "kind": null},
                {"name": "subagent-test-support", "path": "/w/crates/t", "req": "*", "kind": "dev"},
                {"name": "serde", "req": "^1", "kind": null},
            ]})),
            package("xtask", json!({"description": null, "publish": []})),
        ]});
        assert_eq!(
            manifest_problems(&metadata),
            vec![
                "subagent-cli: binary `subagent-guardian` needs features ([\"x\"]), so `cargo install` without them leaves it out",
                "subagent-core: no `repository`",
                "subagent-core: path dependency `subagent-session` has no `version`",
            ]
        );
    }
}
