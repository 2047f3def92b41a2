//! Our overhead over driving the adapter directly: the same trivial one-turn run against the
//! same fake model server (OpenAI Responses on 127.0.0.1), once through a bare ACP client —
//! newline-delimited JSON-RPC written by hand to the pinned `codex-acp` spawned with `std`'s
//! `Command` (`initialize`, `session/new`, `session/prompt`, `session/close`, then SIGTERM and a
//! wait for the exit, as the provider ends it: neither adapter exits on its own) — and once
//! through `AcpProvider` (subagent-process with its process group and parent-death signal, the
//! official SDK's connection, the events, the outcome).
//!
//! Both runs get the same program, argv, working directory and environment (the one the
//! provider's `ProcessSpec` gives its child) and reuse one CODEX_HOME, as a long-lived parent
//! would. Pairs alternate which side runs first; the figure is the **median of the paired
//! differences** (provider − raw), which a load change between pairs does not skew. Each run is
//! also split at its first text (start → first text: spawning, `initialize`, `session/new`, the
//! agent's own start and the model call; first text → end: the rest of the turn, the close, the
//! stop and the outcome), and the paired differences of each part are printed, so a difference
//! can be placed.
//!
//! With `sdk`, the baseline is instead what a program without `subagents` would write with the
//! official SDK itself: `codex-acp` spawned by `tokio::process`, the SDK's client connection over
//! its pipes on the same runtime, the same requests and the same end (SIGTERM, wait). That
//! baseline has the SDK's own costs (its framing and parsing, its tasks) in it too, so the
//! difference is what the provider adds over driving the adapter with the official SDK: the
//! process owner, the events, the outcome.
//!
//! `cargo bench -p subagent-acp --features e2e --bench overhead [-- PAIRS] [guarded] [sdk]`
//! (default 30; needs the adapters from `cargo xtask install-clis`). The provider's child runs
//! unguarded, as a library host's does; with `guarded`, under the `subagent-guardian` binary that
//! the `subagent` CLI uses for every child (`cargo build --release -p subagent-cli --bin
//! subagent-guardian` first).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, CloseSessionRequest, ContentBlock, FileSystemCapabilities,
    InitializeRequest, NewSessionRequest, PromptRequest, SessionNotification, SessionUpdate,
    StopReason as AcpStopReason, TextContent,
};
use agent_client_protocol::{Client, Lines};
use serde_json::{Value, json};
use subagent_acp::{AcpConfig, AcpProvider};
use subagent_core::{StartRequest, SubagentProvider};
use subagent_process::ProcessSpec;
use subagent_test_support::bench;
use subagent_test_support::runs::assert_answered;

/// The allocator the `subagent` binary uses (`crates/cli/src/main.rs`), as in the other benches
/// of the user's path: both sides of each pair run in this process.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One request and its response; the texts of the agent's message chunks on the way.
fn call(
    stdin: &mut impl Write,
    stdout: &mut impl BufRead,
    id: u64,
    method: &str,
    params: Value,
    texts: &mut String,
    first_text: &mut Option<Instant>,
) -> Value {
    let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    writeln!(stdin, "{line}").unwrap();
    stdin.flush().unwrap();
    let mut buffer = String::new();
    loop {
        buffer.clear();
        assert!(
            stdout.read_line(&mut buffer).unwrap() > 0,
            "the agent closed stdout"
        );
        let message: Value = serde_json::from_str(&buffer).unwrap();
        if message["id"] == id && message.get("method").is_none() {
            assert!(message.get("error").is_none(), "{method}: {message}");
            return message["result"].clone();
        }
        let update = &message["params"]["update"];
        if message["method"] == "session/update" && update["sessionUpdate"] == "agent_message_chunk"
        {
            first_text.get_or_insert_with(Instant::now);
            texts.push_str(update["content"]["text"].as_str().unwrap_or_default());
        }
    }
}

/// The CPU time of this process's threads so far, in ms (`/proc/self/task/*/schedstat`: the
/// scheduler's own nanoseconds, not ticks; the runtimes' threads live through the bench).
fn cpu_ms() -> f64 {
    let mut ns = 0_u64;
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) {
            ns += text
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    ns as f64 / 1e6
}

