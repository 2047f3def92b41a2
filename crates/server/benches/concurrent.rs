//! Many remote runs at once on one server (`cargo bench -p subagent-server --bench concurrent`),
//! ours against the official A2A Python SDK's server (issue 14, part 4).
//!
//! Each server is a process of its own: ours is this bench binary started again as a server
//! (`--serve-child`: `subagent serve`'s server over a spawn row on the offline scripted model),
//! the SDK's is `crates/cli/tests/suite/a2a_sdk_agent.py` (a2a-sdk 1.3.0 under uvicorn, in the
//! venv `cargo xtask install-clis` makes; skipped when missing). One client in this process
//! sends 1,000 blocking `SendMessage`s at once, each on its own connection, two workloads:
//!
//! - **held**: each run's model answers after 1 s (the SDK agent sleeps 1 s), so all 1,000 are
//!   in flight together: the server's peak RSS (`VmHWM`) and how many did not complete;
//! - **burst**: the model answers at once (the SDK agent echoes): the wall time of the 1,000,
//!   i.e. the server's throughput under 1,000 concurrent clients.
//!
//! Ours and the SDK's alternate, the order flipping each round (paired, interleaved); the
//! figures printed are per round and their medians. Then divan times one burst on ours.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use subagent_server::{Server, ServerConfig, Skill};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::bench;

const RUNS: usize = 1_000;
const ROUNDS: usize = 3;
const HOLD_MS: u64 = 1_000;

const SCENARIO: &str = r#"
- name: burst
  match: "BURST"
  steps:
    - text: "Hi there."
- name: held
  match: "HELD"
  steps:
    - delay_ms: 1000
      text: "waited"
"#;

/// `--serve-child`: our server on 127.0.0.1:0, its port on stdout, until killed.
fn serve_child() {
    let runtime = bench::runtime(2);
    let model = bench::scripted(SCENARIO);
    let spawn = SpawnProvider::new("spawn", model, SpawnConfig::default());
    let registry = bench::registry_of(spawn);
    let dir = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::new(dir.path());
    config.max_concurrent_runs = 4 * RUNS;
    let skills = vec![Skill {
        id: "subagent".to_owned(),
        description: "bench".to_owned(),
        provider: "spawn".to_owned(),
        agent: None,
    }];
    runtime.block_on(async {
        // The backlog the SDK's side gets too (4096, the kernel's somaxconn here): with
        // tokio's default of 1,024, 1,000 connects at once overflowed the accept queue and the
        // dropped ones came back after the kernel's 1 s SYN retransmit.
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(([127, 0, 0, 1], 0).into()).unwrap();
        let listener = socket.listen(4096).unwrap();
        println!("PORT {}", listener.local_addr().unwrap().port());
        let server = Server::new(Arc::new(registry), skills, config);
        server
            .serve(listener, std::future::pending())
            .await
            .unwrap();
    });
}

