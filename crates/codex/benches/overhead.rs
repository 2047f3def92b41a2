//! Our overhead over the raw CLI: the same trivial one-turn run against the same fake model
//! server, once as `codex exec` spawned directly (stdin /dev/null, output read to the end) and
//! once through `CodexProvider` (argv building, subagent-process, JSONL parsing, outcome).
//! Runs alternate so drift hits both alike; medians are reported.
//!
//! `cargo bench -p subagent-codex --features e2e --bench overhead [-- RUNS]` (needs the CLI from
//! `cargo xtask install-clis`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use subagent_codex::{CodexConfig, CodexProvider, ModelProviderConfig};
use subagent_core::{StartRequest, StopReason, SubagentProvider};
use subagent_test_support::FakeServer;

fn codex_binary() -> PathBuf {
    let clis = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/clis/node_modules");
    let native = clis.join("@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
    assert!(
        native.is_file(),
        "needs the native codex at {} (cargo xtask install-clis)",
        native.display()
    );
    native
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime
        .block_on(FakeServer::from_yaml(
            "- match: \".*\"\n  steps:\n    - text: \"hi from fake\"\n",
        ))
        .unwrap();
    let root = tempfile::tempdir().unwrap();
    for dir in ["home", "codex-home", "tmp", "project"] {
        std::fs::create_dir(root.path().join(dir)).unwrap();
    }
    let dir = |name: &str| root.path().join(name);
    let env: Vec<(String, String)> = vec![
        ("HOME".into(), dir("home").display().to_string()),
        ("TMPDIR".into(), dir("tmp").display().to_string()),
        ("OPENAI_API_KEY".into(), "dummy".into()),
        ("CODEX_HOME".into(), dir("codex-home").display().to_string()),
    ];
    let config = CodexConfig {
        binary: codex_binary(),
        model: Some("gpt-5.5".into()),
        model_provider: Some(ModelProviderConfig {
            id: "fake".into(),
            base_url: format!("{}/v1", server.url()),
            env_key: "OPENAI_API_KEY".into(),
            request_max_retries: 0,
            stream_max_retries: 0,
        }),
        codex_home: Some(dir("codex-home")),
        env: env.iter().cloned().collect(),
        ..CodexConfig::default()
    };
    let provider = CodexProvider::new("codex", config).unwrap();
    let request = || StartRequest::new("say hi", dir("project"));
    let command = provider.command_for(&request());

    // The provider's child gets our environment minus the scrubbed names; so does the raw run,
    // or a variable like RUST_BACKTRACE (which makes codex capture backtraces) would skew it.
    let inherited: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
        .filter(|(name, _)| !subagent_process::is_scrubbed(name))
        .collect();
    let raw = || {
        let started = Instant::now();
        let output = Command::new(&command.program)
            .args(&command.args)
            .current_dir(&command.cwd)
            .env_clear()
            .envs(inherited.iter().cloned())
            .envs(env.iter().cloned())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(output.status.success(), "raw codex failed: {output:?}");
        started.elapsed()
    };
    let ours = || {
        runtime.block_on(async {
            let started = Instant::now();
            let run = provider.start(request()).await.unwrap();
            let outcome = run.outcome().await;
            assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
            started.elapsed()
        })
    };
    // Warm-up: the first codex run of a fresh CODEX_HOME writes its state files.
    raw();
    ours();
    let mut raw_samples = Vec::with_capacity(runs);
    let mut our_samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        raw_samples.push(raw());
        our_samples.push(ours());
    }
    let (raw_median, our_median) = (median(raw_samples), median(our_samples));
    let overhead = ms(our_median) - ms(raw_median);
    println!("codex overhead, {runs} alternating runs, medians");
    println!("  raw codex exec --json  {:8.1} ms", ms(raw_median));
    println!("  CodexProvider          {:8.1} ms", ms(our_median));
    println!(
        "  overhead               {overhead:8.1} ms ({:+.1}%)",
        overhead / ms(raw_median) * 100.0
    );
}
