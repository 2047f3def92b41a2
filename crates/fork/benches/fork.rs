//! Fork cost vs the parent's history, 10 vs 10,000 messages
//! (`cargo bench -p subagent-fork --bench fork`).
//!
//! Printed first, **through a parent over real HTTP** (our Anthropic client, the fake model
//! server on 127.0.0.1 on a runtime of its own): a parent run seeded with the history makes one
//! fork call (no `subagent_type`); the fork's first request carries the whole history. Runs at
//! 10 and 10,000 messages alternate (paired, interleaved). Per run, from the parent's model
//! client (a timing wrapper around it; the fork shares the parent's model):
//! - `dispatch`: the last event of the parent's answer → the fork's first `Model::stream` call
//!   (the parent's loop, the delegation tool, the registry, the fork's seed and start);
//! - `encode`: building that request's JSON body, timed in the wrapper just before it hands the
//!   request on (`Anthropic::request_body`, the client's own encoder: it keeps each message's
//!   bytes with the shared conversation, so this is what the fork's first request really pays,
//!   the parent's own requests having encoded the history; the client's second encoding of the
//!   same request inside `stream` then finds every message kept);
//! - `encode cpu`: the same, as the encoding thread's CPU time (what the encoding costs, apart
//!   from the machine's load: on a shared machine the wall time also counts the time the thread
//!   waited for a core);
//! - `cold`: the same request encoded with nothing kept (a fresh copy of the conversation: a
//!   parent's first request after loading a transcript), for scale;
//! - **client-side** = dispatch + encode (what our process spends before the bytes go out);
//! - `to headers`: the `stream` call → the response's headers (client encode and send, plus the
//!   fake server reading, parsing and checking the body: not ours, shown for scale).
//!
//! Then divan, **components that bypass the parent**: `seed` (the fork's seed from a snapshot)
//! and `start` (the provider's `start` on a snapshot), offline scripted model.
//!
//! `-- --list` or `-- --test` skips the printed part.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::json;
use subagent_core::agents::StaticAgents;
use subagent_core::{
    CancellationToken, Extensions, ParentContext, RunId, StartRequest, SubagentProvider,
};
use subagent_fork::{ForkConfig, ForkProvider, fork_task_text, seed_from_snapshot};
use subagent_model::{
    Messages, Model, ModelConfig, ModelKind, ModelRequest, ModelStream, Protocol,
};
use subagent_runtime::tools::BashConfig;
use subagent_runtime::{
    Agent, AgentConfig, DelegationToolConfig, ParentSnapshot, PermissionPolicy, Roots, RunEnv,
    Seed, TaskTable, ToolSet,
};
use subagent_session::{ContentBlock, EventLog, Message, Role, SessionEvent, StopReason as Stop};
use subagent_test_support::runs::assert_answered;
use subagent_test_support::{FakeServer, bench};

const HISTORY: [usize; 2] = [10, 10_000];

/// The parent forks, answers while the fork runs, and ends on the fork's `<task-notification>`
/// (a new prompt for the fake server, matched before the fork's scenario: it quotes the task).
const HTTP_SCENARIOS: &str = r#"
- name: parent
  match: "^PARENT-TASK$"
  steps:
    - tool_calls: [{name: subagent, input: {prompt: "FORK-TASK look around"}}]
    - text: "parent waits"
- name: notified
  match: "^<task-notification>"
  steps:
    - text: "parent done"
- name: fork
  match: "FORK-TASK"
  steps:
    - text: "fork done"
"#;

/// What the timing wrapper saw during one parent run.
#[derive(Debug, Default)]
struct Marks {
    /// The last event of the parent's first answer (the one with the fork call).
    parent_end: Option<Instant>,
    /// The fork's first `stream` call, and when it returned (response headers in).
    fork_called: Option<Instant>,
    fork_headers: Option<Instant>,
    /// The fork's first request, kept to time a cold encoding after the run.
    fork_request: Option<ModelRequest>,
    /// Encoding the fork's first request (wall, thread CPU), and its size.
    fork_encode: Option<(Duration, Duration, usize)>,
}

/// The parent's model (our Anthropic client) with timestamps; the fork inherits it.
struct Timed {
    inner: Arc<dyn Model>,
    marks: Arc<Mutex<Marks>>,
}