/// A server process, killed when dropped.
struct Peer {
    name: &'static str,
    child: Child,
    url: String,
    burst: &'static str,
    held: String,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(name: &'static str, mut command: Command, burst: &'static str, held: String) -> Peer {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let line = subagent_test_support::procs::first_line(&mut child);
    let port = line.trim().strip_prefix("PORT ").unwrap().to_owned();
    Peer {
        name,
        child,
        url: format!("http://127.0.0.1:{port}/a2a"),
        burst,
        held,
    }
}

fn ours() -> Peer {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.arg("--serve-child");
    start("ours", command, "BURST", "HELD".to_owned())
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sdk() -> Option<Peer> {
    let python = root().join("target/py/a2a-sdk/bin/python");
    if !python.is_file() {
        println!(
            "concurrent: {} missing (cargo xtask install-clis): the SDK's side is skipped",
            python.display()
        );
        return None;
    }
    let mut command = Command::new(python);
    command.arg(root().join("crates/cli/tests/suite/a2a_sdk_agent.py"));
    Some(start("sdk", command, "ECHO hi", format!("WAIT {HOLD_MS}")))
}

/// `VmRSS` and `VmHWM` of a process, in MiB.
fn memory(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// `RUNS` blocking sends of `text` at once; the wall time and how many did not complete.
async fn wave(url: &str, text: &str) -> (Duration, usize) {
    // One connection per run, as 1,000 separate clients would have.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let started = Instant::now();
    let sends = (0..RUNS).map(|i| {
        let body = json!({"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message":
            {"messageId": format!("m{i}"), "role": "ROLE_USER", "parts": [{"text": text}]}}});
        let request = client
            .post(url)
            .header("A2A-Version", "1.0")
            .json(&body)
            .send();
        async move {
            let Ok(response) = request.await else {
                return false;
            };
            let Ok(value) = response.json::<serde_json::Value>().await else {
                return false;
            };
            value["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        }
    });
    let completed = futures::future::join_all(sends).await;
    let failed = completed.iter().filter(|ok| !**ok).count();
    (started.elapsed(), failed)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The kernel's count of connections dropped because a listen queue was full (all sockets).
fn listen_overflows() -> u64 {
    let text = std::fs::read_to_string("/proc/net/netstat").unwrap_or_default();
    let mut lines = text.lines().filter(|line| line.starts_with("TcpExt:"));
    let (Some(names), Some(values)) = (lines.next(), lines.next()) else {
        return 0;
    };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(name, _)| *name == "ListenOverflows")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_owned()
}

#[derive(Default)]
struct Figures {
    burst_ms: Vec<f64>,
    held_ms: Vec<f64>,
    failed: usize,
    idle_rss: f64,
    peak_rss: f64,
}

fn paired(runtime: &tokio::runtime::Runtime) {
    let mut peers = vec![ours()];
    peers.extend(sdk());
    let mut figures: Vec<Figures> = peers.iter().map(|_| Figures::default()).collect();
    for (peer, figures) in peers.iter().zip(&mut figures) {
        figures.idle_rss = memory(peer.child.id()).0;
    }
    println!(
        "concurrent: {RUNS} runs at once, {ROUNDS} rounds, load {} at start",
        load()
    );
    for round in 0..ROUNDS {
        let mut order: Vec<usize> = (0..peers.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let peer = &peers[i];
            let overflows = listen_overflows();
            let (burst, burst_failed) = runtime.block_on(wave(&peer.url, peer.burst));
            let (held, held_failed) = runtime.block_on(wave(&peer.url, &peer.held));
            let (_, peak) = memory(peer.child.id());
            let figures = &mut figures[i];
            figures.burst_ms.push(burst.as_secs_f64() * 1e3);
            figures.held_ms.push(held.as_secs_f64() * 1e3);
            figures.failed += burst_failed + held_failed;
            figures.peak_rss = peak;
            println!(
                "  round {round} {:>4}: burst {:>8.1} ms ({burst_failed} failed), held {:>8.1} ms \
                 ({held_failed} failed), peak RSS {peak:.1} MiB, listen overflows {}, load {}",
                peer.name,
                burst.as_secs_f64() * 1e3,
                held.as_secs_f64() * 1e3,
                listen_overflows().saturating_sub(overflows),
                load()
            );
        }
    }
    for (peer, figures) in peers.iter().zip(&figures) {
        println!(
            "concurrent {:>4}: burst median {:.1} ms ({:.0} runs/s), held median {:.1} ms, \
             failed {} of {}, RSS idle {:.1} MiB, peak {:.1} MiB",
            peer.name,
            median(figures.burst_ms.clone()),
            RUNS as f64 / (median(figures.burst_ms.clone()) / 1e3),
            median(figures.held_ms.clone()),
            figures.failed,
            2 * RUNS * ROUNDS,
            figures.idle_rss,
            figures.peak_rss
        );
    }
    if let [ours, sdk] = &figures[..] {
        let ratios: Vec<f64> = ours
            .burst_ms
            .iter()
            .zip(&sdk.burst_ms)
            .map(|(ours, sdk)| sdk / ours)
            .collect();
        println!(
            "concurrent: throughput ratio (SDK burst time / ours, per round) {:?}, median {:.1}x",
            ratios
                .iter()
                .map(|r| format!("{r:.1}x"))
                .collect::<Vec<_>>(),
            median(ratios.clone())
        );
    }
}

#[divan::bench(sample_count = 5)]
fn burst_of_1000_on_ours(bencher: divan::Bencher) {
    let runtime = bench::runtime(2);
    let peer = ours();
    bencher.bench_local(|| {
        let (_, failed) = runtime.block_on(wave(&peer.url, peer.burst));
        assert_eq!(failed, 0);
    });
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--serve-child") {
        serve_child();
        return;
    }
    let runtime = bench::runtime(2);
    paired(&runtime);
    drop(runtime);
    divan::main();
}
