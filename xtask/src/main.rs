//! Project chores: `cargo xtask ci`, `cargo xtask test`, `cargo xtask tidy`, `cargo xtask bench`,
//! `cargo xtask install-clis` (the pinned product CLIs for the end-to-end tests, see `clis.rs`, and
//! the browser tests' headless Chromium, `chromium.rs`),
//! `cargo xtask fuzz` (the fuzz targets of `fuzz/`, see `fuzz.rs`), `cargo xtask load` (a load
//! run on `subagent serve`, see `load.rs`), `cargo xtask chaos` (the chaos harness's long runs, see
//! `chaos.rs`), `cargo xtask package`, `deps`, `lean` and `install` (what it takes to get
//! `subagent`, see `dist.rs`).
//!
//! `test` is the README's test command: it checks the house rules (`tidy.rs`: crate layering,
//! provider markers, file length, test files no `mod` line reaches), that every crate packages
//! and the CLI's dependency tree stays within its budget (`dist.rs`), then runs every test of
//! the workspace (with nextest when it is installed, then once more with plain `cargo test`,
//! whose threads share one process and which runs the doctests; else `cargo test`), then builds the lean
//! `subagent` (`--no-default-features`). `ci` adds the format check and clippy with warnings
//! denied, and ends with the README's install command (`cargo xtask install`, a release build).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

mod chaos;
mod chromium;
mod clis;
mod dist;
mod fuzz;
mod load;
mod readme;
mod tidy;

const HELP: &str = "\
cargo xtask <command>