fn main() {
    let pairs = bench::pairs(30);
    let guarded = std::env::args().any(|a| a == "guarded");
    let sdk = std::env::args().any(|a| a == "sdk");
    if guarded {
        let guardian =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/subagent-guardian");
        assert!(
            guardian.is_file(),
            "needs {} (cargo build --release -p subagent-cli --bin subagent-guardian)",
            guardian.display()
        );
        subagent_process::guard::use_guardian(guardian);
    }
    let program = bench::installed_cli("@zed-industries/codex-acp-linux-x64/bin/codex-acp");
    let (_server_runtime, server) = bench::fake_server_apart();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("provider")
        .enable_all()
        .build()
        .unwrap();
    let root = tempfile::tempdir().unwrap();
    for dir in ["home", "codex-home", "tmp", "project"] {
        std::fs::create_dir(root.path().join(dir)).unwrap();
    }
    let dir = |name: &str| root.path().join(name).display().to_string();
    let mut config = AcpConfig::new(&program);
    for value in [
        "model_provider=\"fake\"".to_owned(),
        format!(
            "model_providers.fake={{name=\"fake\",base_url=\"{}/v1\",wire_api=\"responses\",\
             env_key=\"OPENAI_API_KEY\",request_max_retries=0,stream_max_retries=0}}",
            server.url()
        ),
        "model=\"gpt-5.5\"".to_owned(),
        "analytics.enabled=false".to_owned(),
        "features.plugins=false".to_owned(),
    ] {
        config.args.extend(["-c".to_owned(), value]);
    }
    config.env.extend([
        ("HOME".to_owned(), dir("home")),
        ("TMPDIR".to_owned(), dir("tmp")),
        ("CODEX_HOME".to_owned(), dir("codex-home")),
        ("OPENAI_API_KEY".to_owned(), "dummy".to_owned()),
    ]);
    let project = root.path().join("project");
    let child_env = ProcessSpec::new(&program, &project)
        .envs(config.env.clone())
        .child_env();
    let args = config.args.clone();
    let provider = AcpProvider::new("codex-acp", config).unwrap();
    let request = || StartRequest::new("say hi", &project);

    // Each side's split at its first text: (start → first text, first text → end), in ms.
    let raw_phases = std::cell::RefCell::new(Vec::<(f64, f64)>::new());
    let our_phases = std::cell::RefCell::new(Vec::<(f64, f64)>::new());
    let split = |started: Instant, first: Option<Instant>, ended: Instant| {
        let first = first.expect("a text arrived");
        (
            (first - started).as_secs_f64() * 1e3,
            (ended - first).as_secs_f64() * 1e3,
        )
    };
    // The adapter as both baselines start it: the provider's argv, cwd and environment.
    let command = || {
        let mut command = Command::new(&program);
        command
            .args(&args)
            .current_dir(&project)
            .env_clear()
            .envs(child_env.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        command
    };
    // Each side's CPU time in this process, summed over its runs.
    let (raw_cpu, our_cpu) = (std::cell::Cell::new(0.0), std::cell::Cell::new(0.0));
    let raw = || {
        let cpu = cpu_ms();
        let started = Instant::now();
        let mut child = command().spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut texts = String::new();
        let mut first_text = None;
        let capabilities =
            json!({"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": false});
        call(
            &mut stdin,
            &mut stdout,
            0,
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
            &mut texts,
            &mut first_text,
        );
        let session = call(
            &mut stdin,
            &mut stdout,
            1,
            "session/new",
            json!({"cwd": project, "mcpServers": []}),
            &mut texts,
            &mut first_text,
        );
        let answer = call(
            &mut stdin,
            &mut stdout,
            2,
            "session/prompt",
            json!({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "say hi"}]}),
            &mut texts,
            &mut first_text,
        );
        call(
            &mut stdin,
            &mut stdout,
            3,
            "session/close",
            json!({"sessionId": session["sessionId"]}),
            &mut texts,
            &mut first_text,
        );
        // Ended as the provider ends it: SIGTERM, then wait for the exit.
        let pid = rustix::process::Pid::from_raw(child.id().try_into().unwrap()).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        child.wait().unwrap();
        let elapsed = started.elapsed();
        raw_cpu.set(raw_cpu.get() + cpu_ms() - cpu);
        raw_phases
            .borrow_mut()
            .push(split(started, first_text, started + elapsed));
        assert_eq!(answer["stopReason"], "end_turn");
        assert_eq!(texts, "hi from fake");
        elapsed
    };
    // The same run with the official SDK driving a `tokio::process` child: no `subagents`.
    let sdk_client = || {
        let cpu = cpu_ms();
        let (elapsed, first_text, texts, answer) = runtime.block_on(async {
            let started = Instant::now();
            let mut child = tokio::process::Command::from(command()).spawn().unwrap();
            let stdin = child.stdin.take().unwrap();
            let stdout = tokio::io::BufReader::new(child.stdout.take().unwrap());
            let outgoing = futures::sink::unfold(stdin, async |mut stdin, mut line: String| {
                line.push('\n');
                tokio::io::AsyncWriteExt::write_all(&mut stdin, line.as_bytes()).await?;
                Ok::<_, std::io::Error>(stdin)
            });
            let incoming = futures::stream::unfold(
                tokio::io::AsyncBufReadExt::lines(stdout),
                async |mut lines| {
                    let line = lines.next_line().await.transpose()?;
                    Some((line, lines))
                },
            );
            let seen = std::sync::Arc::new(std::sync::Mutex::new((String::new(), None)));
            let record = std::sync::Arc::clone(&seen);
            let project = project.clone();
            let answer = Client
                .v1()
                .name("bench")
                .on_receive_notification(
                    async move |notification: SessionNotification, _cx| {
                        if let SessionUpdate::AgentMessageChunk(chunk) = notification.update
                            && let ContentBlock::Text(text) = chunk.content
                        {
                            let mut seen = record.lock().unwrap();
                            seen.1.get_or_insert_with(Instant::now);
                            seen.0.push_str(&text.text);
                        }
                        Ok(())
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .connect_with(
                    Lines::new(Box::pin(outgoing), Box::pin(incoming)),
                    async move |cx| {
                        cx.send_request(
                            InitializeRequest::new(ProtocolVersion::V1).client_capabilities(
                                ClientCapabilities::new().fs(FileSystemCapabilities::new()
                                    .read_text_file(true)
                                    .write_text_file(true)),
                            ),
                        )
                        .block_task()
                        .await?;
                        let session = cx
                            .send_request(NewSessionRequest::new(project))
                            .block_task()
                            .await?
                            .session_id;
                        let answer = cx
                            .send_request(PromptRequest::new(
                                session.clone(),
                                vec![ContentBlock::Text(TextContent::new("say hi"))],
                            ))
                            .block_task()
                            .await?;
                        cx.send_request(CloseSessionRequest::new(session))
                            .block_task()
                            .await?;
                        Ok(answer)
                    },
                )
                .await
                .unwrap();
            let pid =
                rustix::process::Pid::from_raw(child.id().unwrap().try_into().unwrap()).unwrap();
            rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
            child.wait().await.unwrap();
            let elapsed = started.elapsed();
            let (texts, first_text) = std::mem::take(&mut *seen.lock().unwrap());
            (elapsed, first_text, texts, answer)
        });
        raw_cpu.set(raw_cpu.get() + cpu_ms() - cpu);
        let started = Instant::now() - elapsed;
        raw_phases
            .borrow_mut()
            .push(split(started, first_text, started + elapsed));
        assert_eq!(answer.stop_reason, AcpStopReason::EndTurn);
        assert_eq!(texts, "hi from fake");
        elapsed
    };
    let ours = || {
        let cpu = cpu_ms();
        let elapsed = runtime.block_on(async {
            let started = Instant::now();
            let mut run = provider.start(request()).await.unwrap();
            let mut events = run.take_events().unwrap();
            let first_text = tokio::spawn(async move {
                while let Some(event) = futures::StreamExt::next(&mut events).await {
                    if matches!(event, subagent_core::RunEvent::Text { .. }) {
                        return Some(Instant::now());
                    }
                }
                None
            });
            let outcome = run.outcome().await;
            let elapsed = started.elapsed();
            let first = first_text.await.unwrap();
            our_phases
                .borrow_mut()
                .push(split(started, first, started + elapsed));
            assert_answered(&outcome, "hi from fake");
            elapsed
        });
        our_cpu.set(our_cpu.get() + cpu_ms() - cpu);
        elapsed
    };

    // `measure` warms both up first: the first run of a fresh CODEX_HOME writes its files.
    let paired = if sdk {
        subagent_test_support::paired::measure(pairs, sdk_client, ours)
    } else {
        subagent_test_support::paired::measure(pairs, raw, ours)
    };
    let baseline = if sdk {
        "official SDK client"
    } else {
        "bare ACP client"
    };
    let how = if guarded {
        "the provider's child under subagent-guardian"
    } else {
        "the provider's child unguarded"
    };
    let title = format!("codex-acp one-turn run, {pairs} pairs (order alternating), {how}");
    paired.print(&title, baseline, "provider");
    // Both include the warm-up run and the fake model server's work (a runtime of this process).
    let runs = (pairs + 1) as f64;
    println!(
        "  this process's CPU per run: {baseline} {:.2} ms, provider {:.2} ms (the fake model server's in both)",
        raw_cpu.get() / runs,
        our_cpu.get() / runs
    );
    // The pairs' phases (the warm-up run of each side left out), side by side.
    let (raw_phases, our_phases) = (raw_phases.into_inner(), our_phases.into_inner());
    let phase = |pick: fn(&(f64, f64)) -> f64| {
        let differences = raw_phases
            .iter()
            .zip(&our_phases)
            .skip(1)
            .map(|(raw, ours)| pick(ours) - pick(raw))
            .collect();
        let raw = subagent_test_support::paired::Quartiles::of(
            raw_phases.iter().skip(1).map(pick).collect(),
        );
        (
            raw.median,
            subagent_test_support::paired::Quartiles::of(differences),
        )
    };
    for (name, pick) in [
        (
            "start → first text",
            (|p: &(f64, f64)| p.0) as fn(&(f64, f64)) -> f64,
        ),
        ("first text → end  ", |p: &(f64, f64)| p.1),
    ] {
        let (raw, difference) = phase(pick);
        println!(
            "  {name}: baseline median {raw:6.1} ms, provider − baseline median {:+.1} ms [p25 {:+.1}, p75 {:+.1}]",
            difference.median, difference.q1, difference.q3
        );
    }
}
