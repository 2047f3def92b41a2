//! Our overhead over the raw CLI: the same trivial one-turn run against the same fake model
//! server (Anthropic protocol on 127.0.0.1), once as the real pinned `claude` spawned directly
//! and once through `ClaudeCodeProvider` (argv building, subagent-process with its process
//! group, parent-death signal and guard, the stream-json parsing, the outcome).
//!
//! Both runs get exactly the same command: the provider's own `Invocation` (`build_command`,
//! as the provider calls it: same argv, same working directory, the prompt written to stdin
//! then closed) and the environment the provider's `ProcessSpec` gives its child (our
//! environment scrubbed, the configured variables on top). Both reuse one HOME, as a long-lived parent would. Pairs alternate which side runs
//! first; the figure is the **median of the paired differences** (provider − raw), which a load
//! change between pairs does not skew.
//!
//! `cargo bench -p subagent-claude-code --features e2e --bench overhead [-- PAIRS]` (default 30;
//! needs the CLI from `cargo xtask install-clis`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

use subagent_claude_code::{ClaudeCodeConfig, ClaudeCodeProvider};
use subagent_core::{StartRequest, SubagentProvider};
use subagent_process::ProcessSpec;
use subagent_test_support::bench;
use subagent_test_support::runs::assert_answered;

fn main() {
    let pairs = bench::pairs(30);
    let binary = bench::installed_cli(".bin/claude");
    let (_server_runtime, server) = bench::fake_server_apart();
    let runtime = bench::runtime(2);
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
    let provider = ClaudeCodeProvider::new(
        "claude",
        ClaudeCodeConfig {
            binary,
            env: env.iter().cloned().collect(),
            ..ClaudeCodeConfig::default()
        },
    )
    .unwrap();
    let request = || StartRequest::new("say hi", &project);

    // The raw run: the provider's invocation, spawned by hand.
    let invocation = subagent_claude_code::build_command(
        provider.config(),
        &request(),
        "claude",
        rustix::process::geteuid().is_root(),
        std::env::var("IS_SANDBOX").ok().as_deref(),
    )
    .unwrap();
    let mut spec =
        ProcessSpec::new(&invocation.program, &invocation.cwd).envs(invocation.env.iter().cloned());
    for name in &invocation.pass_env {
        spec = spec.pass_env(name);
    }
    let child_env = spec.child_env();
    let raw = || {
        let started = Instant::now();
        let mut child = Command::new(&invocation.program)
            .args(&invocation.args)
            .current_dir(&invocation.cwd)
            .env_clear()
            .envs(child_env.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(invocation.prompt.as_bytes()).unwrap();
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        let elapsed = started.elapsed();
        assert!(output.status.success(), "raw claude failed: {output:?}");
        assert!(String::from_utf8_lossy(&output.stdout).contains("hi from fake"));
        elapsed
    };
    let ours = || {
        runtime.block_on(async {
            let started = Instant::now();
            let run = provider.start(request()).await.unwrap();
            let outcome = run.outcome().await;
            let elapsed = started.elapsed();
            assert_answered(&outcome, "hi from fake");
            elapsed
        })
    };

    // `measure` warms both up first: the first run of a fresh HOME writes its config files.
    let paired = subagent_test_support::paired::measure(pairs, raw, ours);
    let title = format!("claude one-turn run, {pairs} pairs (order alternating)");
    paired.print(&title, "raw claude", "provider");
}
