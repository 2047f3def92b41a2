//! Running `subagent` processes for the harness: a delegate whose JSON lines are read as they
//! come, and the long-lived `subagent serve` / `subagent worker` / nats-server a remote row
//! needs, restartable between rounds.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use subagent_nats::testing::NatsServer;

use super::reaper;
use super::rows::{self, Provider, Remotes};
use crate::suite::serve::{Served, TOKEN};
use crate::suite::support::{Subagent, announcement, bin};

fn subagent(home: &Path) -> Command {
    let mut command = Subagent::new(bin(), home)
        .fake_key()
        .env("A2A_TOKEN", TOKEN)
        .command();
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    command
}

/// Stderr read to its end on a thread of its own (so the child never blocks on a full pipe).
fn drain(mut from: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = from.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    rx
}

/// A running `subagent delegate --json`.
pub(super) struct Delegate {
    pub child: Child,
    pub started: Instant,
    lines: Receiver<String>,
    stderr: Receiver<String>,
    seen: Vec<String>,
}

/// How a delegate ended.
#[derive(Debug)]
pub(super) struct Ended {
    /// `None`: it did not exit within the limit (then it was SIGKILLed).
    pub status: Option<ExitStatus>,
    pub lines: Vec<String>,
    pub stderr: String,
}

impl Ended {
    /// The `--json` outcome object (the last line), if one was printed.
    pub(super) fn outcome(&self) -> Option<serde_json::Value> {
        let last: serde_json::Value = serde_json::from_str(self.lines.last()?).ok()?;
        (last["type"] == "outcome").then_some(last)
    }

    pub(super) fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }

    pub(super) fn killed_by(&self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt as _;
        self.status.and_then(|s| s.signal())
    }

    /// One line for a finding's details.
    pub(super) fn describe(&self) -> String {
        let tail: String = self
            .stderr
            .lines()
            .rev()
            .take(6)
            .collect::<Vec<_>>()
            .join(" ⏎ ");
        format!(
            "status {:?}, last line {:?}, stderr tail: {tail}",
            self.status,
            self.lines.last()
        )
    }
}

impl Delegate {
    pub(super) fn start(home: &Path, preset: &Path, provider: Provider, prompt: &str) -> Self {
        let mut child = subagent(home)
            .args(provider.command())
            .arg("--preset")
            .arg(preset)
            .arg(prompt)
            .spawn()
            .unwrap();
        let started = Instant::now();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = drain(child.stderr.take().unwrap());
        Self {
            child,
            started,
            lines,
            stderr,
            seen: Vec::new(),
        }
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (bounded) for the run's first event line: the run is under way. `false` if none
    /// came (the process ended or stayed silent).
    pub(super) fn wait_first_event(&mut self, limit: Duration) -> bool {
        match self.lines.recv_timeout(limit) {
            Ok(line) => {
                self.seen.push(line);
                true
            }
            Err(_) => false,
        }
    }

    /// Waits (bounded) for an event line that `wanted` accepts; `false` if none came.
    pub(super) fn wait_event(&mut self, limit: Duration, wanted: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            let found = wanted(&line);
            self.seen.push(line);
            if found {
                return true;
            }
        }
        false
    }

    /// Waits up to `limit` for the process to exit (SIGKILL and `status: None` past it), then
    /// collects its output.
    pub(super) fn finish(mut self, limit: Duration) -> Ended {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break Some(status);
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        // Its pipes close with it, unless something it left holds them: then stop reading
        // after a while rather than hang.
        let until = Instant::now() + Duration::from_secs(5);
        while let Ok(line) = self
            .lines
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            self.seen.push(line);
        }
        let stderr = self
            .stderr
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .unwrap_or_default();
        Ended {
            status,
            lines: self.seen,
            stderr,
        }
    }
}

/// What a remote row runs on: `subagent serve` (a2a) or a nats-server with one
/// `subagent worker` (nats), both on the fake model; nothing for local rows.
pub(super) struct Remote {
    home: PathBuf,
    model_url: String,
    serve: Option<Served>,
    nats: Option<NatsServer>,
    worker: Option<Child>,
    pub remotes: Remotes,
}

