//! Delegation on the user's path: every number here goes through a real parent run. The
//! parent's model answers with delegation calls, the runtime's loop runs them through the
//! delegation tool and the gating `Registry`, the spawn provider's children run their own loop,
//! and the parent's model gets their results (`cargo bench -p subagent-spawn --bench delegation`).
//!
//! Printed first (own harness: paired and interleaved, so machine load hits both sides alike):
//! - **the cost of one delegation**: a parent round trip whose one tool call is a no-op tool and
//!   the same round trip whose call is a spawn delegation (the child makes one model call), run
//!   alternately; the median of the per-round differences. With the offline scripted model on
//!   one thread and on the 2-worker runtime, and over real HTTP to the fake model server
//!   (Anthropic protocol; the server on a runtime of its own, as a provider is another process);
//! - **memory per idle child started through a parent**: one parent turn makes N delegation
//!   calls whose children park on a closed gate; resident memory grown per child.
//!
//! Then divan: **fan-out through a parent** (one parent turn with N = 100 / 1,000 / 10,000
//! delegation calls, every child's model waiting 50 ms, default `tool_concurrency`), with the
//! scripted model and over HTTP (100 and 1,000: at 10,000 the client's and the in-process
//! server's sockets would pass the usual 20k open-file limit). No allocation profiler: divan
//! counts the benchmark thread's allocations only, and the work runs on the runtime's workers.
//!
//! `-- --list` or `-- --test` skips the printed part; a divan filter (`-- fan_out`) keeps it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};
use subagent_core::agents::{AgentDirectory, StaticAgents};
use subagent_core::registry::Registry;
use subagent_core::{CancellationToken, StopReason};
use subagent_model::scenario::Gate;
use subagent_model::{Model, Scenarios, ScriptedModel, ToolSpec};
use subagent_runtime::{
    Agent, AgentConfig, DelegationTool, DelegationToolConfig, PermissionPolicy, Roots, Tool,
    ToolContext, ToolKind, ToolOutput, ToolSet,
};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::runs::assert_answered;
use subagent_test_support::{FakeServer, bench};

/// Fan-out sizes of the divan benchmark.
const FAN_OUT: [usize; 3] = [100, 1_000, 10_000];
/// Children parked at once for the memory figure.
const IDLE_CHILDREN: usize = 2_000;

/// Every scenario the benchmarks use: round trips, fan-outs of each size, idle children.
fn scenarios() -> String {
    let mut yaml = String::from(
        r#"
- name: child
  match: "^CHILD-TASK"
  steps:
    - text: "child done"
- name: slow-child
  match: "^SLOW-CHILD"
  steps:
    - delay_ms: 50
      text: "slow child done"
- name: idle-child
  match: "^IDLE-CHILD"
  steps:
    - wait_gate: idle
      text: "idle child done"
- name: plain
  match: "^PLAIN$"
  steps:
    - tool_calls: [{name: noop, input: {}}]
    - text: "parent done"
- name: delegate
  match: "^DELEGATE$"
  steps:
    - tool_calls: [{name: subagent, input: {prompt: "CHILD-TASK go"}}]
    - text: "parent done"
"#,
    );
    let mut fan_out = |name: &str, n: usize, child: &str| {
        yaml.push_str(&format!(
            "- name: {name}\n  match: \"^{name}$\"\n  steps:\n    - tool_calls:\n"
        ));
        for i in 0..n {
            yaml.push_str(&format!(
                "        - {{name: subagent, input: {{prompt: \"{child} {i}\"}}}}\n"
            ));
        }
        yaml.push_str("    - text: \"parent done\"\n");
    };
    for n in FAN_OUT {
        fan_out(&format!("FAN-OUT-{n}"), n, "SLOW-CHILD");
    }
    fan_out("IDLE-FAN-OUT-10", 10, "IDLE-CHILD");
    fan_out(
        &format!("IDLE-FAN-OUT-{IDLE_CHILDREN}"),
        IDLE_CHILDREN,
        "IDLE-CHILD",
    );
    yaml
}

struct Noop;

#[async_trait]
impl Tool for Noop {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "noop".into(),
            description: "Does nothing.".into(),
            input_schema: json!({"type": "object"}),
        }
    }
    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }
    async fn call(&self, _: Value, _: &ToolContext) -> subagent_runtime::Result<ToolOutput> {
        Ok(ToolOutput::ok("ok"))
    }
}

