//! `docs/writing-a-provider.md` beyond its doctests: its `Cargo.toml` resolves on its own with
//! versions the project builds with, and the copy of the example crate that its conformance
//! doctest compiles (hidden lines) is the crate the page shows.

use std::path::Path;

use pretty_assertions::assert_eq;

use super::support::{fenced_blocks, root};

fn guide() -> String {
    std::fs::read_to_string(root().join("docs/writing-a-provider.md")).unwrap()
}

/// The fenced blocks of the page whose info string starts with `lang`, without their fences.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    fenced_blocks(text, |info| info.starts_with(lang))
}

/// Every version of `name` in the lock file (a crate can be there twice: two majors).
fn locked(lock: &str, name: &str) -> Vec<String> {
    let mut versions = Vec::new();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == format!("name = \"{name}\"") {
            versions.extend(
                lines
                    .next()
                    .and_then(|v| v.strip_prefix("version = \""))
                    .and_then(|v| v.strip_suffix('"'))
                    .map(str::to_owned),
            );
        }
    }
    versions
}

fn numbers(version: &str) -> Vec<u64> {
    version.split('.').map(|n| n.parse().unwrap()).collect()
}

/// Whether `version` satisfies the caret requirement `req` (`x.y.z`).
fn caret(req: &str, version: &str) -> bool {
    let (r, v) = (numbers(req), numbers(version));
    let compatible = if r[0] > 0 {
        v[0] == r[0]
    } else {
        v[0] == 0 && v[1] == r[1]
    };
    compatible && v >= r
}

/// A dependency line of the manifest: its name, and its version or path.
fn dependency(line: &str) -> Option<(String, Option<String>, Option<String>)> {
    let (name, spec) = line.split_once(" = ")?;
    let quoted = |key: &str| {
        let after = spec.split_once(&format!("{key} = \""))?.1;
        Some(after.split('"').next()?.to_owned())
    };
    let version = if spec.starts_with('"') {
        Some(spec.trim_matches('"').to_owned())
    } else {
        quoted("version")
    };
    Some((name.trim().to_owned(), version, quoted("path")))
}

#[test]
fn the_manifest_uses_versions_the_project_builds_with_and_crates_that_exist() {
    let manifest = blocks(&guide(), "toml").into_iter().next().unwrap();
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).unwrap();
    let mut section = "";
    let mut checked = Vec::new();
    for line in manifest.lines() {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        if !section.ends_with("dependencies]") || line.trim().is_empty() {
            continue;
        }
        let (name, version, path) = dependency(line).unwrap_or_else(|| panic!("{line}"));
        match (version, path) {
            (Some(req), None) => {
                let versions = locked(&lock, &name);
                assert!(!versions.is_empty(), "{name} not locked");
                assert!(
                    versions.iter().any(|version| caret(&req, version)),
                    "{name} = {req:?}: Cargo.lock has {versions:?}"
                );
            }
            (None, Some(path)) => {
                let dir = path.strip_prefix("../subagents/").unwrap();
                let crate_manifest =
                    std::fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap();
                assert!(
                    crate_manifest.contains(&format!("name = \"{name}\"")),
                    "{path} is not {name}"
                );
            }
            other => panic!("{name}: {other:?}"),
        }
        checked.push(name);
    }
    assert_eq!(
        checked,
        [
            "subagent-core",
            "subagent-model",
            "subagent-session",
            "async-trait",
            "schemars",
            "serde",
            "serde_json",
            "tokio",
            "subagent-conformance",
            "subagent-test-support",
            "tempfile",
        ]
    );
}

#[test]
fn the_manifest_resolves_on_its_own() {
    let manifest = blocks(&guide(), "toml").into_iter().next().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let project = format!("{}/", root().display());
    std::fs::write(
        dir.path().join("Cargo.toml"),
        manifest.replace("../subagents/", &project),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    // Resolution only (no download, no build): every name, version and feature must exist. The
    // code itself is compiled by the page's doctests against the same crates.
    let output = std::process::Command::new(env!("CARGO"))
        .args(["generate-lockfile", "--offline", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(Path::new(&dir.path().join("Cargo.lock")).is_file());
}

/// Each conformance doctest (`ask`'s, `run`'s) compiles a hidden copy of its crate: the copy is
/// the crate the page shows.
#[test]
fn the_conformance_doctests_compile_the_crates_the_page_shows() {
    for name in ["ask", "run"] {
        conformance_doctest_compiles_the_crate_shown(name);
    }
}

fn conformance_doctest_compiles_the_crate_shown(name: &str) {
    let rust = blocks(&guide(), "rust");
    let header = format!("// {name}/src/lib.rs\n");
    let shown = rust
        .iter()
        .find(|block| block.starts_with(&header))
        .unwrap_or_else(|| panic!("no block {header}"));
    let shown = shown.strip_prefix(&header).unwrap();
    let test = rust
        .iter()
        .find(|block| block.starts_with(&format!("// {name}/tests/conformance.rs\n")))
        .unwrap_or_else(|| panic!("no conformance block of {name}"));
    // Between `# mod subagent_<name> {` and the hidden `main`, less the module's closing brace.
    let opening = format!("# mod subagent_{name} {{");
    let mut module: Vec<&str> = test
        .lines()
        .skip_while(|line| *line != opening)
        .skip(1)
        .take_while(|line| !line.starts_with("# // The page's own run"))
        .collect();
    assert_eq!(module.pop(), Some("# }"), "{name}");
    let hidden: String = module
        .into_iter()
        .map(|line| {
            let line = line.strip_prefix('#').unwrap();
            format!("{}\n", line.strip_prefix(' ').unwrap_or(line))
        })
        .collect();
    assert_eq!(hidden, shown, "{name}");
}

/// The `config:` of an `ask` row as the page's `AskConfig` reads it.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct AskConfig {
    model: subagent_model::ModelConfig,
}

/// A factory with the page's kind and config schema (building is not what is checked).
struct AskKind;

impl subagent_core::ProviderFactory for AskKind {
    fn kind(&self) -> &str {
        "ask"
    }

    fn summary(&self) -> &str {
        "the page's example"
    }

    fn capabilities(&self) -> subagent_core::Capabilities {
        subagent_core::Capabilities::NONE
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::schema_for!(AskConfig)
    }

    fn build(
        &self,
        _name: &str,
        _config: &serde_json::Value,
        _context: &subagent_core::BuildContext,
    ) -> subagent_core::Result<std::sync::Arc<dyn subagent_core::SubagentProvider>> {
        Err(subagent_core::Error::invalid("not built here"))
    }
}

#[test]
fn the_preset_row_loads() {
    let yaml = blocks(&guide(), "yaml").into_iter().next().unwrap();
    let factories: Vec<std::sync::Arc<dyn subagent_core::ProviderFactory>> =
        vec![std::sync::Arc::new(AskKind)];
    // As written: the page's snippet is a whole preset.
    let preset = subagent_preset::Preset::parse(&yaml, "guide.yaml", &factories, &|_: &str| None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        preset
            .providers
            .iter()
            .map(|row| (row.name.as_str(), row.kind.as_str()))
            .collect::<Vec<_>>(),
        [("ask", "ask")]
    );
}
