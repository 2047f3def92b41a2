//! Our overhead over the raw CLI: the same trivial one-turn run against the same fake model
//! server, once as `claude -p … --output-format stream-json --verbose` spawned directly (stdin
//! /dev/null, output read to the end) and once through `ClaudeCodeProvider` (argv building,
//! subagent-process, prompt on stdin, stream-json parsing, outcome). Both reuse one HOME, as a
//! long-lived parent would. Runs alternate so drift hits both alike; medians are reported.
//!
//! `cargo bench -p subagent-claude-code --features e2e --bench overhead [-- RUNS]` (needs the CLI
//! from `cargo xtask install-clis`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use subagent_claude_code::{ClaudeCodeConfig, ClaudeCodeProvider};
use subagent_core::{StartRequest, StopReason, SubagentProvider};
use subagent_test_support::FakeServer;

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
    let binary =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/clis/node_modules/.bin/claude");
    assert!(
        binary.is_file(),
        "needs {} (cargo xtask install-clis)",
        binary.display()
    );
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
    for dir in ["home", "home/.claude", "tmp", "project"] {
        std::fs::create_dir(root.path().join(dir)).unwrap();
    }
    let dir = |name: &str| root.path().join(name).display().to_string();
    let env: Vec<(String, String)> = vec![
        ("HOME".into(), dir("home")),
        ("CLAUDE_CONFIG_DIR".into(), dir("home/.claude")),
        ("CLAUDE_CODE_TMPDIR".into(), dir("tmp")),
        ("ANTHROPIC_BASE_URL".into(), server.url()),
        ("ANTHROPIC_API_KEY".into(), "dummy".into()),
    ];
    let project = root.path().join("project");

    let raw = || {
        let started = Instant::now();
        let output = Command::new(&binary)
            .args([
                "-p",
                "say hi",
                "--output-format",
                "stream-json",
                "--verbose",
            ])
            .args(["--permission-mode", "dontAsk"])
            .current_dir(&project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(env.iter().cloned())
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .unwrap();
        let elapsed = started.elapsed();
        assert!(output.status.success());
        assert!(String::from_utf8_lossy(&output.stdout).contains("hi from fake"));
        elapsed
    };
    let provider = ClaudeCodeProvider::new(
        "claude",
        ClaudeCodeConfig {
            binary: binary.clone(),
            env: env.iter().cloned().collect(),
            ..ClaudeCodeConfig::default()
        },
    )
    .unwrap();
    let ours = || {
        runtime.block_on(async {
            let started = Instant::now();
            let run = provider
                .start(StartRequest::new("say hi", &project))
                .await
                .unwrap();
            let outcome = run.outcome().await;
            let elapsed = started.elapsed();
            assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
            assert_eq!(outcome.text, "hi from fake");
            elapsed
        })
    };

    // Warm-up: the first run of a fresh HOME writes its config files.
    raw();
    ours();
    let (mut raw_samples, mut our_samples) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        raw_samples.push(raw());
        our_samples.push(ours());
    }
    let (raw_median, our_median) = (median(raw_samples.clone()), median(our_samples.clone()));
    let overhead = ms(our_median) - ms(raw_median);
    println!("claude one-turn run, {runs} alternating runs each (median / min / max):");
    for (name, samples, median) in [
        ("raw claude", &raw_samples, raw_median),
        ("provider  ", &our_samples, our_median),
    ] {
        println!(
            "  {name}  {:7.1} ms  {:7.1} ms  {:7.1} ms",
            ms(median),
            ms(*samples.iter().min().unwrap()),
            ms(*samples.iter().max().unwrap()),
        );
    }
    println!(
        "  overhead    {overhead:+.1} ms ({:+.1}%)",
        overhead / ms(raw_median) * 100.0
    );
}