/// A fake model server on a runtime of its own (one worker thread): a model provider is another
/// process, so its work does not run on the client's workers. Dropped server first.
struct HttpServer {
    server: FakeServer,
    _runtime: tokio::runtime::Runtime,
}

impl HttpServer {
    fn start() -> Self {
        let (runtime, server) = bench::server_apart(&scenarios());
        Self {
            server,
            _runtime: runtime,
        }
    }

    /// Our Anthropic client pointed at the server (no retries).
    fn model(&self) -> Arc<dyn Model> {
        bench::anthropic(&self.server)
    }
}

/// Where the model runs: in-process (scripted) or over HTTP.
enum Backend {
    Scripted(Arc<ScriptedModel>),
    Http(HttpServer),
}

impl Backend {
    fn scripted() -> Self {
        let scenarios = Scenarios::from_yaml(&scenarios()).unwrap();
        Self::Scripted(Arc::new(ScriptedModel::new("bench", scenarios)))
    }

    fn model(&self) -> Arc<dyn Model> {
        match self {
            Self::Scripted(model) => Arc::clone(model) as Arc<dyn Model>,
            Self::Http(server) => server.model(),
        }
    }

    fn gate(&self, name: &str) -> Gate {
        match self {
            Self::Scripted(model) => model.gates().gate(name),
            Self::Http(server) => server.server.gate(name),
        }
    }
}

/// A parent with the no-op tool and a delegation tool routed to spawn, as a preset builds it
/// (default `tool_concurrency`, bypass permissions so nothing asks).
struct Parent {
    backend: Backend,
    config: AgentConfig,
    _dir: tempfile::TempDir,
}

impl Parent {
    fn new(backend: Backend) -> Self {
        let model = backend.model();
        let registry = Registry::with_max_depth(3);
        let spawn = SpawnProvider::new("spawn", Arc::clone(&model), SpawnConfig::default());
        registry.register(Arc::new(spawn)).unwrap();
        let agents: Arc<dyn AgentDirectory> = Arc::new(StaticAgents::default());
        let delegation: Arc<dyn Tool> = Arc::new(DelegationTool::new(
            DelegationToolConfig::new("spawn"),
            Arc::new(registry),
            agents,
        ));
        let dir = tempfile::tempdir().unwrap();
        let mut config = AgentConfig::new(model, Roots::new(dir.path()).unwrap());
        config.tools = ToolSet::new([Arc::new(Noop) as Arc<dyn Tool>, delegation]);
        config.permissions = PermissionPolicy::bypass();
        Self {
            backend,
            config,
            _dir: dir,
        }
    }

    /// One whole parent run of `prompt`; panics unless it completes with the parent's answer.
    async fn run(&self, prompt: &str) {
        let outcome = Agent::new(self.config.clone())
            .unwrap()
            .start_prompt(prompt, CancellationToken::new())
            .outcome()
            .await;
        assert_answered(&outcome, "parent done");
    }
}

fn multi_thread() -> tokio::runtime::Runtime {
    bench::runtime(2)
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The median, 25th and 75th percentile of `samples` (µs).
fn quartiles(mut samples: Vec<f64>) -> (f64, f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.25), at(0.75))
}

