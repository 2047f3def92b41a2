//! What the record of runs costs on the user's path (`cargo bench -p subagent-runs --bench
//! record`; own harness, paired and interleaved):
//! - **a fan-out through a parent, recorded and not**: one parent turn with 1,000 delegation
//!   calls to spawn children (each child's model waits 50 ms; the parent and the children over
//!   HTTP to the fake model server on a runtime of its own, the user's path, then with the
//!   scripted model; the 2-worker runtime; the binary's allocator), run alternately through a
//!   registry with the recorder and one without; the median of the paired differences,
//!   relative to the unrecorded run;
//! - **`ps` with 10,000 recorded runs**: 10,000 finished records and 20 running ones in a fresh
//!   record; `ps` reads the running ones (`Runs::live` + `tree`), `ps --all` all of them.
//!
//! The first argument (default 10) sets the number of fan-out pairs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use subagent_core::agents::{AgentDirectory, StaticAgents};
use subagent_core::registry::Registry;
use subagent_core::{CancellationToken, RunId, Usage};
use subagent_runs::{Owner, Record, Recorder, Runs, Status};
use subagent_runtime::{
    Agent, AgentConfig, DelegationTool, DelegationToolConfig, PermissionPolicy, Roots, Tool,
    ToolSet,
};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::bench;

const CHILDREN: usize = 1_000;

fn scenarios() -> String {
    let mut yaml = String::from(
        "- match: \"^SLOW-CHILD\"\n  steps:\n    - delay_ms: 50\n      text: \"child done\"\n- match: \"^FAN-OUT$\"\n  steps:\n    - tool_calls:\n",
    );
    for i in 0..CHILDREN {
        yaml.push_str(&format!(
            "        - {{name: subagent, input: {{prompt: \"SLOW-CHILD {i}\"}}}}\n"
        ));
    }
    yaml.push_str("    - text: \"parent done\"\n");
    yaml
}

/// A parent whose delegation tool starts spawn children through a registry (recorded into
/// `runs`, or not), the parent and its children on `model`.
fn parent(
    model: &Arc<dyn subagent_model::Model>,
    recorder: Option<&Arc<Recorder>>,
    dir: &std::path::Path,
) -> AgentConfig {
    let model = Arc::clone(model);
    let mut registry = Registry::with_max_depth(3);
    if let Some(recorder) = recorder {
        registry
            .set_recorder(Arc::clone(recorder) as Arc<dyn subagent_core::registry::RunRecorder>);
    }
    let spawn = SpawnProvider::new("spawn", Arc::clone(&model), SpawnConfig::default());
    registry.register(Arc::new(spawn)).unwrap();
    let agents: Arc<dyn AgentDirectory> = Arc::new(StaticAgents::default());
    let delegation: Arc<dyn Tool> = Arc::new(DelegationTool::new(
        DelegationToolConfig::new("spawn"),
        Arc::new(registry),
        agents,
    ));
    let mut config = AgentConfig::new(model, Roots::new(dir).unwrap());
    config.tools = ToolSet::new([delegation]);
    config.permissions = PermissionPolicy::bypass();
    config
}

/// One fan-out; with a recorder, until all it recorded is written (as a command's last run
/// waits for it).
async fn run(config: &AgentConfig, recorder: Option<&Arc<Recorder>>) -> Duration {
    let started = Instant::now();
    let outcome = Agent::new(config.clone())
        .unwrap()
        .start_prompt("FAN-OUT", CancellationToken::new())
        .outcome()
        .await;
    assert!(outcome.is_completed(), "{outcome:?}");
    if let Some(recorder) = recorder {
        recorder.flush().await;
    }
    started.elapsed()
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// The fan-out recorded and not, paired and interleaved, with the parent and its children on
/// `model` (`what` names it).
fn fan_out(what: &str, model: &Arc<dyn subagent_model::Model>) {
    let dir = tempfile::tempdir().unwrap();
    let runs = Runs::open(dir.path().join("runs")).unwrap();
    let recorder = Recorder::new(runs.clone(), "bench", None);
    let plain = parent(model, None, dir.path());
    let recorded = parent(model, Some(&recorder), dir.path());
    let rt = bench::runtime(2);
    let pairs = bench::pairs(10);
    let (mut bare, mut with, mut diff) = (Vec::new(), Vec::new(), Vec::new());
    rt.block_on(async {
        run(&plain, None).await;
        run(&recorded, Some(&recorder)).await;
        for pair in 0..pairs {
            let mut timed = [0.0; 2];
            for side in [pair % 2, (pair + 1) % 2] {
                let (config, with) = [(&plain, None), (&recorded, Some(&recorder))][side];
                timed[side] = run(config, with).await.as_secs_f64() * 1e3;
            }
            bare.push(timed[0]);
            with.push(timed[1]);
            diff.push(timed[1] - timed[0]);
        }
    });
    let (b, w, d) = (median(bare), median(with), median(diff));
    println!(
        "  fan-out of {CHILDREN} through a parent, {what}: {b:.1} ms unrecorded, {w:.1} ms recorded, paired diff {d:+.1} ms ({:+.1} %, {pairs} pairs)",
        d / b * 100.0
    );
    println!(
        "    ({} finished and {} running records, {} journals written)",
        runs.done().len(),
        std::fs::read_dir(runs.root().join("live")).unwrap().count(),
        std::fs::read_dir(runs.root().join("events"))
            .unwrap()
            .count()
    );
}

fn record(i: usize, status: Status) -> Record {
    let id = RunId::new();
    Record {
        id,
        parent: None,
        root: id,
        kind: "delegate".into(),
        provider: "spawn".into(),
        description: format!("run {i}"),
        agent_type: None,
        teammate: None,
        background: false,
        cwd: "/tmp".into(),
        status,
        started_ms: 1_000 + i as u64,
        ended_ms: (status != Status::Running).then_some(2_000 + i as u64),
        usage: Usage::default(),
        owner: Owner::this(),
        output: None,
        session: None,
        diagnostic: None,
        journal: None,
    }
}

fn ps() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Runs::open(dir.path()).unwrap();
    for i in 0..10_000 {
        runs.write(&record(i, Status::Completed)).unwrap();
    }
    for i in 0..20 {
        runs.write(&record(i, Status::Running)).unwrap();
    }
    let time = |what: &str, all: bool| {
        let mut samples = Vec::new();
        for _ in 0..15 {
            let started = Instant::now();
            let mut records = runs.live();
            if all {
                records.extend(runs.done());
            }
            let listed = subagent_runs::tree(records).len();
            samples.push(started.elapsed().as_secs_f64() * 1e3);
            assert_eq!(listed, if all { 10_020 } else { 20 });
        }
        println!("  {what}: {:.2} ms median of 15", median(samples));
    };
    time("ps, 20 running of 10,020 recorded", false);
    time("ps --all, 10,020 recorded", true);
}

fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    println!("The record of runs:");
    ps();
    // The user's path: the parent and every child over HTTP to the fake model server.
    let (_server_runtime, server) = bench::server_apart(&scenarios());
    fan_out("over HTTP", &bench::anthropic(&server));
    fan_out("scripted model", &bench::scripted(&scenarios()));
}

/// The allocator the `subagent` binary uses (`crates/cli/src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
