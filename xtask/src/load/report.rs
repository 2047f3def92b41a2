//! The figures of a `cargo xtask load` run, as the markdown `docs/reliability.md` carries, and
//! its verdict.

use std::fmt::Write as _;

use serde_json::Value;

use super::{FLAT_SLACK_PERCENT, JUDGED_SOAK_SECS, Options, Report, Sample};

/// The slowloris phase as a table.
fn slowloris_table(line: &Value) -> String {
    let held = &line["held"];
    let mut md = String::from(
        "\n| slowloris connections (addresses) | held at start / least / most / at end | opened in all | closed by the server | refused (503) | connect errors | authenticated runs: completed / errors | first event p50 / p99 (ms) | whole run p50 / p99 (ms) | runs took (s) |\n|---|---|---:|---:|---:|---:|---|---|---|---:|\n",
    );
    let _ = writeln!(
        md,
        "| {} ({}) | {} / {} / {} / {} | {} | {} | {} | {} | {} / {} | {} / {} | {} / {} | {:.1} |",
        line["connections"],
        line["peers"],
        held["at_start"],
        held["least"],
        held["most"],
        held["at_end"],
        line["opened"],
        line["closed_by_server"],
        line["refused_503"],
        line["connect_errors"],
        line["completed"],
        line["errors"],
        ms(&line["first_event_ms"], "p50"),
        ms(&line["first_event_ms"], "p99"),
        ms(&line["run_ms"], "p50"),
        ms(&line["run_ms"], "p99"),
        line["runs_ms"].as_f64().unwrap_or(0.0) / 1_000.0,
    );
    md
}

/// Everything a run measured.
pub(crate) struct Figures {
    pub options: Options,
    pub lines: Vec<Value>,
    pub samples: Vec<Sample>,
    pub load_before: String,
    pub load_after: String,
    pub client_exit: String,
    pub server_exit: String,
    pub server_stderr: Vec<String>,
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

fn ms(value: &Value, key: &str) -> String {
    value[key]
        .as_f64()
        .map_or_else(|| "–".to_owned(), |v| format!("{v:.1}"))
}

impl Figures {
    fn phase(&self, name: &str) -> impl Iterator<Item = &Value> {
        self.lines.iter().filter(move |l| l["phase"] == name)
    }

    /// The RSS growth over the second half of the soak, in percent (`None`: a soak shorter
    /// than [`JUDGED_SOAK_SECS`], or too few samples).
    pub(crate) fn soak_growth(&self) -> Option<f64> {
        if self.options.soak_secs < JUDGED_SOAK_SECS {
            return None;
        }
        let soak: Vec<&Sample> = self.samples.iter().filter(|s| s.phase == "soak").collect();
        let half = soak.get(soak.len() / 2)?;
        let last = soak.last()?;
        (soak.len() >= 4 && half.rss_kib > 0)
            .then(|| (last.rss_kib as f64 - half.rss_kib as f64) * 100.0 / half.rss_kib as f64)
    }

