//! `cargo xtask load [--clients N] [--soak-secs S] [--pace-ms P] [--answer-bytes B]
//! [--idle-secs S] [--sample-ms M] [--slowloris N [--slowloris-peers P] [--slowloris-runs R]]`:
//! a bounded load run on `subagent serve` over loopback (issue 17, part 3; issue 26), three
//! processes on this machine:
//!
//! - the fake model server (`fake-model`, `crates/test-support`) answering every run after
//!   [`MODEL_DELAY_MS`] over real HTTP, remembering no requests (`--keep-requests 0`);
//! - `subagent serve` (release build) with a spawn row on that model, a bearer token and
//!   `--max-runs N` (so the N clients are served, not refused as busy), in a fresh state dir;
//! - the client, `crates/server/examples/load.rs`: N clients, each on its own connection,
//!   streaming runs (`SendStreamingMessage`): first all N at once (**burst**), then for S
//!   seconds one run per client every P ms (**soak**); with `--slowloris N`, N half-open
//!   connections held open (from P loopback addresses) while R authenticated runs go through
//!   (**slowloris**); it stops by itself.
//!
//! `--answer-bytes B` makes the model's answer B bytes of words (each streamed as a delta, as
//! a model streams tokens) instead of a short sentence; `--idle-secs S` goes on sampling the
//! idle server for S seconds after the client is done (does memory return after a burst?).
//!
//! Meanwhile this samples the server's RSS, open file descriptors and threads from `/proc` every
//! [`SAMPLE_SECS`] (or `--sample-ms`), and its peak RSS (`VmHWM`) at the end. At the end it stops the server (SIGTERM, draining), prints the figures as
//! the markdown `docs/reliability.md` carries, and fails if a run failed or the server's RSS
//! grew over the second half of the soak by more than [`FLAT_SLACK_PERCENT`] (flat: what a
//! leak would break; judged for soaks of [`JUDGED_SOAK_SECS`] or more), or if the server did
//! not exit cleanly.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::cargo;

mod report;

pub(crate) use report::Figures;

/// How long the model takes to answer each run: long enough that the burst's runs are all in
/// flight together, so the load is on our server, not a model.
pub(crate) const MODEL_DELAY_MS: u64 = 1_000;

/// Seconds between samples of the server's memory.
pub(crate) const SAMPLE_SECS: u64 = 5;

/// How much the RSS may grow over the second half of the soak (allocator noise, the task store
/// filling to its bound) before the run counts as a leak.
pub(crate) const FLAT_SLACK_PERCENT: f64 = 10.0;

/// The shortest soak whose RSS is judged: the server's bounded stores (the last 10,000 finished
/// tasks, 60 s of a streamed task's events) fill during the first minute or so at the default
/// rate, and a shorter soak would see only that filling.
pub(crate) const JUDGED_SOAK_SECS: u64 = 240;

/// The token the server and the client share (loopback only; not a secret).
const TOKEN: &str = "load-run-token-0123456789";

/// The run's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Options {
    pub clients: usize,
    pub soak_secs: u64,
    pub pace_ms: u64,
    /// The model's answer, in bytes of words (`None`: a short sentence).
    pub answer_bytes: Option<u64>,
    /// How long to go on sampling once the client is done.
    pub idle_secs: u64,
    pub sample_ms: u64,
    /// Slowloris connections (0: no such phase), from how many addresses, while how many runs.
    pub slowloris: u64,
    pub slowloris_peers: u64,
    pub slowloris_runs: u64,
    /// `serve --keep-task-bytes` (`None`: its default).
    pub keep_task_bytes: Option<u64>,
    /// The limit on open files serve is started with (`ulimit -n`, soft and hard; `None`: this
    /// process's).
    pub fd_limit: Option<u64>,
    /// Use the release binaries already built (`--no-build`: cargo's build lock can be held
    /// for long by other builds on a shared machine).
    pub build: bool,
}

