//! The headless browser of the page tests (`subagent_test_browser`): `cargo xtask
//! install-clis` (and so `cargo xtask test`, `bench`) makes sure a Chromium is there, installing
//! Debian's `chromium` package with apt-get when it is missing and we may (root, apt-get on
//! PATH). About 30 s once on Debian 12 (25 packages, ≈ 100 MB from the package registry), then
//! a `PATH` look-up.
//!
//! Deliberately not here: pinning a version. Debian's security archive replaces Chromium's
//! package with every upstream security release and drops the old one, so a pin would break
//! every fresh clone within weeks; the tests use nothing version-specific (the Chrome DevTools
//! Protocol's stable `Runtime`, `Page` and `Input` domains). Nor is there a download from
//! Google: the only network a CI run has is the package registries.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The variable naming an existing browser, which wins over `PATH` (the tests read it too).
pub(crate) const ENV: &str = "SUBAGENT_CHROMIUM";

/// The Debian packages: the browser, and a font so that a screenshot shows text on a minimal
/// image.
const PACKAGES: &[&str] = &["chromium", "fonts-dejavu-core"];

/// What a developer without apt (or without root) does instead.
fn advice() -> String {
    format!(
        "the browser tests need Chromium: install Debian's `chromium` package \
         (`sudo apt-get install chromium`; `chromium-browser` or Google Chrome elsewhere), \
         or point {ENV}=/path/to/chromium at an existing Chromium or Chrome"
    )
}

/// The names the tests look for on `PATH`, in order (`subagent_test_browser` has the
/// same list).
const NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome-stable",
    "google-chrome",
];

/// The first of [`NAMES`] on `PATH`.
fn on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| NAMES.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Whether this process runs as root (the effective id, the second of `/proc/self/status`'s
/// `Uid:` line).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// Runs apt-get quietly: `Err` with its output when it fails.
fn apt_get(args: &[&str]) -> Result<Result<(), String>> {
    let out = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .context("could not run apt-get")?;
    if out.status.success() {
        return Ok(Ok(()));
    }
    Ok(Err(format!(
        "apt-get {} failed with {}:\n{}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )))
}

/// Makes sure a Chromium is there: [`ENV`] when set (it must be a file), else one on `PATH`,
/// else Debian's package installed now.
pub(crate) fn install() -> Result<()> {
    if let Some(path) = std::env::var_os(ENV) {
        let path = Path::new(&path);
        if !path.is_file() {
            bail!("{ENV}={} is no file: {}", path.display(), advice());
        }
        eprintln!("xtask: Chromium from {ENV}={}", path.display());
        return Ok(());
    }
    if let Some(found) = on_path() {
        eprintln!("xtask: Chromium present at {}", found.display());
        return Ok(());
    }
    let apt = Command::new("apt-get")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !apt {
        bail!("no Chromium on PATH and no apt-get: {}", advice());
    }
    if !is_root() {
        bail!(
            "no Chromium on PATH, and installing it needs root: {}",
            advice()
        );
    }
    eprintln!(
        "xtask: installing {} with apt-get (about 30 s once)",
        PACKAGES.join(" ")
    );
    let install: Vec<&str> = ["install", "-qq", "-y", "--no-install-recommends"]
        .into_iter()
        .chain(PACKAGES.iter().copied())
        .collect();
    if let Err(first) = apt_get(&install)? {
        // A fresh image has no package lists yet: read them, then try once more.
        let again = match apt_get(&["update", "-qq"])? {
            Ok(()) => apt_get(&install)?,
            Err(update) => Err(update),
        };
        if let Err(again) = again {
            bail!("{first}\n{again}\n{}", advice());
        }
    }
    if on_path().is_none() {
        bail!(
            "apt-get installed {} but no Chromium is on PATH: {}",
            PACKAGES.join(" "),
            advice()
        );
    }
    Ok(())
}
