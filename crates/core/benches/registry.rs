//! `Registry::start` with a no-op provider (goal: ≤ 2 µs per start).

use std::sync::Arc;

use async_trait::async_trait;
use subagent_core::registry::Registry;
use subagent_core::{Capabilities, Outcome, Result, Run, StartRequest, SubagentProvider};

fn main() {
    divan::main();
}

struct Noop;

#[async_trait]
impl SubagentProvider for Noop {
    fn name(&self) -> &str {
        "noop"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ALL
    }

    async fn start(&self, request: StartRequest) -> Result<Run> {
        let (sender, run) = Run::channel("noop", &request);
        sender.finish(Outcome::completed(""));
        Ok(run)
    }
}

fn registry() -> Registry {
    let registry = Registry::new();
    for name in ["spawn", "fork", "claude-code", "codex"] {
        struct Named(&'static str);
        #[async_trait]
        impl SubagentProvider for Named {
            fn name(&self) -> &str {
                self.0
            }
            fn capabilities(&self) -> Capabilities {
                Capabilities::NONE
            }
            async fn start(&self, _: StartRequest) -> Result<Run> {
                unreachable!()
            }
        }
        let _ = registry.register(Arc::new(Named(name)));
    }
    let _ = registry.register(Arc::new(Noop));
    registry
}

/// Start through every gate and drop the run.
#[divan::bench]
fn start_noop(bencher: divan::Bencher) {
    let registry = registry();
    let request = StartRequest::builder("benchmark the seam")
        .cwd("/tmp")
        .description("bench")
        .max_turns(3)
        .build();
    bencher
        .with_inputs(|| request.clone())
        .bench_local_values(|request| futures::executor::block_on(registry.start("noop", request)));
}

/// Start and await the outcome.
#[divan::bench]
fn start_noop_and_await_outcome(bencher: divan::Bencher) {
    let registry = registry();
    let request = StartRequest::builder("benchmark the seam")
        .cwd("/tmp")
        .build();
    bencher
        .with_inputs(|| request.clone())
        .bench_local_values(|request| {
            futures::executor::block_on(async {
                registry
                    .start("noop", request)
                    .await
                    .map(|run| run.outcome())
            })
        });
}
