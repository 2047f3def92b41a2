//! `cargo xtask load [--clients N] [--soak-secs S] [--pace-ms P]`: a bounded load run on
//! `subagent serve` over loopback (issue 17, part 3), three processes on this machine:
//!
//! - the fake model server (`fake-model`, `crates/test-support`) answering every run after
//!   [`MODEL_DELAY_MS`] over real HTTP, remembering no requests (`--keep-requests 0`);
//! - `subagent serve` (release build) with a spawn row on that model, a bearer token and
//!   `--max-runs N` (so the N clients are served, not refused as busy), in a fresh state dir;
//! - the client, `crates/server/examples/load.rs`: N clients, each on its own connection,
//!   streaming runs (`SendStreamingMessage`): first all N at once (**burst**), then for S
//!   seconds one run per client every P ms (**soak**); it stops by itself.
//!
//! Meanwhile this samples the server's RSS, open file descriptors and threads from `/proc` every
//! [`SAMPLE_SECS`]. At the end it stops the server (SIGTERM, draining), prints the figures as
//! the markdown `docs/reliability.md` carries, and fails if a run failed or the server's RSS
//! grew over the second half of the soak by more than [`FLAT_SLACK_PERCENT`] (flat: what a
//! leak would break; judged for soaks of [`JUDGED_SOAK_SECS`] or more), or if the server did
//! not exit cleanly.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::cargo;

/// How long the model takes to answer each run: long enough that the burst's runs are all in
/// flight together, so the load is on our server, not a model.
pub const MODEL_DELAY_MS: u64 = 1_000;

/// Seconds between samples of the server's memory.
pub const SAMPLE_SECS: u64 = 5;

/// How much the RSS may grow over the second half of the soak (allocator noise, the task store
/// filling to its bound) before the run counts as a leak.
pub const FLAT_SLACK_PERCENT: f64 = 10.0;

/// The shortest soak whose RSS is judged: the server's bounded stores (the last 10,000 finished
/// tasks, 60 s of a streamed task's events) fill during the first minute or so at the default
/// rate, and a shorter soak would see only that filling.
pub const JUDGED_SOAK_SECS: u64 = 240;

/// The token the server and the client share (loopback only; not a secret).
const TOKEN: &str = "load-run-token-0123456789";

/// The run's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub clients: usize,
    pub soak_secs: u64,
    pub pace_ms: u64,
    /// Use the release binaries already built (`--no-build`: cargo's build lock can be held
    /// for long by other builds on a shared machine).
    pub build: bool,
}

impl Options {
    /// `--clients N` (1,000), `--soak-secs S` (600), `--pace-ms P` (5,000), `--no-build`.
    pub fn parse(args: &[String]) -> Result<Self> {
        let mut options = Self {
            clients: 1_000,
            soak_secs: 600,
            pace_ms: 5_000,
            build: true,
        };
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            if flag == "--no-build" {
                options.build = false;
                continue;
            }
            let value = args
                .next()
                .with_context(|| format!("{flag} needs a value"))?;
            let number: u64 = value
                .parse()
                .with_context(|| format!("{flag} {value}: not a number"))?;
            match flag.as_str() {
                "--clients" => options.clients = usize::try_from(number)?,
                "--soak-secs" => options.soak_secs = number,
                "--pace-ms" => options.pace_ms = number,
                other => bail!(
                    "unknown option {other} (--clients N, --soak-secs S, --pace-ms P, --no-build)"
                ),
            }
        }
        if options.clients == 0 || options.pace_ms == 0 {
            bail!("--clients and --pace-ms must be at least 1");
        }
        Ok(options)
    }
}

/// One look at the server process.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub at_secs: f64,
    pub phase: String,
    pub rss_kib: u64,
    pub fds: usize,
    pub threads: u64,
}

/// `VmRSS` and `Threads` of a `/proc/<pid>/status` text.
pub fn parse_status(status: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("Threads:")?))
}

fn sample(pid: u32, at: Instant, phase: &str) -> Option<Sample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let (rss_kib, threads) = parse_status(&status)?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    Some(Sample {
        at_secs: at.elapsed().as_secs_f64(),
        phase: phase.to_owned(),
        rss_kib,
        fds,
        threads,
    })
}

/// A child killed and reaped when dropped, so a failed run leaves no server behind.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "?".to_owned())
}

