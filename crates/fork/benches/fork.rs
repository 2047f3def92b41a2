//! Fork cost vs the parent's history: a 10-message parent vs a 10,000-message one.
//! - `seed`: building the fork's seed from the parent's snapshot (what forking itself costs);
//! - `start`: the provider's `start` (seed, agent config, task spawned);
//! - `round_trip`: start and the child's whole run with the offline scripted model (its first
//!   request carries the parent's whole conversation, as every parent turn does).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use subagent_core::{Extensions, ParentContext, RunId, StartRequest, StopReason, SubagentProvider};
use subagent_fork::{ForkConfig, ForkProvider, fork_task_text, seed_from_snapshot};
use subagent_model::{Messages, Model, Scenarios, ScriptedModel};
use subagent_runtime::tools::BashConfig;
use subagent_runtime::{ParentSnapshot, PermissionPolicy, Roots, RunEnv, TaskTable, ToolSet};
use subagent_session::{ContentBlock, EventLog, Message, Role, SessionEvent, StopReason as Stop};

const SCENARIOS: &str = r#"
- name: fork-child
  match: "FORK-BENCH"
  steps:
    - text: "fork done"
"#;

fn snapshot(messages: usize, dir: &std::path::Path) -> ParentSnapshot {
    let model: Arc<dyn Model> = Arc::new(ScriptedModel::new(
        "bench",
        Scenarios::from_yaml(SCENARIOS).unwrap(),
    ));
    let mut log = EventLog::new();
    for i in 0..messages.saturating_sub(1) / 2 {
        log.append(SessionEvent::TurnStart { turn: i as u32 });
        log.append(SessionEvent::message(Message::user(format!(
            "user message {i} with some text to make it realistic"
        ))));
        log.append(SessionEvent::message(Message::assistant(format!(
            "assistant answer {i} with some more text to make it realistic"
        ))));
        log.append(SessionEvent::TurnEnd {
            stop_reason: Stop::Completed,
        });
    }
    log.append(SessionEvent::message(Message::new(
        Role::Assistant,
        vec![ContentBlock::tool_use(
            "call_1",
            "subagent",
            json!({"prompt": "FORK-BENCH"}),
        )],
    )));
    log.append(SessionEvent::TurnEnd {
        stop_reason: Stop::Completed,
    });
    let roots = Roots::new(dir).unwrap();
    ParentSnapshot {
        system: Some(Arc::from("You are the parent.")),
        tools: ToolSet::new(ToolSet::builtin(BashConfig::default())),
        model,
        model_id: None,
        max_tokens: 4096,
        messages: Messages::from(log.messages()),
        log,
        call_id: "call_1".into(),
        env: Arc::new(RunEnv {
            run_id: RunId::new(),
            roots,
            depth: 0,
            max_depth: 3,
            background: false,
            lineage: Vec::new(),
            permissions: PermissionPolicy::bypass(),
            tasks: Arc::new(TaskTable::default()),
            secrets: Default::default(),
        }),
    }
}

fn request(snapshot: &ParentSnapshot) -> StartRequest {
    let mut extensions = Extensions::new();
    extensions.insert(snapshot.clone());
    StartRequest::builder("FORK-BENCH task")
        .parent(ParentContext {
            cwd: snapshot.env.roots.cwd().to_path_buf(),
            depth: 0,
            lineage: Vec::new(),
            log: Some(snapshot.log.clone()),
            extensions,
        })
        .background(true)
        .build()
}

#[divan::bench(args = [10, 10_000])]
fn seed(bencher: divan::Bencher, messages: usize) {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = snapshot(messages, dir.path());
    bencher.bench_local(|| seed_from_snapshot(&snapshot, fork_task_text("FORK-BENCH", None)));
}

#[divan::bench(args = [10, 10_000])]
fn start(bencher: divan::Bencher, messages: usize) {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = snapshot(messages, dir.path());
    let provider = ForkProvider::new("fork", ForkConfig::default(), None);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    bencher.bench_local(|| {
        rt.block_on(async {
            let run = provider.start(request(&snapshot)).await.unwrap();
            run.cancel();
            run
        })
    });
}

#[divan::bench(args = [10, 10_000])]
fn round_trip(bencher: divan::Bencher, messages: usize) {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = snapshot(messages, dir.path());
    let provider = ForkProvider::new("fork", ForkConfig::default(), None);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    bencher.bench_local(|| {
        rt.block_on(async {
            let outcome = provider
                .start(request(&snapshot))
                .await
                .unwrap()
                .outcome()
                .await;
            assert_eq!(outcome.status, StopReason::Completed);
        });
    });
}

fn main() {
    divan::main();
}
