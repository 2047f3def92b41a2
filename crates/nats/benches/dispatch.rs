//! What a run through NATS costs over a local one (`cargo bench -p subagent-nats --bench
//! dispatch`), against the pinned `nats-server` on loopback (file store): an instant provider
//! (one text event, then completed) started directly through the `Registry` (`local`) and
//! through a `nats` row whose worker, in this process, runs the same provider (`nats`: publish
//! the job, a worker pulls it, its events and outcome stored and read back). The difference of
//! the medians is the latency the queue adds (issue 16's goal: at most 5 ms). `thousand_jobs`:
//! 1,000 such jobs submitted at once to three workers of four slots each, until every outcome
//! is in (throughput). `cancel`: from cancelling a run the worker holds to its outcome.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use async_trait::async_trait;
use subagent_core::registry::Registry;
use subagent_core::{
    Capabilities, Outcome, Run, RunEvent, StartRequest, StopReason, SubagentProvider,
};
use subagent_nats::testing::NatsServer;
use subagent_nats::{Auth, NatsConfig, NatsProvider, Worker, WorkerConfig};

/// Emits one text, then completes at once (`INSTANT`) or waits for its cancel (`HOLD`).
struct Scripted {
    name: &'static str,
    holds: bool,
}

/// Answers at once: one text event, then completed.
const INSTANT: Scripted = Scripted {
    name: "instant",
    holds: false,
};

/// Emits one text, then waits for its cancel.
const HOLD: Scripted = Scripted {
    name: "hold",
    holds: true,
};

#[async_trait]
impl SubagentProvider for Scripted {
    fn name(&self) -> &str {
        self.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }

    async fn start(&self, request: StartRequest) -> subagent_core::Result<Run> {
        let (sender, run) = Run::channel(self.name, &request);
        let text = if self.holds { "holding" } else { "Hi there." };
        sender.emit(RunEvent::Text {
            text: text.to_owned(),
            parent_tool_use_id: None,
        });
        if self.holds {
            tokio::spawn(async move {
                sender.cancel_token().cancelled().await;
                sender.finish(Outcome::cancelled());
            });
        } else {
            sender.finish(Outcome::completed(text));
        }
        Ok(run)
    }
}

struct Setup {
    runtime: tokio::runtime::Runtime,
    local: Registry,
    /// The `nats` row (`None` without workers: nothing announced it).
    remote: Option<Arc<Registry>>,
    _server: NatsServer,
}

/// `workers` workers serving `instant` (and `hold` when `hold`), the rows behind `remote` (and
/// `held`).
fn setup(workers: usize, hold: bool) -> Setup {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = NatsServer::start().unwrap();
    let local = Registry::new();
    local.register(Arc::new(INSTANT)).unwrap();
    let url = server.url();
    let remote = (workers > 0).then(|| {
        runtime.block_on(async {
            for _ in 0..workers {
                let registry = Registry::new();
                registry.register(Arc::new(INSTANT)).unwrap();
                if hold {
                    registry.register(Arc::new(HOLD)).unwrap();
                }
                let mut config = WorkerConfig::new(&url, std::env::temp_dir());
                config.concurrency = 4;
                let worker = Worker::connect(Arc::new(registry), config).await.unwrap();
                tokio::spawn(worker.run(std::future::pending()));
            }
            let provider =
                NatsProvider::connect("remote", NatsConfig::new(&url, "instant"), Auth::None)
                    .await
                    .unwrap();
            let registry = Registry::new();
            registry.register(Arc::new(provider)).unwrap();
            if hold {
                let held = NatsProvider::connect("held", NatsConfig::new(&url, "hold"), Auth::None)
                    .await
                    .unwrap();
                registry.register(Arc::new(held)).unwrap();
            }
            Arc::new(registry)
        })
    });
    Setup {
        runtime,
        local,
        remote,
        _server: server,
    }
}

#[divan::bench(sample_count = 200)]
fn local(bencher: divan::Bencher) {
    let setup = setup(0, false);
    bencher.bench_local(|| {
        setup.runtime.block_on(async {
            let request = StartRequest::new("HELLO", std::env::temp_dir());
            let run = setup.local.start("instant", request).await.unwrap();
            assert_eq!(run.outcome().await.status, StopReason::Completed);
        });
    });
}

#[divan::bench(sample_count = 200)]
fn nats(bencher: divan::Bencher) {
    let setup = setup(1, false);
    let remote = setup.remote.clone().unwrap();
    bencher.bench_local(|| {
        setup.runtime.block_on(async {
            let request = StartRequest::new("HELLO", std::env::temp_dir());
            let run = remote.start("remote", request).await.unwrap();
            assert_eq!(run.outcome().await.status, StopReason::Completed);
        });
    });
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn thousand_jobs(bencher: divan::Bencher) {
    let setup = setup(3, false);
    let remote = setup.remote.clone().unwrap();
    bencher.bench_local(|| {
        setup.runtime.block_on(async {
            let mut outcomes = Vec::with_capacity(1000);
            for n in 0..1000 {
                let request = StartRequest::new("HELLO", std::env::temp_dir());
                let run = remote
                    .start("remote", request)
                    .await
                    .unwrap_or_else(|e| panic!("run {n}: {e}"));
                outcomes.push(tokio::spawn(run.outcome()));
            }
            for outcome in outcomes {
                assert_eq!(outcome.await.unwrap().status, StopReason::Completed);
            }
        });
    });
}

/// From a cancel of a run the worker holds (its first event is in) to its `cancelled` outcome
/// (issue 16's goal: within 1 s).
#[divan::bench(sample_count = 100)]
fn cancel(bencher: divan::Bencher) {
    use futures::StreamExt;

    let setup = setup(1, true);
    let remote = setup.remote.clone().unwrap();
    bencher
        .with_inputs(|| {
            setup.runtime.block_on(async {
                let request = StartRequest::new("HOLD", std::env::temp_dir());
                let mut run = remote.start("held", request).await.unwrap();
                let mut events = run.take_events().unwrap();
                while let Some(event) = events.next().await {
                    if matches!(event, RunEvent::Text { .. }) {
                        break;
                    }
                }
                run
            })
        })
        .bench_local_values(|run| {
            setup.runtime.block_on(async {
                run.cancel();
                assert_eq!(run.outcome().await.status, StopReason::Cancelled);
            });
        });
}

fn main() {
    divan::main();
}