fn build(root: &Path) -> Result<PathBuf> {
    let mut command = cargo();
    command.args([
        "build",
        "--release",
        "-p",
        "subagent-cli",
        "--bin",
        "subagent",
        "-p",
        "subagent-test-support",
        "--bin",
        "fake-model",
        "-p",
        "subagent-server",
        "--example",
        "load",
    ]);
    crate::run(root, command)?;
    Ok(target_dir(root).join("release"))
}

fn scenario() -> String {
    format!(
        "- name: load\n  match: \"LOAD\"\n  steps:\n    - delay_ms: {MODEL_DELAY_MS}\n      text: \"Hello from the load run.\"\n"
    )
}

fn preset(model_port: u16) -> String {
    format!(
        "version: 1\nmax_depth: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: http://127.0.0.1:{model_port}\n  api_key_env: LOAD_MODEL_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\ntools:\n  - name: subagent\n    provider: spawn\n"
    )
}

/// The fake model server on a free port.
fn start_model(bin: &Path, dir: &Path) -> Result<(Reaped, u16)> {
    let scenario_file = dir.join("scenario.yaml");
    std::fs::write(&scenario_file, scenario())?;
    let mut child = Command::new(bin.join("fake-model"))
        .arg("--scenario")
        .arg(&scenario_file)
        .args(["--keep-requests", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start fake-model")?;
    let stdout = child.stdout.take().context("fake-model has no stdout")?;
    let child = Reaped(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let port = line
        .trim()
        .parse()
        .with_context(|| format!("fake-model printed no port: {line:?}"))?;
    Ok((child, port))
}

/// `subagent serve` on a free port; its base URL. Its stderr is drained by a thread (the last
/// lines kept for the report).
fn start_server(
    bin: &Path,
    dir: &Path,
    options: &Options,
    stderr_tail: mpsc::Sender<String>,
) -> Result<(Reaped, String)> {
    let home = dir.join("home");
    let project = dir.join("project");
    std::fs::create_dir_all(&home)?;
    std::fs::create_dir_all(&project)?;
    let mut child = Command::new(bin.join("subagent"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("LOAD_MODEL_KEY", "load-key")
        .env("SUBAGENT_LOAD_TOKEN", TOKEN)
        .current_dir(&project)
        .arg("serve")
        .arg("--preset")
        .arg(dir.join("preset.yaml"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--token-env",
            "SUBAGENT_LOAD_TOKEN",
        ])
        .args(["--max-runs", &options.clients.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start subagent serve")?;
    let stderr = child.stderr.take().context("serve has no stderr")?;
    let child = Reaped(child);
    let mut stderr = BufReader::new(stderr);
    let mut line = String::new();
    stderr.read_line(&mut line)?;
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .with_context(|| format!("subagent serve announced no address: {line:?}"))?
        .to_owned();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(std::io::Result::ok) {
            if stderr_tail.send(line).is_err() {
                break;
            }
        }
    });
    Ok((child, format!("http://{addr}")))
}

/// SIGTERM (through `kill`: xtask links no libc), then the exit within the drain time.
fn stop(server: &mut Reaped) -> Result<String> {
    let pid = server.0.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status()?;
    let deadline = Instant::now() + Duration::from_secs(40);
    while Instant::now() < deadline {
        if let Some(status) = server.0.try_wait()? {
            return Ok(status.to_string());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok("still running 40 s after SIGTERM".to_owned())
}

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let options = Options::parse(args)?;
    let bin = if options.build {
        build(root)?
    } else {
        target_dir(root).join("release")
    };
    let dir = std::env::temp_dir().join(format!("subagents-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = run_in(&bin, &dir, &options);
    let _ = std::fs::remove_dir_all(&dir);
    let report = result?;
    print!("{}", report.markdown);
    if let Some(failure) = report.failure {
        bail!("{failure}");
    }
    Ok(())
}

/// What a run gave.
pub struct Report {
    pub markdown: String,
    pub failure: Option<String>,
}

fn run_in(bin: &Path, dir: &Path, options: &Options) -> Result<Report> {
    let load_before = load_average();
    let (_model, model_port) = start_model(bin, dir)?;
    std::fs::write(dir.join("preset.yaml"), preset(model_port))?;
    let (tail_tx, tail_rx) = mpsc::channel();
    let (mut server, url) = start_server(bin, dir, options, tail_tx)?;
    let pid = server.0.id();
    let started = Instant::now();
    let mut samples = Vec::new();
    samples.extend(sample(pid, started, "idle"));
    eprintln!("xtask: load: serve at {url} (pid {pid}), {options:?}");

    let mut client = Command::new(bin.join("examples").join("load"))
        .env("SUBAGENT_LOAD_TOKEN", TOKEN)
        .args(["--url", &url])
        .args(["--clients", &options.clients.to_string()])
        .args(["--soak-secs", &options.soak_secs.to_string()])
        .args(["--pace-ms", &options.pace_ms.to_string()])
        .args(["--window-secs", &window_secs(options).to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("cannot start the load client")?;
    let stdout = client.stdout.take().context("the client has no stdout")?;
    let mut client = Reaped(client);
    let (lines_tx, lines_rx) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout)
            .lines()
            .map_while(std::io::Result::ok)
        {
            match serde_json::from_str(&line) {
                Ok(value) => {
                    if lines_tx.send(value).is_err() {
                        break;
                    }
                }
                Err(_) => eprintln!("load client: {line}"),
            }
        }
    });

    let mut lines: Vec<Value> = Vec::new();
    let mut phase = "burst".to_owned();
    let mut next_sample = Instant::now();
    let status = loop {
        while let Ok(line) = lines_rx.try_recv() {
            eprintln!("xtask: load: {line}");
            if line["phase"] == "burst" {
                phase = "soak".to_owned();
            }
            lines.push(line);
        }
        if let Some(status) = client.0.try_wait()? {
            break status;
        }
        if Instant::now() >= next_sample {
            samples.extend(sample(pid, started, &phase));
            next_sample += Duration::from_secs(SAMPLE_SECS);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    while let Ok(line) = lines_rx.recv_timeout(Duration::from_secs(1)) {
        lines.push(line);
    }
    samples.extend(sample(pid, started, "after"));
    let server_exit = stop(&mut server)?;
    let tail: Vec<String> = tail_rx.try_iter().collect();
    let figures = Figures {
        options: options.clone(),
        lines,
        samples,
        load_before,
        load_after: load_average(),
        client_exit: status.to_string(),
        server_exit,
        server_stderr: tail,
    };
    Ok(figures.report())
}

/// Report windows: a minute, or less on a short soak.
fn window_secs(options: &Options) -> u64 {
    (options.soak_secs / 5).clamp(1, 60)
}

/// Everything a run measured.
pub struct Figures {
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
    pub fn soak_growth(&self) -> Option<f64> {
        if self.options.soak_secs < JUDGED_SOAK_SECS {
            return None;
        }
        let soak: Vec<&Sample> = self.samples.iter().filter(|s| s.phase == "soak").collect();
        let half = soak.get(soak.len() / 2)?;
        let last = soak.last()?;
        (soak.len() >= 4 && half.rss_kib > 0)
            .then(|| (last.rss_kib as f64 - half.rss_kib as f64) * 100.0 / half.rss_kib as f64)
    }

    pub fn report(&self) -> Report {
        let mut md = String::new();
        let o = &self.options;
        let _ = writeln!(
            md,
            "`cargo xtask load --clients {} --soak-secs {} --pace-ms {}`: load average {} before, {} after; client {}, server {} after SIGTERM.\n",
            o.clients,
            o.soak_secs,
            o.pace_ms,
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
        let growth = self.soak_growth();
        let _ = writeln!(
            md,
            "\nPeak RSS sampled {} MiB; RSS over the soak's second half {}.",
            mib(peak),
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

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn options_default_to_the_issue_and_read_flags() {
        assert_eq!(
            Options::parse(&[]).unwrap(),
            Options {
                clients: 1_000,
                soak_secs: 600,
                pace_ms: 5_000,
                build: true,
            }
        );
        assert_eq!(
            Options::parse(&args(&["--clients", "10", "--soak-secs", "5"])).unwrap(),
            Options {
                clients: 10,
                soak_secs: 5,
                pace_ms: 5_000,
                build: true,
            }
        );
        assert!(Options::parse(&args(&["--clients"])).is_err());
        assert!(Options::parse(&args(&["--clients", "0"])).is_err());
        assert!(Options::parse(&args(&["--rate", "3"])).is_err());
    }

    #[test]
    fn status_gives_rss_and_threads() {
        let status = "Name:\tsubagent\nVmHWM:\t  9000 kB\nVmRSS:\t  8123 kB\nThreads:\t7\n";
        assert_eq!(parse_status(status), Some((8123, 7)));
        assert_eq!(parse_status("Name:\tx\n"), None);
    }

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
