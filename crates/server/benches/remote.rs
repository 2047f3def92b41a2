//! What a remote run costs over a local one (`cargo bench -p subagent-server --bench remote`):
//! the same spawn child on the offline scripted model (one model call, no network to a model),
//! started directly through the `Registry` (`local`) and through `subagent serve`'s server over
//! loopback HTTP, a blocking `SendMessage` from a reqwest client with a kept-alive connection
//! (`remote`), and through the `a2a` provider in front of that server (`provider`: what a preset
//! row `kind: a2a` pays, a streaming message and its events). The difference of the medians is
//! the latency the A2A layer adds (issue 14's goal: at most 2 ms).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use subagent_core::registry::Registry;
use subagent_core::{StartRequest, StopReason};
use subagent_server::{Server, ServerConfig, Skill, Token};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::bench;

struct Setup {
    runtime: tokio::runtime::Runtime,
    registry: Arc<Registry>,
    client: reqwest::Client,
    url: String,
    base: String,
    dir: tempfile::TempDir,
}

fn setup() -> Setup {
    let runtime = bench::runtime(2);
    let model = bench::scripted(bench::HELLO);
    let spawn = SpawnProvider::new("spawn", model, SpawnConfig::default());
    let registry = Arc::new(bench::registry_of(spawn));
    let dir = tempfile::tempdir().unwrap();
    let skills = vec![Skill {
        id: "subagent".to_owned(),
        description: "bench".to_owned(),
        provider: "spawn".to_owned(),
        agent: None,
    }];
    let mut config = ServerConfig::new(dir.path());
    config.token = Token::new("bench-token");
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let url = format!("{base}/a2a");
    let server = Server::new(Arc::clone(&registry), skills, config);
    runtime.spawn(server.serve(listener, std::future::pending()));
    Setup {
        runtime,
        registry,
        client: reqwest::Client::new(),
        url,
        base,
        dir,
    }
}

#[divan::bench(sample_count = 200)]
fn local(bencher: divan::Bencher) {
    let setup = setup();
    bencher.bench_local(|| {
        setup.runtime.block_on(async {
            let request = StartRequest::new("HELLO", setup.dir.path());
            let run = setup.registry.start("spawn", request).await.unwrap();
            assert_eq!(run.outcome().await.status, StopReason::Completed);
        });
    });
}

#[divan::bench(sample_count = 200)]
fn remote(bencher: divan::Bencher) {
    let setup = setup();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
        {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "HELLO"}]}}});
    bencher.bench_local(|| {
        setup.runtime.block_on(async {
            let response: serde_json::Value = setup
                .client
                .post(&setup.url)
                .header("A2A-Version", "1.0")
                .bearer_auth("bench-token")
                .json(&body)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(
                response["result"]["task"]["status"]["state"],
                "TASK_STATE_COMPLETED"
            );
        });
    });
}

#[divan::bench(sample_count = 200)]
fn provider(bencher: divan::Bencher) {
    let setup = setup();
    let remote = setup.runtime.block_on(async {
        subagent_a2a::A2aProvider::connect(
            "remote",
            subagent_a2a::A2aConfig::new(&setup.base),
            subagent_a2a::Token::new("bench-token"),
        )
        .await
        .unwrap()
    });
    let local = Registry::new();
    local.register(Arc::new(remote)).unwrap();
    bencher.bench_local(|| {
        setup.runtime.block_on(async {
            let request = StartRequest::new("HELLO", setup.dir.path());
            let run = local.start("remote", request).await.unwrap();
            assert_eq!(run.outcome().await.status, StopReason::Completed);
        });
    });
}

fn main() {
    divan::main();
}