fn last_text(request: &ModelRequest) -> String {
    request
        .messages
        .last()
        .map(Message::text)
        .unwrap_or_default()
}

#[async_trait]
impl Model for Timed {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> subagent_model::Result<ModelStream> {
        let last = last_text(&request);
        let lock = || self.marks.lock().unwrap_or_else(PoisonError::into_inner);
        if last.contains("FORK-TASK") && lock().fork_called.is_none() {
            lock().fork_called = Some(Instant::now());
            let encoding = Instant::now();
            let cpu = thread_cpu();
            let body = subagent_model::anthropic::Anthropic::request_body(&request)?;
            let encode = (encoding.elapsed(), thread_cpu() - cpu, body.len());
            let stream = self.inner.stream(request.clone(), cancel).await;
            let mut marks = lock();
            marks.fork_encode = Some(encode);
            marks.fork_headers = Some(Instant::now());
            marks.fork_request = Some(request);
            return stream;
        }
        let first_parent_call = last == "PARENT-TASK";
        let stream = self.inner.stream(request, cancel).await?;
        if !first_parent_call {
            return Ok(stream);
        }
        let marks = Arc::clone(&self.marks);
        Ok(Box::pin(stream.inspect(move |_| {
            marks
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .parent_end = Some(Instant::now());
        })))
    }
}

/// A fake model server on a runtime of its own (one worker): a provider is another process.
struct HttpServer {
    server: FakeServer,
    _runtime: tokio::runtime::Runtime,
}

fn http_server() -> HttpServer {
    let runtime = bench::runtime(1);
    let server = runtime
        .block_on(FakeServer::from_yaml(HTTP_SCENARIOS))
        .unwrap();
    HttpServer {
        server,
        _runtime: runtime,
    }
}

subagent_test_support::delegating_parent!();

/// A parent as a preset builds it: built-in tools and a delegation row whose calls fork.
fn parent_config(model: &Arc<dyn Model>, dir: &std::path::Path) -> AgentConfig {
    let registry = bench::registry_of(ForkProvider::new("fork", ForkConfig::default(), None));
    let row = DelegationToolConfig::new("fork");
    let agents = Arc::new(StaticAgents::default());
    delegating_parent(
        model,
        dir,
        &Arc::new(registry),
        row,
        agents,
        "You are the parent.",
    )
}