impl Remote {
    pub(super) fn start(provider: Provider, home: &Path, model_url: &str) -> Self {
        let mut remote = Self {
            home: home.to_path_buf(),
            model_url: model_url.to_owned(),
            serve: None,
            nats: None,
            worker: None,
            remotes: Remotes::default(),
        };
        match provider {
            Provider::A2a => remote.start_serve(),
            Provider::Nats => {
                let nats = NatsServer::start().unwrap();
                remote.remotes.nats = Some(nats.url());
                remote.nats = Some(nats);
                remote.start_worker();
            }
            _ => {}
        }
        remote
    }

    fn remote_home(&self) -> PathBuf {
        let dir = self.home.join("remote");
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn start_serve(&mut self) {
        let home = self.remote_home();
        let preset = rows::local_preset(&home, &self.model_url);
        let (served, stderr, base) = crate::suite::serve::start(&home, &preset);
        drain(stderr);
        self.remotes.a2a = Some(base);
        self.serve = Some(served);
    }

    pub(super) fn start_worker(&mut self) {
        let home = self.remote_home();
        let preset = rows::local_preset(&home, &self.model_url);
        let url = self.remotes.nats.clone().unwrap();
        let mut child = subagent(&home)
            .args([
                "worker",
                "--nats",
                &url,
                "--ack-wait-ms",
                "1000",
                "--preset",
            ])
            .arg(preset)
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let line = announcement(&mut stderr);
        assert!(
            line.starts_with("subagent worker: rows "),
            "not ready: {line}"
        );
        drain(stderr);
        self.worker = Some(child);
    }

    /// The pid of the process the remote runs live under (serve or the worker).
    pub(super) fn host(&self) -> Option<u32> {
        match (&self.serve, &self.worker) {
            (Some(served), _) => Some(served.id()),
            (_, Some(worker)) => Some(worker.id()),
            _ => None,
        }
    }

    /// What runs under the remote host besides itself (its runs' process trees).
    pub(super) fn runs_alive(&self) -> Vec<reaper::Live> {
        let Some(host) = self.host() else {
            return Vec::new();
        };
        let host = i32::try_from(host).unwrap();
        reaper::tree(host)
            .into_iter()
            .filter(|l| l.pid != host)
            .collect()
    }

    /// Waits up to `limit` for the remote runs' processes to end; what is left then.
    pub(super) fn settle_runs(&self, limit: Duration) -> Vec<reaper::Live> {
        let deadline = Instant::now() + limit;
        loop {
            let alive = self.runs_alive();
            if alive.is_empty() || Instant::now() >= deadline {
                return alive;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The worker, SIGKILLed and reaped (a crash).
    pub(super) fn kill_worker(&mut self) {
        if let Some(mut worker) = self.worker.take() {
            let _ = worker.kill();
            let _ = worker.wait();
        }
    }

    /// Everything stopped (SIGKILL) and started afresh: a clean store, no queued job, no run.
    pub(super) fn restart(&mut self, provider: Provider) {
        let fresh = Self::start(provider, &self.home, &self.model_url);
        self.stop();
        *self = fresh;
    }

    pub(super) fn stop(&mut self) {
        self.kill_worker();
        if let Some(served) = self.serve.take() {
            drop(served);
        }
        self.nats = None;
    }

    /// The pids the harness keeps running between rounds (not strays).
    pub(super) fn pids(&self) -> Vec<i32> {
        let mut pids = Vec::new();
        if let Some(host) = self.host() {
            pids.push(i32::try_from(host).unwrap());
        }
        if let Some(nats) = &self.nats {
            // nats-server is a child of this process too: find it among them.
            let port = nats.url().rsplit(':').next().unwrap_or_default().to_owned();
            for child in reaper::children() {
                if reaper::tree(child)
                    .first()
                    .is_some_and(|l| l.cmdline.contains("nats-server") && l.cmdline.contains(&port))
                {
                    pids.push(child);
                }
            }
        }
        pids
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        self.stop();
    }
}