impl Options {
    /// `--clients N` (1,000), `--soak-secs S` (600), `--pace-ms P` (5,000), `--answer-bytes B`,
    /// `--idle-secs S` (0), `--sample-ms M` (5,000), `--slowloris N` (0), `--slowloris-peers P`
    /// (1), `--slowloris-runs R` (100), `--keep-task-bytes B` (serve's), `--fd-limit N` (this
    /// process's), `--no-build`.
    pub(crate) fn parse(args: &[String]) -> Result<Self> {
        let mut options = Self {
            clients: 1_000,
            soak_secs: 600,
            pace_ms: 5_000,
            answer_bytes: None,
            idle_secs: 0,
            sample_ms: SAMPLE_SECS * 1_000,
            slowloris: 0,
            slowloris_peers: 1,
            slowloris_runs: 100,
            keep_task_bytes: None,
            fd_limit: None,
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
                "--answer-bytes" => options.answer_bytes = Some(number),
                "--idle-secs" => options.idle_secs = number,
                "--sample-ms" => options.sample_ms = number,
                "--slowloris" => options.slowloris = number,
                "--slowloris-peers" => options.slowloris_peers = number,
                "--slowloris-runs" => options.slowloris_runs = number,
                "--keep-task-bytes" => options.keep_task_bytes = Some(number),
                "--fd-limit" => options.fd_limit = Some(number),
                other => bail!(
                    "unknown option {other} (--clients N, --soak-secs S, --pace-ms P, --answer-bytes B, --idle-secs S, --sample-ms M, --slowloris N, --slowloris-peers P, --slowloris-runs R, --keep-task-bytes B, --fd-limit N, --no-build)"
                ),
            }
        }
        if options.clients == 0 || options.pace_ms == 0 || options.sample_ms == 0 {
            bail!("--clients, --pace-ms and --sample-ms must be at least 1");
        }
        if !(1..=250).contains(&options.slowloris_peers) {
            bail!("--slowloris-peers must be from 1 to 250 (127.0.0.2 on)");
        }
        Ok(options)
    }
}

/// One look at the server process.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Sample {
    pub at_secs: f64,
    pub phase: String,
    pub rss_kib: u64,
    pub fds: usize,
    pub threads: u64,
    /// The peak RSS so far (`VmHWM`).
    pub hwm_kib: u64,
}

/// A `/proc/<pid>/status` field's number (`VmRSS:`, `Threads:`, …).
fn status_field(status: &str, name: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
}

/// `VmRSS` and `Threads` of a `/proc/<pid>/status` text.
pub(crate) fn parse_status(status: &str) -> Option<(u64, u64)> {
    Some((
        status_field(status, "VmRSS:")?,
        status_field(status, "Threads:")?,
    ))
}

