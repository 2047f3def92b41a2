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

/// A whole tool call through the agent loop, over real HTTP to the fake model server: the model
/// reads a file with `read_file`, then answers. The run's settings have no hook
/// (`tool_call_without_hooks`), one no-op command hook before the call
/// (`tool_call_with_one_noop_hook`: `PreToolUse`, `true`), or one before and one after it
/// (`tool_call_with_noop_hooks`: `PreToolUse` and `PostToolUse`); the difference is what hooks
/// add to a tool call a user's run makes.
mod tool_call {
    use std::sync::Arc;

    use serde_json::{Value, json};
    use subagent_core::PermissionMode;
    use subagent_model::ModelKind;
    use subagent_runtime::tools::BashConfig;
    use subagent_runtime::{Agent, AgentConfig, PermissionPolicy, Roots, SettingsRules, ToolSet};
    use subagent_settings::{Hooks, Scope};
    use subagent_test_support::FakeServer;
    use tokio_util::sync::CancellationToken;

    const READ: &str = r#"
- match: "read the notes"
  steps:
    - tool_calls:
        - {name: read_file, input: {path: "notes.txt"}}
    - text: "read"
"#;

    fn bench_calls(bencher: divan::Bencher, hooks: Value) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = rt.block_on(FakeServer::from_yaml(READ)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "the notes\n").unwrap();
        let hooks = Hooks::from_value(&hooks, Scope::User, None, "bench").unwrap();
        let policy =
            PermissionPolicy::new(PermissionMode::Bypass).with_settings(Arc::new(SettingsRules {
                permissions: subagent_settings::Permissions::default(),
                project_root: dir.path().to_path_buf(),
                home: None,
                hooks,
                env: Vec::new(),
                additional_dirs: Vec::new(),
            }));
        let model = server.model(ModelKind::Anthropic);
        bencher.bench_local(|| {
            let mut config = AgentConfig::new(Arc::clone(&model), Roots::new(dir.path()).unwrap());
            config.tools = ToolSet::new(ToolSet::builtin(BashConfig::default()));
            config.permissions = policy.clone();
            let outcome = rt.block_on(async {
                Agent::new(config)
                    .unwrap()
                    .start_prompt("read the notes", CancellationToken::new())
                    .outcome()
                    .await
            });
            assert_eq!(outcome.text, "read");
        });
    }

    #[divan::bench(sample_count = 50)]
    fn tool_call_without_hooks(bencher: divan::Bencher) {
        bench_calls(bencher, json!({}));
    }

    #[divan::bench(sample_count = 50)]
    fn tool_call_with_one_noop_hook(bencher: divan::Bencher) {
        let noop = json!([{"matcher": "Read", "hooks": [{"type": "command", "command": "true"}]}]);
        bench_calls(bencher, json!({"PreToolUse": noop}));
    }

    #[divan::bench(sample_count = 50)]
    fn tool_call_with_noop_hooks(bencher: divan::Bencher) {
        let noop = json!([{"matcher": "Read", "hooks": [{"type": "command", "command": "true"}]}]);
        bench_calls(bencher, json!({"PreToolUse": noop, "PostToolUse": noop}));
    }
}