/// Plain and delegating round trips alternating (the order flips every round), `rounds` pairs
/// after `warmup`; prints both medians and the median of the paired differences.
fn paired_delegation_cost(
    label: &str,
    parent: &Parent,
    rt: &tokio::runtime::Runtime,
    rounds: usize,
) {
    let warmup = rounds / 10;
    let (mut plain, mut delegating, mut diff) = (Vec::new(), Vec::new(), Vec::new());
    rt.block_on(async {
        for round in 0..warmup + rounds {
            let mut timed = [0.0_f64; 2];
            for side in [round % 2, (round + 1) % 2] {
                let prompt = ["PLAIN", "DELEGATE"][side];
                let started = Instant::now();
                parent.run(prompt).await;
                timed[side] = micros(started.elapsed());
            }
            if round >= warmup {
                plain.push(timed[0]);
                delegating.push(timed[1]);
                diff.push(timed[1] - timed[0]);
            }
        }
    });
    let (p, _, _) = quartiles(plain);
    let (d, _, _) = quartiles(delegating);
    let (m, q1, q3) = quartiles(diff);
    println!(
        "  {label:<34} {p:>9.1} µs {d:>11.1} µs {m:>+9.1} µs  [{q1:+.1}, {q3:+.1}]  ({rounds} pairs)"
    );
}

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// Resident memory per idle child started through a parent: one parent turn makes
/// `IDLE_CHILDREN` delegation calls whose children's model waits on the closed gate `idle`.
/// Counts everything one more child costs: the parent's call (its tool future, context and
/// event forwarding), the registry start, the child's run and its pending model call. With the
/// scripted model only: over HTTP the in-process fake server's side of each connection (and its
/// record of every request body) would be counted too.
fn memory_per_idle_child(label: &str, backend: Backend) {
    let rt = multi_thread();
    let parent = Parent::new(backend);
    let gate = parent.backend.gate("idle");
    rt.block_on(async {
        // Warm up lazy statics, the allocator's arenas and (HTTP) the connection pool's first
        // connections, with few children: a warm-up as large as the measurement would leave
        // freed memory resident and hide the growth.
        gate.open();
        parent.run("IDLE-FAN-OUT-10").await;
        gate.close();
        let before = rss_bytes();
        let started = Instant::now();
        let run = Agent::new(parent.config.clone())
            .unwrap()
            .start_prompt(
                format!("IDLE-FAN-OUT-{IDLE_CHILDREN}"),
                CancellationToken::new(),
            );
        parked(&gate, IDLE_CHILDREN).await;
        let parked = started.elapsed();
        let after = rss_bytes();
        println!(
            "  {label:<34} {:>7} bytes RSS per child  ({IDLE_CHILDREN} children parked in {:.1} ms)",
            after.saturating_sub(before) / IDLE_CHILDREN as u64,
            parked.as_secs_f64() * 1e3,
        );
        gate.open();
        let outcome = run.outcome().await;
        assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    });
}

/// Waits, without sleeping, until `n` waiters are parked at `gate`.
async fn parked(gate: &Gate, n: usize) {
    while gate.waiting() < n {
        tokio::task::yield_now().await;
    }
}

fn printed_part() {
    println!(
        "The cost of one delegation through a parent, paired (plain and delegating runs alternating):"
    );
    println!(
        "  {:<34} {:>12} {:>14} {:>12}  [p25, p75] of the differences",
        "path", "plain median", "delegating", "paired diff"
    );
    let scripted = Parent::new(Backend::scripted());
    paired_delegation_cost(
        "scripted model, one thread",
        &scripted,
        &current_thread(),
        3_000,
    );
    paired_delegation_cost(
        "scripted model, 2 workers",
        &scripted,
        &multi_thread(),
        3_000,
    );
    let http = Parent::new(Backend::Http(HttpServer::start()));
    paired_delegation_cost("HTTP (Anthropic), 2 workers", &http, &multi_thread(), 1_000);
    println!(
        "Memory per idle child started through a parent (one turn, {IDLE_CHILDREN} delegation calls):"
    );
    memory_per_idle_child("scripted model", Backend::scripted());
    println!();
}

/// Fan-out through a parent: one parent turn with `n` delegation calls, every child's model
/// waiting 50 ms; the whole parent run (both its model calls included). Scripted model.
#[divan::bench(args = FAN_OUT, sample_count = 5, sample_size = 1)]
fn fan_out_through_parent(bencher: divan::Bencher, n: usize) {
    let rt = multi_thread();
    let parent = Parent::new(Backend::scripted());
    let prompt = format!("FAN-OUT-{n}");
    bencher.bench_local(|| rt.block_on(parent.run(&prompt)));
}

/// The same fan-out over HTTP: the parent and every child talk to the fake model server
/// (Anthropic protocol), each child on a connection of its own while it waits.
#[divan::bench(args = [100, 1_000], sample_count = 5, sample_size = 1)]
fn fan_out_through_parent_http(bencher: divan::Bencher, n: usize) {
    let rt = multi_thread();
    let parent = Parent::new(Backend::Http(HttpServer::start()));
    let prompt = format!("FAN-OUT-{n}");
    bencher.bench_local(|| rt.block_on(parent.run(&prompt)));
}

/// The allocator the `subagent` binary uses (`crates/cli/src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--list" || a == "--test") {
        printed_part();
    }
    divan::main();
}
