//! `cargo xtask fuzz [--secs N] [target…]`: the coverage-guided fuzz targets of `fuzz/` (its own
//! cargo workspace, never built by the main one), run with the pinned cargo-fuzz and libFuzzer.
//!
//! It installs cargo-fuzz at [`CARGO_FUZZ`] into `target/tools` when missing (`cargo install
//! --locked`), seeds each target's corpus (`fuzz/corpus/<target>`, not committed) from the
//! small seeds committed in `fuzz/seeds/<target>`, the crates' test fixtures, the shipped presets
//! and, where present, `../shared/reference/transcripts`, builds every target once, then runs
//! each for N seconds and prints a table: executions, executions per second, corpus size and
//! crashes (new files in `fuzz/artifacts/<target>`, each a reproducer: `cargo fuzz run <target>
//! <file>`). It fails when any target crashed.
//!
//! The machine's toolchain is stable; cargo-fuzz passes nightly-only `-Z`/`-C` flags, so the
//! build runs with `RUSTC_BOOTSTRAP=1` (harmless on a nightly toolchain). No sanitizer: the
//! project's code forbids `unsafe`, so AddressSanitizer would only slow the search (panics,
//! overflows with debug assertions, stack overflows, timeouts and memory blow-ups are what a
//! run finds).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// The pinned cargo-fuzz (crates.io).
pub(crate) const CARGO_FUZZ: (&str, &str) = ("cargo-fuzz", "0.13.2");

/// Seconds per target by default.
pub(crate) const DEFAULT_SECS: u64 = 180;

/// Every target, with where its seeds come from besides `fuzz/seeds/<target>`: a directory of
/// the workspace (or `@reference/…`, the shared reference folder beside the workspace) and the
/// file-name suffix to take.
pub(crate) const TARGETS: &[(&str, &[(&str, &str)])] = &[
    (
        "claude_stream",
        &[
            ("crates/claude-code/tests/fixtures", ".stream.jsonl"),
            ("@reference/transcripts", ".stream.jsonl"),
        ],
    ),
    (
        "codex_events",
        &[
            ("crates/codex/tests/fixtures", ".jsonl"),
            ("@reference/transcripts", ".jsonl"),
        ],
    ),
    ("model_sse", &[]),
    ("preset", &[("presets", ".yaml")]),
    ("agent_definition", &[]),
    ("a2a_wire", &[]),
    ("a2a_server", &[]),
    ("acp_updates", &[("@reference/transcripts", ".wire.jsonl")]),
    ("transcript", &[]),
    ("mcp_arguments", &[]),
    ("a2a_client", &[]),
    ("acp_frames", &[]),
    ("mcp_frames", &[]),
    ("skill_file", &[]),
];

/// The largest seed copied (libFuzzer's `-max_len` follows the largest input of the corpus).
const MAX_SEED_BYTES: u64 = 256 * 1024;

fn tools_dir(root: &Path) -> PathBuf {
    root.join("target").join("tools")
}

fn cargo_fuzz_bin(root: &Path) -> PathBuf {
    tools_dir(root).join("bin").join("cargo-fuzz")
}

fn fuzz_target_dir(root: &Path) -> PathBuf {
    root.join("target").join("fuzz")
}

/// Installs the pinned cargo-fuzz into `target/tools` unless it is there.
pub(crate) fn install(root: &Path) -> Result<()> {
    let bin = cargo_fuzz_bin(root);
    let (name, version) = CARGO_FUZZ;
    let present = Command::new(&bin)
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains(version));
    if present {
        eprintln!("xtask: {name} {version} present in {}", bin.display());
        return Ok(());
    }
    eprintln!(
        "xtask: installing {name} {version} into {}",
        tools_dir(root).display()
    );
    let mut command = crate::cargo();
    command
        .args(["install", name, "--version", version, "--locked", "--root"])
        .arg(tools_dir(root))
        .env("CARGO_TARGET_DIR", tools_dir(root).join("build"));
    crate::run(root, command)
}