Commands:
  test    check the house rules (tidy), that every crate packages (package) and the CLI's
          tree stays within its crate budget (deps), install the pinned CLIs if missing,
          check that git is on PATH, then run every test of the workspace, the end-to-end
          tests against the real CLIs and real git included, then build the lean
          `subagent` (lean), then the README's main-job command as written (the README's
          test command)
  tidy    check the house rules: crate layering from cargo metadata, provider markers,
          no source file over 800 lines, every integration-test file reached by a mod line
  package every crate but xtask has a registry's metadata and packages (`cargo package
          --workspace --no-verify`: path dependencies need a version), and `cargo install`
          of subagent-cli gives both subagent and subagent-guardian
  deps    the crates `cargo build -p subagent-cli` compiles (default features, normal and
          build dependencies) stay within the last budget of xtask/crate-budget.txt; a
          raise is a new line there with a note
  lean    build subagent with --no-default-features and check that a command it left out
          (serve) is refused with the feature that brings it back
  main-job
          run the README's main-job command (its set-up section's `cargo run` line) as
          written, with no key and a fresh state dir (the last step of `test`)
  install-clis
          npm-install the pinned claude and codex CLIs into target/clis when missing,
          pip-install the pinned Python packages, and apt-get install Debian's chromium
          (the browser tests' headless browser) when no Chromium is on PATH and
          SUBAGENT_CHROMIUM names none
  install run the README's `cargo install --locked --path crates/cli` as written (a release
          build) into target/install-check and check that both binaries are there and run
  ci      tidy, package, deps, cargo fmt --check, clippy with warnings denied (the workspace,
          then the CLI with each of its front doors alone), every test (as `test`), then install
  bench   install the pinned CLIs if missing, then run every benchmark (divan, and the
          paired ones each bench prints first; the product-overhead benches run the real
          CLIs); results go into docs/performance.md by hand
  fuzz [--secs N] [target…]
          install the pinned cargo-fuzz if missing, seed the corpora, build the fuzz targets
          of fuzz/ and run each for N seconds (default 180); prints executions and crashes
          per target and fails if any crashed (reproducers in fuzz/artifacts)
  load [--clients N] [--soak-secs S] [--pace-ms P] [--answer-bytes B] [--idle-secs S]
       [--sample-ms M] [--slowloris N [--slowloris-peers P] [--slowloris-runs R]]
       [--fd-limit N] [--no-build]
          build subagent, fake-model and the load client (release; --no-build takes
          the binaries already in target/release), start serve on
          loopback over the fake model, then N clients (default 1000) stream runs: all
          at once, then one each every P ms (5000) for S seconds (600); with --slowloris,
          N half-open connections from P addresses (127.0.0.2 on) held open while R
          runs (100) go through; --answer-bytes makes the model's answer B bytes of
          words, --idle-secs samples the idle server S seconds more, --fd-limit starts
          serve under `ulimit -n N` (soft and hard); samples the
          server's RSS and fds from /proc (every M ms, 5000), prints the figures
          (docs/reliability.md) and fails on any error, RSS growth over the soak or an
          unclean exit
  chaos [--rounds N] [--provider P…] [--seed S] [--only PART…]
          the chaos harness (crates/cli/tests/suite/chaos) with N rounds (default 100) of
          each scenario: SIGINT/SIGTERM/SIGHUP/SIGKILL of subagent mid-run per provider
          (processes left), SIGINT at random points (outcomes missing or wrong), serve's
          streams cut and the server killed (events lost or doubled), nats workers killed
          (jobs lost or doubled); prints the table of docs/reliability.md (also in
          target/chaos/<seed>/table.md) and fails on any defect. Slow: a round takes 1-3 s
          on 2 shared cores, so the defaults (every provider, 100 rounds) take about 1.5-2
          hours (measured: 46 min for spawn, fork, a2a and nats, 54 min for the three real
          CLIs' signals and cancels); split it with --provider and --only
  help    this text
";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if asks_for_help(&args) {
        print!("{HELP}");
        return Ok(());
    }
    let root = workspace_root()?;
    match args.first().map(String::as_str) {
        Some("test") => {
            tidy::run(&root)?;
            dist::package(&root)?;
            dist::deps(&root)?;
            test(&root, &args[1..])
        }
        Some("package") => dist::package(&root),
        Some("deps") => dist::deps(&root),
        Some("lean") => dist::lean(&root),
        Some("install") => dist::install(&root),
        Some("tidy") => tidy::run(&root),
        Some("ci") => {
            tidy::run(&root)?;
            dist::package(&root)?;
            dist::deps(&root)?;
            fmt_check(&root)?;
            clippy(&root)?;
            test(&root, &args[1..])?;
            dist::install(&root)
        }
        Some("bench") => bench(&root, &args[1..]),
        Some("install-clis") => clis::install(&root),
        Some("main-job") => readme::run_main_job(&root),
        Some("fuzz") => fuzz::run(&root, &args[1..]),
        Some("chaos") => chaos::run(&root, &args[1..]),
        Some("load") => load::run(&root, &args[1..]),
        Some("help" | "-h" | "--help") | None => {
            print!("{HELP}");
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{HELP}"),
    }
}

/// `-h` or `--help` anywhere (`cargo xtask load --help` too): the commands and their options are
/// all in [`HELP`].
fn asks_for_help(args: &[String]) -> bool {
    args.iter().any(|arg| arg == "-h" || arg == "--help")
}

fn workspace_root() -> Result<PathBuf> {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .context("xtask has no parent directory")
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn run(root: &Path, mut command: Command) -> Result<()> {
    command.current_dir(root);
    eprintln!("xtask: running {command:?}");
    let status = command
        .status()
        .with_context(|| format!("could not run {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed with {status}");
    }
    Ok(())
}

fn has_nextest() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// The worktree isolation tests (`crates/worktree`, and the providers' and the CLI's
/// isolation tests) run the real `git`: say so up front rather than as a hundred failures.
fn require_git() -> Result<()> {
    let found = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        bail!(
            "the tests need `git` on PATH (worktree isolation runs the real git): install it, e.g. `apt-get install git`"
        );
    }
    Ok(())
}

fn test(root: &Path, extra: &[String]) -> Result<()> {
    clis::install(root)?;
    require_git()?;
    let features = clis::E2E_FEATURES.join(",");
    if has_nextest() {
        let mut command = cargo();
        command.args(["nextest", "run", "--workspace", "--no-fail-fast"]);
        command.args(["--features", &features]);
        command.args(extra);
        run(root, command)?;
        // Then once more as plain `cargo test` runs them, every test of a binary as a thread
        // of one process (a test that reads process-wide state must still pass: it runs itself
        // alone, `subagent_test_support::alone`), with the doctests nextest does not run.
        let mut plain = cargo();
        plain.args(["test", "--workspace", "--no-fail-fast"]);
        plain.args(["--features", &features]);
        plain.args(extra);
        run(root, plain)?;
    } else {
        let mut command = cargo();
        command.args(["test", "--workspace", "--no-fail-fast"]);
        command.args(["--features", &features]);
        command.args(extra);
        run(root, command)?;
    }
    // After the tests (both rebuild `target/debug/subagent`, which must not happen under tests
    // that run it): the lean build, then, last, the main job as a reader pastes it.
    dist::lean(root)?;
    readme::run_main_job(root)
}

fn fmt_check(root: &Path) -> Result<()> {
    let mut command = cargo();
    command.args(["fmt", "--all", "--", "--check"]);
    run(root, command)
}

fn clippy(root: &Path) -> Result<()> {
    let mut command = cargo();
    command.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    run(root, command)?;
    // Each front door of the CLI alone (a build with `mcp` but not `serve` once lacked the
    // signal handling `serve` kept to itself).
    for feature in ["serve", "mcp", "acp", "nats", "ui"] {
        let mut command = cargo();
        command.args(["clippy", "-p", "subagent-cli", "--all-targets"]);
        command.args(["--no-default-features", "--features", feature]);
        command.args(["--", "-D", "warnings"]);
        run(root, command)?;
    }
    Ok(())
}

/// Every benchmark, the product-overhead ones against the real pinned CLIs included (they need
/// the `e2e` features, as the end-to-end tests do).
fn bench(root: &Path, extra: &[String]) -> Result<()> {
    clis::install(root)?;
    let mut command = cargo();
    command.args(["bench", "--workspace"]);
    command.args(["--features", &clis::E2E_FEATURES.join(",")]);
    command.args(extra);
    run(root, command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_anywhere_prints_the_help() {
        let args = |list: &[&str]| list.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        assert!(asks_for_help(&args(&["load", "--help"])));
        assert!(asks_for_help(&args(&["chaos", "--rounds", "3", "-h"])));
        assert!(!asks_for_help(&args(&["load", "--clients", "10"])));
    }
}
