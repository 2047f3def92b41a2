//! Delegation costs with the offline scripted model (no network):
//! - a parent round trip whose one tool call is a no-op tool vs. a spawn delegation (the
//!   difference is the cost of one delegation, the child's own model call included);
//! - 1,000 parallel delegations whose children each wait 50 ms;
//! - memory per idle in-process run (printed before the benchmarks, and divan's allocation
//!   profile of starting one run).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use subagent_core::agents::{AgentDirectory, StaticAgents};
use subagent_core::registry::Registry;
use subagent_core::{CancellationToken, StartRequest, StopReason};
use subagent_model::{Model, Scenarios, ScriptedModel, ToolSpec};
use subagent_runtime::{
    Agent, AgentConfig, DelegationTool, DelegationToolConfig, PermissionPolicy, Roots, Tool,
    ToolContext, ToolKind, ToolOutput, ToolSet,
};
use subagent_spawn::{SpawnConfig, SpawnProvider};

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

const SCENARIOS: &str = r#"
- name: child
  match: "CHILD-TASK"
  steps:
    - text: "child done"
- name: slow-child
  match: "SLOW-CHILD"
  steps:
    - delay_ms: 50
      text: "slow child done"
- name: idle-child
  match: "IDLE-CHILD"
  steps:
    - wait_gate: idle
      text: "idle child done"
- name: plain
  match: "PLAIN"
  steps:
    - tool_calls: [{name: noop, input: {}}]
    - text: "parent done"
- name: delegate
  match: "DELEGATE"
  steps:
    - tool_calls: [{name: subagent, input: {prompt: "CHILD-TASK go"}}]
    - text: "parent done"
"#;

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

struct Fixture {
    model: Arc<ScriptedModel>,
    registry: Arc<Registry>,
    parent: AgentConfig,
    dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let model = Arc::new(ScriptedModel::new(
        "bench",
        Scenarios::from_yaml(SCENARIOS).unwrap(),
    ));
    let dynamic: Arc<dyn Model> = model.clone();
    let registry = Registry::with_max_depth(3);
    registry
        .register(Arc::new(SpawnProvider::new(
            "spawn",
            Arc::clone(&dynamic),
            SpawnConfig::default(),
        )))
        .unwrap();
    let registry = Arc::new(registry);
    let dir = tempfile::tempdir().unwrap();
    let agents: Arc<dyn AgentDirectory> = Arc::new(StaticAgents::default());
    let delegation: Arc<dyn Tool> = Arc::new(DelegationTool::new(
        DelegationToolConfig::new("spawn"),
        Arc::clone(&registry),
        agents,
    ));
    let mut parent = AgentConfig::new(dynamic, Roots::new(dir.path()).unwrap());
    parent.tools = ToolSet::new([Arc::new(Noop) as Arc<dyn Tool>, delegation]);
    parent.permissions = PermissionPolicy::bypass();
    Fixture {
        model,
        registry,
        parent,
        dir,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn parent_round_trip(bencher: divan::Bencher, prompt: &str) {
    round_trip_on(bencher, prompt, runtime());
}

/// The round trip on a given runtime. On the 2-worker runtime every await that crosses tasks
/// may wake another thread (microseconds of scheduler latency, noisy on a shared machine); on a
/// current-thread runtime the same work runs on one thread, which measures the CPU cost alone.
fn round_trip_on(bencher: divan::Bencher, prompt: &str, rt: tokio::runtime::Runtime) {
    let fx = fixture();
    bencher.bench_local(|| {
        let outcome = rt.block_on(async {
            Agent::new(fx.parent.clone())
                .unwrap()
                .start_prompt(prompt, CancellationToken::new())
                .outcome()
                .await
        });
        assert_eq!(outcome.status, StopReason::Completed);
    });
}

/// A parent run (two model calls) whose tool call is a no-op.
#[divan::bench]
fn round_trip_plain_tool_call(bencher: divan::Bencher) {
    parent_round_trip(bencher, "PLAIN");
}

/// The same parent run whose tool call is a spawn delegation (the child makes one model call).
#[divan::bench]
fn round_trip_spawn_delegation(bencher: divan::Bencher) {
    parent_round_trip(bencher, "DELEGATE");
}

/// `round_trip_plain_tool_call` on one thread (CPU cost without cross-thread wake-ups).
#[divan::bench]
fn round_trip_plain_tool_call_one_thread(bencher: divan::Bencher) {
    round_trip_on(bencher, "PLAIN", current_thread());
}

/// `round_trip_spawn_delegation` on one thread (CPU cost without cross-thread wake-ups).
#[divan::bench]
fn round_trip_spawn_delegation_one_thread(bencher: divan::Bencher) {
    round_trip_on(bencher, "DELEGATE", current_thread());
}

/// 1,000 delegations started at once through the registry; each child's model waits 50 ms.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn parallel_1000_delegations_50ms_children(bencher: divan::Bencher) {
    let rt = runtime();
    let fx = fixture();
    let cwd = fx.dir.path().to_path_buf();
    bencher.bench_local(|| {
        rt.block_on(async {
            let mut runs = Vec::with_capacity(1000);
            for _ in 0..1000 {
                let request = StartRequest::new("SLOW-CHILD", &cwd);
                runs.push(fx.registry.start("spawn", request).await.unwrap());
            }
            let outcomes = futures::future::join_all(runs.into_iter().map(|r| r.outcome())).await;
            assert!(outcomes.iter().all(|o| o.status == StopReason::Completed));
        });
    });
}

/// Starting one run that then idles (its model waits on a closed gate); divan's allocation
/// profile shows what a run holds.
#[divan::bench(sample_count = 20, sample_size = 10)]
fn start_idle_run(bencher: divan::Bencher) {
    let rt = runtime();
    let fx = fixture();
    let cwd = fx.dir.path().to_path_buf();
    bencher.bench_local(|| {
        rt.block_on(async {
            let request = StartRequest::new("IDLE-CHILD", &cwd);
            let run = fx.registry.start("spawn", request).await.unwrap();
            run.cancel();
            let _ = run.outcome().await;
        });
    });
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

/// Resident memory per idle run: 2,000 runs parked at a closed gate.
fn memory_per_idle_run() {
    let rt = runtime();
    let fx = fixture();
    let cwd = fx.dir.path().to_path_buf();
    let gate = fx.model.gates().gate("idle");
    const N: usize = 2000;
    rt.block_on(async {
        // Warm up allocator arenas and lazy statics.
        let warm = fx
            .registry
            .start("spawn", StartRequest::new("CHILD-TASK", &cwd))
            .await
            .unwrap();
        let _ = warm.outcome().await;
        let before = rss_bytes();
        let mut runs = Vec::with_capacity(N);
        for _ in 0..N {
            let request = StartRequest::new("IDLE-CHILD", &cwd);
            runs.push(fx.registry.start("spawn", request).await.unwrap());
        }
        while gate.waiting() < N {
            tokio::task::yield_now().await;
        }
        let after = rss_bytes();
        println!(
            "memory per idle in-process run: {} bytes RSS ({} runs parked)",
            after.saturating_sub(before) / N as u64,
            N
        );
        gate.open();
        for run in runs {
            let _ = run.outcome().await;
        }
    });
}

fn main() {
    memory_per_idle_run();
    divan::main();
}
