//! What hooks add to a tool call: `HookRunner::run` for a `PreToolUse` event of a `bash` call
//! (`cargo bench -p subagent-runtime --bench hooks`). Issue 28's goal: a no-op command hook
//! adds ≤ 5 ms to a tool call; no hook configured adds nothing measurable.
//!
//! - `baseline`: the same `block_on` of a future that only drops the event's input (what the
//!   timing itself costs);
//! - `none_configured`: an empty runner (what every tool call pays when no settings file
//!   configures a hook), through a current-thread runtime's `block_on` like the others;
//! - `none_matching`: a runner whose only hook is for another tool;
//! - `noop_command`: one hook `true` (a `bash -c true` through the process owner: spawn, the
//!   event's JSON on stdin, wait, reap, read the verdict);
//! - `noop_json`: one hook that reads its stdin and answers `{"continue": true}`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value, json};
use subagent_runtime::{HookBase, HookRunner, Secrets};
use subagent_settings::{HookEvent, Hooks, Scope};
use tokio_util::sync::CancellationToken;

fn main() {
    divan::main();
}

fn runner(hooks: Value) -> HookRunner {
    let hooks = Hooks::from_value(&hooks, Scope::User, None, "bench").unwrap();
    let dir = std::env::temp_dir();
    HookRunner::new(
        hooks,
        HookBase {
            session_id: "bench".into(),
            transcript_path: None,
            cwd: dir.clone(),
            project_dir: dir,
            permission_mode: "default".into(),
            secrets: Secrets::new(),
        },
    )
}

fn input() -> Map<String, Value> {
    let Value::Object(map) = json!({
        "tool_name": "Bash",
        "tool_input": {"command": "cargo test", "description": "run the tests"},
        "tool_use_id": "toolu_01",
    }) else {
        unreachable!()
    };
    map
}

fn bench_run(bencher: divan::Bencher, runner: &HookRunner) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    // The event's input is built outside the timing: a caller with no hooks skips building it
    // (`HookRunner::is_empty`).
    bencher.with_inputs(input).bench_local_values(|input| {
        rt.block_on(runner.run(&HookEvent::PreToolUse, Some("bash"), input, &cancel))
    });
}

#[divan::bench]
fn baseline(bencher: divan::Bencher) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    bencher
        .with_inputs(input)
        .bench_local_values(|input| rt.block_on(async move { drop(input) }));
}

#[divan::bench]
fn none_configured(bencher: divan::Bencher) {
    bench_run(bencher, &runner(Value::Null));
}

#[divan::bench]
fn none_matching(bencher: divan::Bencher) {
    bench_run(
        bencher,
        &runner(json!({"PreToolUse": [{"matcher": "Write", "hooks": [
            {"type": "command", "command": "true"}]}]})),
    );
}

#[divan::bench(sample_count = 50)]
fn noop_command(bencher: divan::Bencher) {
    bench_run(
        bencher,
        &runner(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "true"}]}]})),
    );
}

#[divan::bench(sample_count = 50)]
fn noop_json(bencher: divan::Bencher) {
    bench_run(
        bencher,
        &runner(json!({"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "cat > /dev/null; echo '{\"continue\": true}'"}]}]})),
    );
}
