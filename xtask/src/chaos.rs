//! `cargo xtask chaos [--rounds N] [--provider P…] [--seed S] [--only PART…]`: the chaos
//! harness's long runs (issue 17, part 2).
//!
//! The harness itself is the `chaos` module of the CLI's tests (`crates/cli/tests/suite/chaos`),
//! where the fake model server, the pinned nats-server, `subagent serve` and the product-CLI
//! presets already are; `cargo xtask test` runs it in its short version (a few rounds, asserting
//! 0 left, 0 lost, 0 doubled, 0 wrong). This command runs the same four tests (`signals`,
//! `cancels`, `server`, `nats`) one after the other with the counts given here
//! (`SUBAGENT_CHAOS_ROUNDS`, `SUBAGENT_CHAOS_SEED`, `SUBAGENT_CHAOS_PROVIDERS`), collects the
//! rows each test writes into `target/chaos/<seed>/<test>.md`, and prints the table
//! `docs/reliability.md` carries, with the command, the seed and the wall time. It fails when
//! the harness found a defect (the table is printed first).

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// Rounds per scenario by default: the issue's 100.
pub(crate) const DEFAULT_ROUNDS: u32 = 100;

/// The tests of the harness, in the table's order.
pub(crate) const PARTS: &[&str] = &["signals", "cancels", "server", "nats"];

/// The provider kinds the harness knows.
pub(crate) const PROVIDERS: &[&str] = &[
    "spawn",
    "fork",
    "claude-code",
    "codex",
    "acp",
    "a2a",
    "nats",
];

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Options {
    pub rounds: u32,
    pub providers: Vec<String>,
    pub seed: u64,
    pub parts: Vec<String>,
}

pub(crate) fn parse(args: &[String], default_seed: u64) -> Result<Options> {
    let mut options = Options {
        rounds: DEFAULT_ROUNDS,
        providers: Vec::new(),
        seed: default_seed,
        parts: Vec::new(),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| {
            args.next()
                .cloned()
                .with_context(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--rounds" => {
                options.rounds = value("--rounds")?
                    .parse()
                    .context("--rounds takes a number")?;
                if options.rounds == 0 {
                    bail!("--rounds must be at least 1");
                }
            }
            "--seed" => options.seed = value("--seed")?.parse().context("--seed takes a number")?,
            "--provider" => {
                let name = value("--provider")?;
                if !PROVIDERS.contains(&name.as_str()) {
                    bail!(
                        "unknown provider `{name}` (one of {})",
                        PROVIDERS.join(", ")
                    );
                }
                options.providers.push(name);
            }
            "--only" => {
                let part = value("--only")?;
                if !PARTS.contains(&part.as_str()) {
                    bail!("unknown part `{part}` (one of {})", PARTS.join(", "));
                }
                options.parts.push(part);
            }
            other => bail!("unknown argument `{other}`"),
        }
    }
    if options.providers.is_empty() {
        options.providers = PROVIDERS.iter().map(|p| (*p).to_owned()).collect();
    }
    if options.parts.is_empty() {
        options.parts = PARTS.iter().map(|p| (*p).to_owned()).collect();
    }
    Ok(options)
}

const HEADER: &str = "| provider | scenario | runs | left | lost | doubled | wrong | notes |\n|---|---|---:|---:|---:|---:|---:|---|\n";

/// The table from the rows the tests wrote, in the order of `parts`.
pub(crate) fn table(dir: &Path, parts: &[String]) -> String {
    let mut table = HEADER.to_owned();
    for part in parts {
        match std::fs::read_to_string(dir.join(format!("{part}.md"))) {
            Ok(rows) => table.push_str(&rows),
            Err(_) => table.push_str(&format!(
                "| — | {part}: no rows (the test did not finish) | | | | | | |\n"
            )),
        }
    }
    table
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result<()> {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let options = parse(args, seed)?;
    crate::clis::install(root)?;
    // One directory per seed, so runs side by side (different providers, say) keep apart.
    let report = root
        .join("target")
        .join("chaos")
        .join(options.seed.to_string());
    if report.exists() {
        std::fs::remove_dir_all(&report)
            .with_context(|| format!("clearing {}", report.display()))?;
    }
    let filter = format!("test(/^suite::chaos::({})$/)", options.parts.join("|"));
    let mut command = crate::cargo();
    if crate::has_nextest() {
        // --no-capture runs the tests one at a time and shows their progress.
        command.args(["nextest", "run", "-p", "subagent-cli", "--features", "e2e"]);
        command.args(["--no-fail-fast", "--no-capture", "-E", &filter]);
    } else {
        command.args([
            "test",
            "-p",
            "subagent-cli",
            "--features",
            "e2e",
            "--test",
            "all",
        ]);
        command.args(["--", "suite::chaos::", "--test-threads", "1", "--nocapture"]);
    }
    command
        .env("SUBAGENT_CHAOS_ROUNDS", options.rounds.to_string())
        .env("SUBAGENT_CHAOS_SEED", options.seed.to_string())
        .env("SUBAGENT_CHAOS_PROVIDERS", options.providers.join(","))
        .env("SUBAGENT_CHAOS_REPORT", &report);
    let started = Instant::now();
    let outcome = crate::run(root, command);
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let table = table(&report, &options.parts);
    let text = format!(
        "cargo xtask chaos --rounds {} --seed {} (providers {}; parts {}): {minutes:.1} min\n\n{table}",
        options.rounds,
        options.seed,
        options.providers.join(", "),
        options.parts.join(", "),
    );
    std::fs::create_dir_all(&report)?;
    std::fs::write(report.join("table.md"), &text)?;
    println!("\n{text}");
    outcome.context("the chaos harness found a defect or could not run (table above)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn defaults_are_the_issues_counts() {
        let options = parse(&[], 7).unwrap();
        assert_eq!(
            options,
            Options {
                rounds: 100,
                providers: PROVIDERS.iter().map(|p| (*p).to_owned()).collect(),
                seed: 7,
                parts: PARTS.iter().map(|p| (*p).to_owned()).collect(),
            }
        );
    }

    #[test]
    fn options_are_read_and_checked() {
        let options = parse(
            &strings(&[
                "--rounds",
                "5",
                "--provider",
                "spawn",
                "--provider",
                "nats",
                "--seed",
                "42",
                "--only",
                "signals",
            ]),
            7,
        )
        .unwrap();
        assert_eq!(options.rounds, 5);
        assert_eq!(options.providers, strings(&["spawn", "nats"]));
        assert_eq!(options.seed, 42);
        assert_eq!(options.parts, strings(&["signals"]));
        assert!(parse(&strings(&["--provider", "nope"]), 7).is_err());
        assert!(parse(&strings(&["--rounds", "0"]), 7).is_err());
        assert!(parse(&strings(&["--only", "everything"]), 7).is_err());
        assert!(parse(&strings(&["--rounds"]), 7).is_err());
    }

    #[test]
    fn the_table_keeps_the_parts_order_and_names_a_missing_part() {
        let dir = std::env::temp_dir().join(format!("xtask-chaos-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("signals.md"),
            "| spawn | SIGINT mid-run | 1 | 0 | 0 | 0 | 0 |  |\n",
        )
        .unwrap();
        let table = table(&dir, &strings(&["signals", "nats"]));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            table,
            format!(
                "{HEADER}| spawn | SIGINT mid-run | 1 | 0 | 0 | 0 | 0 |  |\n| — | nats: no rows (the test did not finish) | | | | | | |\n"
            )
        );
    }
}
