//! Our overhead over the raw CLI: the same trivial one-turn run against the same fake model
//! server (Responses protocol on 127.0.0.1), once as the real pinned native `codex exec`
//! spawned directly and once through `CodexProvider` (argv building, subagent-process with its
//! process group, parent-death signal and guard, JSONL parsing, the outcome).
//!
//! Both runs get exactly the same command: the provider's own `CodexCommand` (same argv with
//! the prompt in it, same working directory, stdin closed) and the environment the provider's
//! `ProcessSpec` gives its child (our environment scrubbed, the configured variables on top).
//! Pairs alternate which side runs first; the figure is the **median of the paired
//! differences** (provider − raw), which a load change between pairs does not skew.
//!
//! `cargo bench -p subagent-codex --features e2e --bench overhead [-- PAIRS]` (default 30; needs
//! the CLI from `cargo xtask install-clis`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::Instant;

use subagent_codex::{CodexConfig, CodexProvider, ModelProviderConfig};
use subagent_core::{StartRequest, StopReason, SubagentProvider};
use subagent_process::ProcessSpec;
use subagent_test_support::bench;

fn main() {
    let runs = bench::pairs(30);
    let (_server_runtime, server) = bench::fake_server_apart();
    let runtime = bench::runtime(2);
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
        binary: bench::installed_cli(
            "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
        ),
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

    // The provider's child gets our environment scrubbed plus its variables; so does the raw
    // run, or a variable like RUST_BACKTRACE (which makes codex capture backtraces) would skew it.
    let mut spec = ProcessSpec::new(&command.program, &command.cwd);
    for name in &command.pass_env {
        spec = spec.pass_env(name);
    }
    let child_env = spec.envs(command.env.iter().cloned()).child_env();
    let raw = || {
        let started = Instant::now();
        let output = Command::new(&command.program)
            .args(&command.args)
            .current_dir(&command.cwd)
            .env_clear()
            .envs(child_env.iter().cloned())
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
    // `measure` warms both up first: the first codex run of a fresh CODEX_HOME writes its state
    // files.
    let paired = subagent_test_support::paired::measure(runs, raw, ours);
    let title = format!("codex one-turn run, {runs} pairs (order alternating)");
    paired.print(&title, "raw codex exec --json", "CodexProvider");
}
