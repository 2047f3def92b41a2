//! The pinned product CLIs the end-to-end tests run: `cargo xtask install-clis` installs them
//! with npm into `target/clis` when a pinned version is missing, and `cargo xtask test` calls it
//! first and turns the end-to-end tests on with [`E2E_FEATURES`].

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// npm packages and the exact versions the tests were written against
/// (`shared/reference/real-clis.md`).
pub const PINNED: &[(&str, &str)] = &[
    ("@anthropic-ai/claude-code", "2.1.197"),
    ("@openai/codex", "0.171.0"),
    ("@zed-industries/codex-acp", "0.16.0"),
    ("@zed-industries/claude-agent-acp", "0.23.1"),
    // The official ACP TypeScript SDK (protocol 1): the client that checks `subagent acp`.
    ("@agentclientprotocol/sdk", "0.17.0"),
];

/// Cargo features that turn on the end-to-end tests, one per provider crate.
pub const E2E_FEATURES: &[&str] = &[
    "subagent-claude-code/e2e",
    "subagent-codex/e2e",
    "subagent-acp/e2e",
    "subagent-cli/e2e",
];

/// Where the CLIs go: `<workspace>/target/clis` (binaries in `node_modules/.bin`).
pub fn install_dir(root: &Path) -> PathBuf {
    root.join("target").join("clis")
}

/// The `"version"` of an installed package, read from its `package.json`.
fn installed_version(dir: &Path, package: &str) -> Option<String> {
    let manifest = dir.join("node_modules").join(package).join("package.json");
    let text = std::fs::read_to_string(manifest).ok()?;
    // The first `"version": "x"` of the file is the package's own (no JSON parser needed here).
    let after = &text[text.find("\"version\"")? + "\"version\"".len()..];
    let after = after
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    Some(after[..after.find('"')?].to_owned())
}

/// `package@version` of every pinned CLI that is absent or at another version.
pub fn missing(root: &Path) -> Vec<String> {
    let dir = install_dir(root);
    PINNED
        .iter()
        .filter(|(package, version)| installed_version(&dir, package).as_deref() != Some(*version))
        .map(|(package, version)| format!("{package}@{version}"))
        .collect()
}

/// Installs the pinned CLIs unless they are all there.
pub fn install(root: &Path) -> Result<()> {
    let dir = install_dir(root);
    let missing = missing(root);
    if missing.is_empty() {
        eprintln!("xtask: pinned CLIs present in {}", dir.display());
        return Ok(());
    }
    eprintln!(
        "xtask: installing {} into {}",
        missing.join(" "),
        dir.display()
    );
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut command = Command::new("npm");
    command
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&dir)
        .args(
            PINNED
                .iter()
                .map(|(package, version)| format!("{package}@{version}")),
        )
        .current_dir(root);
    let status = command.status().with_context(
        || "could not run npm: install Node.js and npm (e.g. `apt-get install nodejs npm`)",
    )?;
    if !status.success() {
        bail!("{command:?} failed with {status}");
    }
    let still = self::missing(root);
    if !still.is_empty() {
        bail!("npm finished but {} is still missing", still.join(" "));
    }
    Ok(())
}
