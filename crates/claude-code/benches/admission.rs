//! Admission on the path a user takes: fifty claude children started at once, through the
//! provider, against the fake model server (its own runtime) — all of them launched together
//! (`max_starting: 50`) and admitted a few at a time (`max_starting` unset: the CPU count). The
//! figure is the time from the fifty starts until the fake server has seen fifty model
//! requests, i.e. until every child has made its first; then all are let finish. The two ways
//! alternate (which goes first swaps each pair) so a change of load hits both.
//!
//! `cargo bench -p subagent-claude-code --features e2e --bench admission [-- PAIRS]` (default 2;
//! needs the CLI from `cargo xtask install-clis`; fifty claude processes hold about 6 GB).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use subagent_claude_code::{ClaudeCodeConfig, ClaudeCodeProvider};
use subagent_core::{StartRequest, SubagentProvider};
use subagent_test_support::bench;
use subagent_test_support::runs::{assert_answered, finish_within};

const CHILDREN: usize = 50;

fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let pairs = bench::pairs(2);
    let binary = bench::installed_cli(".bin/claude");
    let (_server_runtime, server) = bench::fake_server_apart();
    let runtime = bench::runtime(2);
    let root = tempfile::tempdir().unwrap();
    for dir in ["home", "home/.claude", "tmp", "project"] {
        std::fs::create_dir(root.path().join(dir)).unwrap();
    }
    let dir = |name: &str| root.path().join(name).display().to_string();
    let config = |max_starting| ClaudeCodeConfig {
        binary: binary.clone(),
        env: [
            ("HOME".to_owned(), dir("home")),
            ("CLAUDE_CONFIG_DIR".to_owned(), dir("home/.claude")),
            ("CLAUDE_CODE_TMPDIR".to_owned(), dir("tmp")),
            ("ANTHROPIC_BASE_URL".to_owned(), server.url()),
            ("ANTHROPIC_API_KEY".to_owned(), "dummy".to_owned()),
        ]
        .into(),
        max_starting,
        ..ClaudeCodeConfig::default()
    };
    let all_at_once = ClaudeCodeProvider::new("claude", config(Some(CHILDREN))).unwrap();
    let admitted = ClaudeCodeProvider::new("claude", config(None)).unwrap();
    let project = root.path().join("project");
    let fan_out = |provider: &ClaudeCodeProvider| {
        runtime.block_on(async {
            let before = server.requests().len();
            let started = Instant::now();
            let mut runs = Vec::new();
            for _ in 0..CHILDREN {
                runs.push(
                    provider
                        .start(StartRequest::new("say hi", &project))
                        .await
                        .unwrap(),
                );
            }
            server.wait_requests(before + CHILDREN).await;
            let all_asked = started.elapsed();
            for run in runs {
                let (_, outcome) = finish_within(run, Duration::from_secs(600)).await;
                assert_answered(&outcome, "hi from fake");
            }
            all_asked
        })
    };
    println!(
        "{CHILDREN} claude children started at once, until all made their first model request ({} CPUs):",
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
    );
    for pair in 0..pairs {
        let mut timed = [Duration::ZERO; 2];
        for side in [pair % 2, (pair + 1) % 2] {
            timed[side] = fan_out([&all_at_once, &admitted][side]);
        }
        println!(
            "  pair {pair}: all at once {:.1} s, admitted {:.1} s ({:.2}x)",
            timed[0].as_secs_f64(),
            timed[1].as_secs_f64(),
            timed[0].as_secs_f64() / timed[1].as_secs_f64()
        );
    }
}