    pub(crate) fn report(&self) -> Report {
        let mut md = String::new();
        let o = &self.options;
        let _ = writeln!(
            md,
            "`cargo xtask load {}`: load average {} before, {} after; client {}, server {} after SIGTERM.\n",
            o.command_line(),
            self.load_before,
            self.load_after,
            self.client_exit,
            self.server_exit
        );
        md.push_str("| phase | runs | errors | first event p50 / p99 / max (ms) | whole run p50 / p99 (ms) |\n");
        md.push_str("|---|---:|---:|---|---|\n");
        let rows = self
            .phase("burst")
            .map(|l| (format!("burst: {} at once", o.clients), l))
            .chain(
                self.phase("soak")
                    .map(|l| (format!("soak, to {} s", l["at_s"]), l)),
            )
            .chain(
                self.phase("soak_total")
                    .map(|l| (format!("**soak, {} s in all**", l["secs"]), l)),
            );
        let mut errors = 0;
        let mut error_kinds = Vec::new();
        for (name, line) in rows {
            let first = &line["first_event_ms"];
            let run = &line["run_ms"];
            let _ = writeln!(
                md,
                "| {name} | {} | {} | {} / {} / {} | {} / {} |",
                line["runs"],
                line["errors"],
                ms(first, "p50"),
                ms(first, "p99"),
                ms(first, "max"),
                ms(run, "p50"),
                ms(run, "p99"),
            );
            if line["phase"] != "soak" {
                errors += line["errors"].as_u64().unwrap_or(0);
                if let Some(kinds) = line["error_kinds"].as_object() {
                    error_kinds.extend(kinds.iter().map(|(k, v)| format!("{v} × {k}")));
                }
            }
        }
        if !error_kinds.is_empty() {
            let _ = writeln!(md, "\nErrors: {}.", error_kinds.join("; "));
        }
        let slowloris: Vec<&Value> = self.phase("slowloris").collect();
        for line in &slowloris {
            md.push_str(&slowloris_table(line));
            errors += line["errors"].as_u64().unwrap_or(0);
            if let Some(kinds) = line["error_kinds"].as_object() {
                let kinds: Vec<String> = kinds.iter().map(|(k, v)| format!("{v} × {k}")).collect();
                if !kinds.is_empty() {
                    let _ = writeln!(md, "\nErrors under the flood: {}.", kinds.join("; "));
                }
            }
        }
        md.push_str("\n| at (s) | phase | server RSS (MiB) | open fds | threads |\n|---:|---|---:|---:|---:|\n");
        let every = (self.samples.len() / 24).max(1);
        for (i, s) in self.samples.iter().enumerate() {
            let edge = i + 1 == self.samples.len()
                || self.samples.get(i + 1).is_some_and(|n| n.phase != s.phase)
                || i == 0;
            if i % every == 0 || edge {
                let _ = writeln!(
                    md,
                    "| {:.0} | {} | {} | {} | {} |",
                    s.at_secs,
                    s.phase,
                    mib(s.rss_kib),
                    s.fds,
                    s.threads
                );
            }
        }
        let peak = self.samples.iter().map(|s| s.rss_kib).max().unwrap_or(0);
        let hwm = self.samples.iter().map(|s| s.hwm_kib).max().unwrap_or(0);
        let growth = self.soak_growth();
        let _ = writeln!(
            md,
            "\nPeak RSS sampled {} MiB (the kernel's high-water mark: {} MiB); RSS over the soak's second half {}.",
            mib(peak),
            mib(hwm),
            growth.map_or_else(
                || format!(
                    "not judged (a soak under {JUDGED_SOAK_SECS} s sees the server's bounded stores fill)"
                ),
                |g| format!("{g:+.1} %")
            )
        );
        let mut failure = None;
        if errors > 0 {
            failure = Some(format!("{errors} runs failed"));
        } else if self.options.slowloris > 0 && slowloris.is_empty() {
            failure = Some("the client reported no slowloris phase".to_owned());
        } else if self.lines.iter().all(|l| l["phase"] != "burst") {
            failure = Some("the client reported nothing".to_owned());
        } else if growth.is_some_and(|g| g > FLAT_SLACK_PERCENT) {
            failure = Some(format!(
                "the server's RSS grew by more than {FLAT_SLACK_PERCENT} % over the soak's second half"
            ));
        } else if !self.server_exit.contains("exit status: 0") {
            failure = Some(format!(
                "the server did not exit cleanly: {}",
                self.server_exit
            ));
        }
        if failure.is_some() && !self.server_stderr.is_empty() {
            let from = self.server_stderr.len().saturating_sub(20);
            let _ = writeln!(
                md,
                "\nThe server's last stderr lines:\n```\n{}\n```",
                self.server_stderr[from..].join("\n")
            );
        }
        Report {
            markdown: md,
            failure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn figures(rss: &[u64], errors: u64) -> Figures {
        let samples = rss
            .iter()
            .enumerate()
            .map(|(i, &rss_kib)| Sample {
                at_secs: i as f64 * 5.0,
                phase: "soak".to_owned(),
                rss_kib,
                fds: 10,
                threads: 4,
                hwm_kib: rss_kib,
            })
            .collect();
        let line = |phase: &str| {
            serde_json::json!({"phase": phase, "runs": 10, "errors": errors, "error_kinds": {},
                "first_event_ms": {"p50": 1.0, "p99": 2.0, "max": 3.0},
                "run_ms": {"p50": 1000.0, "p99": 1001.0, "max": 1002.0}, "at_s": 5, "secs": 5})
        };
        Figures {
            options: Options::parse(&[]).unwrap(),
            lines: vec![line("burst"), line("soak"), line("soak_total")],
            samples,
            load_before: "1.0".to_owned(),
            load_after: "2.0".to_owned(),
            client_exit: "exit status: 0".to_owned(),
            server_exit: "exit status: 0".to_owned(),
            server_stderr: Vec::new(),
        }
    }

    #[test]
    fn a_flat_run_passes_and_growth_or_errors_fail() {
        let flat = figures(&[50_000, 80_000, 81_000, 80_500, 81_200, 80_900], 0).report();
        assert_eq!(flat.failure, None, "{}", flat.markdown);
        assert!(
            flat.markdown
                .contains("| burst: 1000 at once | 10 | 0 | 1.0 / 2.0 / 3.0 | 1000.0 / 1001.0 |"),
            "{}",
            flat.markdown
        );
        let leak = figures(&[50_000, 60_000, 70_000, 80_000, 90_000, 100_000], 0).report();
        assert!(leak.failure.unwrap().contains("RSS grew"));
        let failed = figures(&[50_000, 50_000, 50_000, 50_000], 2).report();
        assert_eq!(failed.failure.as_deref(), Some("4 runs failed"));
        let mut short = figures(&[50_000, 60_000, 70_000, 80_000, 90_000, 100_000], 0);
        short.options.soak_secs = 60;
        let short = short.report();
        assert_eq!(short.failure, None);
        assert!(short.markdown.contains("not judged"), "{}", short.markdown);
    }
}