fn cargo_fuzz(root: &Path) -> Command {
    let mut command = Command::new(cargo_fuzz_bin(root));
    command
        .arg("fuzz")
        .current_dir(root)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_INCREMENTAL", "0");
    command
}

/// Copies every file of `dir` whose name ends with `suffix` into `corpus` (prefixed with
/// `prefix`, kept when already there). Returns how many it copied.
fn copy_seeds(dir: &Path, suffix: &str, corpus: &Path, prefix: &str) -> Result<usize> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(0);
    };
    let mut copied = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let small = entry
            .metadata()
            .is_ok_and(|meta| meta.is_file() && meta.len() <= MAX_SEED_BYTES);
        if !name.ends_with(suffix) || !small {
            continue;
        }
        let to = corpus.join(format!("seed-{prefix}-{name}"));
        if !to.exists() {
            std::fs::copy(&path, &to)
                .with_context(|| format!("copying {} to {}", path.display(), to.display()))?;
            copied += 1;
        }
    }
    Ok(copied)
}

/// Seeds `fuzz/corpus/<target>` for every target.
pub(crate) fn seed(root: &Path) -> Result<()> {
    let reference = root.join("..").join("shared").join("reference");
    for (target, sources) in TARGETS {
        let corpus = root.join("fuzz").join("corpus").join(target);
        std::fs::create_dir_all(&corpus)
            .with_context(|| format!("creating {}", corpus.display()))?;
        let mut copied = copy_seeds(
            &root.join("fuzz").join("seeds").join(target),
            "",
            &corpus,
            "fuzz",
        )?;
        for (dir, suffix) in *sources {
            let (dir, prefix) = match dir.strip_prefix("@reference/") {
                Some(rest) => (reference.join(rest), "reference"),
                None => (root.join(dir), "tests"),
            };
            copied += copy_seeds(&dir, suffix, &corpus, prefix)?;
        }
        eprintln!("xtask: fuzz/corpus/{target}: {copied} new seeds");
    }
    Ok(())
}

/// What one target's run gave.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Figures {
    /// Inputs executed.
    pub executions: u64,
    /// Executions per second, as libFuzzer reports them.
    pub per_second: u64,
    /// Inputs in the corpus at the end.
    pub corpus: u64,
}

/// The figures from libFuzzer's output (`-print_final_stats=1` lines, and the corpus size of
/// the last status line).
pub(crate) fn figures(output: &str) -> Figures {
    let mut figures = Figures::default();
    let number = |line: &str| {
        line.rsplit(':')
            .next()
            .and_then(|n| n.trim().parse::<u64>().ok())
    };
    for line in output.lines() {
        if line.starts_with("stat::number_of_executed_units:") {
            figures.executions = number(line).unwrap_or(0);
        } else if line.starts_with("stat::average_exec_per_sec:") {
            figures.per_second = number(line).unwrap_or(0);
        } else if let Some(at) = line.find(" corp: ") {
            let count = line[at + " corp: ".len()..].split('/').next();
            if let Some(count) = count.and_then(|n| n.trim().parse().ok()) {
                figures.corpus = count;
            }
        }
    }
    figures
}

fn artifacts(root: &Path, target: &str) -> Vec<PathBuf> {
    let dir = root.join("fuzz").join("artifacts").join(target);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
    found.sort();
    found
}

struct Options {
    secs: u64,
    targets: Vec<String>,
}

fn options(args: &[String]) -> Result<Options> {
    let mut secs = DEFAULT_SECS;
    let mut targets = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--secs" => {
                let value = args.next().context("--secs needs a number of seconds")?;
                secs = value
                    .parse()
                    .with_context(|| format!("--secs {value}: not a number of seconds"))?;
            }
            name if TARGETS.iter().any(|(known, _)| *known == name) => {
                targets.push(name.to_owned());
            }
            other => {
                let known: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
                bail!(
                    "unknown fuzz target or option `{other}` (targets: {})",
                    known.join(", ")
                );
            }
        }
    }
    if targets.is_empty() {
        targets = TARGETS.iter().map(|(name, _)| (*name).to_owned()).collect();
    }
    Ok(Options { secs, targets })
}