/// A parent history of exactly `messages` messages (user / assistant turns).
fn history(messages: usize) -> EventLog {
    let mut log = EventLog::new();
    for i in 0..messages / 2 {
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
    log
}

/// The calling thread's CPU time.
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// One timed parent run: (dispatch, encode (wall, CPU), cold encode, to headers, body bytes).
struct Sample {
    dispatch: Duration,
    encode: Duration,
    encode_cpu: Duration,
    cold: Duration,
    to_headers: Duration,
    body_bytes: usize,
}

async fn fork_through_parent(config: &AgentConfig, marks: &Mutex<Marks>, log: &EventLog) -> Sample {
    *marks.lock().unwrap() = Marks::default();
    let request = StartRequest::builder("PARENT-TASK")
        .cwd(config.roots.cwd())
        .build();
    let seed = Seed {
        log: log.clone(),
        messages: Some(Messages::from(log.messages())),
        prompt: Message::user("PARENT-TASK"),
    };
    let outcome = Agent::new(config.clone())
        .unwrap()
        .start("runtime", &request, seed)
        .outcome()
        .await;
    assert_answered(&outcome, "parent done");
    let marks = std::mem::take(&mut *marks.lock().unwrap());
    let fork_request = marks.fork_request.unwrap();
    assert!(fork_request.messages.len() > log.messages().len());
    let (encode, encode_cpu, body_bytes) = marks.fork_encode.unwrap();
    let mut cold_request = fork_request.clone();
    cold_request.messages = fork_request.messages.to_vec().into();
    let encoding = Instant::now();
    let body = subagent_model::anthropic::Anthropic::request_body(&cold_request).unwrap();
    let cold = encoding.elapsed();
    assert_eq!(body.len(), body_bytes);
    let called = marks.fork_called.unwrap();
    Sample {
        dispatch: called.duration_since(marks.parent_end.unwrap()),
        encode,
        encode_cpu,
        cold,
        to_headers: marks.fork_headers.unwrap().duration_since(called),
        body_bytes,
    }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The fork's first request through a parent over HTTP, 10 vs 10,000 messages alternating.
fn printed_part(rounds: usize) {
    let server = http_server();
    let mut model_config =
        ModelConfig::new(ModelKind::Anthropic, "fake-model").with_base_url(server.server.url());
    model_config.retry.max_retries = 0;
    let client = subagent_model::build_with_env(&model_config, |_| Some("bench-key".into()));
    let marks = Arc::new(Mutex::new(Marks::default()));
    let model: Arc<dyn Model> = Arc::new(Timed {
        inner: client.unwrap(),
        marks: Arc::clone(&marks),
    });
    let dir = tempfile::tempdir().unwrap();
    let config = parent_config(&model, dir.path());
    let logs = HISTORY.map(history);
    let rt = bench::runtime(2);
    let warmup = rounds / 10 + 1;
    let mut samples: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
    rt.block_on(async {
        for round in 0..warmup + rounds {
            for side in [round % 2, (round + 1) % 2] {
                let sample = fork_through_parent(&config, &marks, &logs[side]).await;
                if round >= warmup {
                    samples[side].push(sample);
                }
            }
        }
    });
    let client_side = |s: &Sample| ms(s.dispatch + s.encode);
    println!(
        "The fork's first request through a parent over HTTP (Anthropic), {rounds} pairs, medians:"
    );
    println!(
        "  {:>8}  {:>10}  {:>9}  {:>9}  {:>10}  {:>12}  {:>11}  {:>9}",
        "history", "body", "dispatch", "encode", "encode cpu", "client-side", "to headers", "cold"
    );
    for (n, side) in HISTORY.iter().zip(&samples) {
        println!(
            "  {n:>8}  {:>7} KB  {:>6.3} ms  {:>6.3} ms  {:>7.3} ms  {:>9.3} ms  {:>8.3} ms  {:>6.3} ms",
            side[0].body_bytes / 1024,
            median(side.iter().map(|s| ms(s.dispatch)).collect()),
            median(side.iter().map(|s| ms(s.encode)).collect()),
            median(side.iter().map(|s| ms(s.encode_cpu)).collect()),
            median(side.iter().map(client_side).collect()),
            median(side.iter().map(|s| ms(s.to_headers)).collect()),
            median(side.iter().map(|s| ms(s.cold)).collect()),
        );
    }
    let mut cpu: Vec<f64> = samples[1].iter().map(|s| ms(s.encode_cpu)).collect();
    cpu.sort_by(f64::total_cmp);
    let at = |q: f64| cpu[((cpu.len() - 1) as f64 * q).round() as usize];
    println!(
        "  encode cpu at {} messages: p10 {:.3} ms, p50 {:.3} ms, p90 {:.3} ms",
        HISTORY[1],
        at(0.1),
        at(0.5),
        at(0.9)
    );
    let growth: Vec<f64> = samples[1]
        .iter()
        .zip(&samples[0])
        .map(|(big, small)| client_side(big) - client_side(small))
        .collect();
    println!(
        "  growth 10 → 10,000 messages, client-side, median of paired differences: {:+.3} ms",
        median(growth)
    );
    println!();
}

const SCENARIOS: &str = r#"
- name: fork-child
  match: "FORK-BENCH"
  steps:
    - text: "fork done"
"#;

fn snapshot(messages: usize, dir: &std::path::Path) -> ParentSnapshot {
    let model = bench::scripted(SCENARIOS);
    // The history, then the assistant's call that forks.
    let mut log = history(messages.saturating_sub(1));
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
        effort: None,
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
            sessions: None,
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
            asker: None,
        })
        .background(true)
        .build()
}

/// Component (bypasses the parent): building the fork's seed from a snapshot.
#[divan::bench(args = [10, 10_000])]
fn seed(bencher: divan::Bencher, messages: usize) {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = snapshot(messages, dir.path());
    bencher.bench_local(|| seed_from_snapshot(&snapshot, fork_task_text("FORK-BENCH", None)));
}

/// Component (bypasses the parent): the fork provider's `start` on a snapshot.
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

/// The allocator the `subagent` binary uses (`crates/cli/src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--list" || a == "--test") {
        printed_part(40);
    }
    divan::main();
}
