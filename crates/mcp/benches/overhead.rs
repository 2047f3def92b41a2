//! What a call through `subagent mcp` adds over `subagent delegate` for the same provider
//! (issue 15, part 3: goal ≤ 1 ms on an in-process child).
//!
//! Both sides run the same spawn child on the offline scripted model (one model call, no
//! network), in a server that is already up, as a long-lived MCP server is:
//!
//! - `delegate`: what `subagent delegate` does once its registry is built: a request through the
//!   `Registry`, the child's events read to their end, the outcome.
//! - `mcp`: an MCP client on the official SDK (rmcp's client side, which sends a progress
//!   token with every request, so the server also sends one progress notification per event)
//!   calls the tool through our `McpServer` over a Unix socket pair (the kernel's byte stream,
//!   as stdio pipes are), and reads the result.
//!
//! `cargo bench -p subagent-mcp --bench overhead` runs both as divan benchmarks;
//! `cargo bench -p subagent-mcp --bench overhead -- paired [PAIRS]` (default 200) measures them
//! in interleaved pairs, alternating which runs first, and prints the median of the paired
//! differences (mcp − delegate), which a change of load during the sitting does not skew.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use subagent_core::agents::StaticAgents;
use subagent_core::registry::Registry;
use subagent_core::{StartRequest, StopReason};
use subagent_mcp::{McpConfig, McpServer};
use subagent_preset::ToolRow;
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::bench;

struct Setup {
    runtime: tokio::runtime::Runtime,
    registry: Arc<Registry>,
    client: RunningService<RoleClient, ()>,
    dir: tempfile::TempDir,
}

fn setup() -> Setup {
    let runtime = bench::runtime(2);
    let model = bench::scripted(bench::HELLO);
    let spawn = SpawnProvider::new("spawn", model, SpawnConfig::default());
    let registry = bench::registry_of(spawn);
    let registry = Arc::new(registry);
    let dir = tempfile::tempdir().unwrap();
    // The row as a preset spells it: defaults but for the name and the provider.
    let row: ToolRow =
        serde_json::from_value(serde_json::json!({"name": "subagent", "provider": "spawn"}))
            .unwrap();
    let server = McpServer::new(
        Arc::clone(&registry),
        &[row],
        Arc::new(StaticAgents::default()),
        McpConfig::new(dir.path()),
    );
    let client = runtime.block_on(async {
        let (ours, theirs) = tokio::net::UnixStream::pair().unwrap();
        let (read, write) = ours.into_split();
        tokio::spawn(server.serve(read, write));
        ().serve(theirs).await.unwrap()
    });
    Setup {
        runtime,
        registry,
        client,
        dir,
    }
}

impl Setup {
    fn delegate(&self) -> Duration {
        let started = Instant::now();
        self.runtime.block_on(async {
            let request = StartRequest::new("HELLO", self.dir.path());
            let mut run = self.registry.start("spawn", request).await.unwrap();
            let mut events = run.take_events().unwrap();
            while events.next().await.is_some() {}
            assert_eq!(run.outcome().await.status, StopReason::Completed);
        });
        started.elapsed()
    }

    fn mcp(&self) -> Duration {
        let started = Instant::now();
        self.runtime.block_on(async {
            let mut params = CallToolRequestParams::new("subagent");
            params.arguments = serde_json::json!({"prompt": "HELLO"}).as_object().cloned();
            let result = self.client.call_tool(params).await.unwrap();
            assert_eq!(result.is_error, Some(false));
        });
        started.elapsed()
    }
}

#[divan::bench(sample_count = 200)]
fn delegate(bencher: divan::Bencher) {
    let setup = setup();
    bencher.bench_local(|| setup.delegate());
}

#[divan::bench(sample_count = 200)]
fn mcp(bencher: divan::Bencher) {
    let setup = setup();
    bencher.bench_local(|| setup.mcp());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "paired") {
        let pairs = args.iter().find_map(|a| a.parse().ok()).unwrap_or(200);
        let setup = setup();
        let paired =
            subagent_test_support::paired::measure(pairs, || setup.delegate(), || setup.mcp());
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        println!(
            "{pairs} pairs, load average {}",
            load.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        );
        for (name, q) in [
            ("delegate", paired.a),
            ("mcp", paired.b),
            ("mcp - delegate", paired.difference),
        ] {
            println!(
                "{name:>16}: median {:.3} ms (q1 {:.3}, q3 {:.3})",
                q.median, q.q1, q.q3
            );
        }
        return;
    }
    divan::main();
}