/// `cargo xtask fuzz`.
pub(crate) fn run(root: &Path, args: &[String]) -> Result<()> {
    let options = options(args)?;
    install(root)?;
    seed(root)?;
    let started = Instant::now();
    let mut build = cargo_fuzz(root);
    build
        .args(["build", "--sanitizer", "none", "--target-dir"])
        .arg(fuzz_target_dir(root));
    crate::run(root, build)?;
    eprintln!(
        "xtask: fuzz build took {:.0} s",
        started.elapsed().as_secs_f64()
    );

    let mut rows = Vec::new();
    for target in &options.targets {
        let before = artifacts(root, target);
        let corpus = root.join("fuzz").join("corpus").join(target);
        let mut command = cargo_fuzz(root);
        command
            .args(["run", "--sanitizer", "none", "--target-dir"])
            .arg(fuzz_target_dir(root))
            .arg(target)
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={}", options.secs))
            .args([
                "-print_final_stats=1",
                "-timeout=10",
                "-rss_limit_mb=2048",
                "-max_len=262144",
            ])
            .stdout(Stdio::inherit())
            .stderr(Stdio::piped());
        eprintln!("xtask: fuzzing {target} for {} s", options.secs);
        let output = command
            .output()
            .with_context(|| format!("could not run cargo fuzz run {target}"))?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let figures = figures(&stderr);
        let crashes: Vec<PathBuf> = artifacts(root, target)
            .into_iter()
            .filter(|path| !before.contains(path))
            .collect();
        if !output.status.success() && crashes.is_empty() {
            // Not a finding: the run itself failed. Show why.
            eprintln!("{stderr}");
            bail!("cargo fuzz run {target} failed with {}", output.status);
        }
        for crash in &crashes {
            eprintln!("xtask: {target}: crash reproducer {}", crash.display());
        }
        if !crashes.is_empty() {
            let tail: Vec<&str> = stderr.lines().rev().take(40).collect();
            eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
        }
        rows.push((target.clone(), figures, crashes.len()));
    }

    println!(
        "\n| target | seconds | executions | exec/s | corpus | crashes |\n|---|---:|---:|---:|---:|---:|"
    );
    for (target, figures, crashes) in &rows {
        println!(
            "| {target} | {} | {} | {} | {} | {crashes} |",
            options.secs, figures.executions, figures.per_second, figures.corpus
        );
    }
    let crashed: Vec<&str> = rows
        .iter()
        .filter(|(_, _, crashes)| *crashes > 0)
        .map(|(target, _, _)| target.as_str())
        .collect();
    if !crashed.is_empty() {
        bail!(
            "fuzz targets crashed: {} (reproducers in fuzz/artifacts)",
            crashed.join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn figures_come_from_the_final_stats_and_the_last_status_line() {
        let output = "\
#2\tINITED cov: 10 ft: 11 corp: 5/1024b exec/s: 0 rss: 30Mb
#4096\tpulse  cov: 12 ft: 13 corp: 7/2048b lim: 40 exec/s: 2048 rss: 31Mb
Done 9000 runs in 3 second(s)
stat::number_of_executed_units: 9000
stat::average_exec_per_sec:     3000
stat::new_units_added:          2
";
        assert_eq!(
            figures(output),
            Figures {
                executions: 9000,
                per_second: 3000,
                corpus: 7,
            }
        );
    }

    #[test]
    fn options_take_seconds_and_known_targets() {
        let args = ["--secs", "5", "preset"].map(String::from);
        let parsed = options(&args).unwrap();
        assert_eq!(
            (parsed.secs, parsed.targets),
            (5, vec!["preset".to_owned()])
        );
        assert!(options(&["nope".to_owned()]).is_err());
        let all = options(&[]).unwrap();
        assert_eq!(all.targets.len(), TARGETS.len());
    }
}