fn sample(pid: u32, at: Instant, phase: &str) -> Option<Sample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let (rss_kib, threads) = parse_status(&status)?;
    let hwm_kib = status_field(&status, "VmHWM:").unwrap_or(rss_kib);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    Some(Sample {
        at_secs: at.elapsed().as_secs_f64(),
        phase: phase.to_owned(),
        rss_kib,
        fds,
        threads,
        hwm_kib,
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

/// The model's answer: a short sentence, or `bytes` of words (each a delta when streamed).
fn answer(bytes: Option<u64>) -> String {
    match bytes {
        None => "Hello from the load run.".to_owned(),
        Some(bytes) => "word ".repeat(usize::try_from(bytes / 5).unwrap_or(0).max(1)),
    }
}

fn scenario(options: &Options) -> String {
    format!(
        "- name: load\n  match: \"LOAD\"\n  steps:\n    - delay_ms: {MODEL_DELAY_MS}\n      text: \"{}\"\n",
        answer(options.answer_bytes)
    )
}

fn preset(model_port: u16) -> String {
    format!(
        "version: 1\nmax_depth: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: http://127.0.0.1:{model_port}\n  api_key_env: LOAD_MODEL_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\ntools:\n  - name: subagent\n    provider: spawn\n"
    )
}

/// The fake model server on a free port.
fn start_model(bin: &Path, dir: &Path, options: &Options) -> Result<(Reaped, u16)> {
    let scenario_file = dir.join("scenario.yaml");
    std::fs::write(&scenario_file, scenario(options))?;
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
    let mut command = match options.fd_limit {
        None => Command::new(bin.join("subagent")),
        Some(limit) => {
            let mut bash = Command::new("bash");
            bash.arg("-c")
                .arg(format!(r#"ulimit -n {limit} && exec "$0" "$@""#))
                .arg(bin.join("subagent"));
            bash
        }
    };
    let mut child = command
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
        .args(
            options
                .keep_task_bytes
                .map(|bytes| vec!["--keep-task-bytes".to_owned(), bytes.to_string()])
                .unwrap_or_default(),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start subagent serve")?;
    let stderr = child.stderr.take().context("serve has no stderr")?;
    let child = Reaped(child);
    let mut stderr = BufReader::new(stderr);
    // Its first line names the preset it uses (`preset: … (--preset)`); the address follows.
    let mut line = String::new();
    stderr.read_line(&mut line)?;
    if line.starts_with("preset: ") {
        line.clear();
        stderr.read_line(&mut line)?;
    }
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

pub(crate) fn run(root: &Path, args: &[String]) -> Result<()> {
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
pub(crate) struct Report {
    pub markdown: String,
    pub failure: Option<String>,
}

fn run_in(bin: &Path, dir: &Path, options: &Options) -> Result<Report> {
    let load_before = load_average();
    let (_model, model_port) = start_model(bin, dir, options)?;
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
        .args(slowloris_args(options))
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
            if line["phase"] == "soak_total" && options.slowloris > 0 {
                phase = "slowloris".to_owned();
            }
            lines.push(line);
        }
        if let Some(status) = client.0.try_wait()? {
            break status;
        }
        if Instant::now() >= next_sample {
            samples.extend(sample(pid, started, &phase));
            next_sample += Duration::from_millis(options.sample_ms);
        }
        std::thread::sleep(Duration::from_millis(options.sample_ms.min(200)));
    };
    while let Ok(line) = lines_rx.recv_timeout(Duration::from_secs(1)) {
        lines.push(line);
    }
    samples.extend(sample(pid, started, "after"));
    let idle_until = Instant::now() + Duration::from_secs(options.idle_secs);
    next_sample = Instant::now() + Duration::from_millis(options.sample_ms);
    while Instant::now() < idle_until {
        std::thread::sleep(Duration::from_millis(options.sample_ms.min(200)));
        if Instant::now() >= next_sample {
            samples.extend(sample(pid, started, "idle after"));
            next_sample += Duration::from_millis(options.sample_ms);
        }
    }
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

/// The client's flags for the slowloris phase (none without it).
fn slowloris_args(options: &Options) -> Vec<String> {
    if options.slowloris == 0 {
        return Vec::new();
    }
    [
        ("--slowloris", options.slowloris),
        ("--slowloris-peers", options.slowloris_peers),
        ("--slowloris-runs", options.slowloris_runs),
    ]
    .iter()
    .flat_map(|(flag, n)| [(*flag).to_owned(), n.to_string()])
    .collect()
}

impl Options {
    /// The flags of this run, as typed (those left at their default omitted).
    pub(crate) fn command_line(&self) -> String {
        let defaults = Self::parse(&[]).ok();
        let mut words = Vec::new();
        let mut flag = |name: &str, value: u64, default: Option<u64>| {
            if Some(value) != default {
                words.push(format!("--{name} {value}"));
            }
        };
        let d = defaults.as_ref();
        flag("clients", self.clients as u64, d.map(|d| d.clients as u64));
        flag("soak-secs", self.soak_secs, d.map(|d| d.soak_secs));
        flag("pace-ms", self.pace_ms, d.map(|d| d.pace_ms));
        if let Some(bytes) = self.answer_bytes {
            flag("answer-bytes", bytes, None);
        }
        flag("idle-secs", self.idle_secs, d.map(|d| d.idle_secs));
        flag("sample-ms", self.sample_ms, d.map(|d| d.sample_ms));
        if let Some(bytes) = self.keep_task_bytes {
            flag("keep-task-bytes", bytes, None);
        }
        if let Some(limit) = self.fd_limit {
            flag("fd-limit", limit, None);
        }
        if self.slowloris > 0 {
            flag("slowloris", self.slowloris, None);
            flag(
                "slowloris-peers",
                self.slowloris_peers,
                d.map(|d| d.slowloris_peers),
            );
            flag(
                "slowloris-runs",
                self.slowloris_runs,
                d.map(|d| d.slowloris_runs),
            );
        }
        if !self.build {
            words.push("--no-build".to_owned());
        }
        words.join(" ")
    }
}

/// Report windows: a minute, or less on a short soak.
fn window_secs(options: &Options) -> u64 {
    (options.soak_secs / 5).clamp(1, 60)
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
                answer_bytes: None,
                idle_secs: 0,
                sample_ms: 5_000,
                slowloris: 0,
                slowloris_peers: 1,
                slowloris_runs: 100,
                keep_task_bytes: None,
                fd_limit: None,
                build: true,
            }
        );
        let some = Options::parse(&args(&[
            "--clients",
            "10",
            "--soak-secs",
            "5",
            "--slowloris",
            "5000",
            "--slowloris-peers",
            "4",
            "--answer-bytes",
            "204800",
            "--fd-limit",
            "1024",
        ]))
        .unwrap();
        assert_eq!(
            (
                some.clients,
                some.soak_secs,
                some.slowloris,
                some.slowloris_peers
            ),
            (10, 5, 5_000, 4)
        );
        assert_eq!(
            some.command_line(),
            "--clients 10 --soak-secs 5 --answer-bytes 204800 --fd-limit 1024 --slowloris 5000 --slowloris-peers 4"
        );
        assert!(Options::parse(&args(&["--slowloris-peers", "0"])).is_err());
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
}
