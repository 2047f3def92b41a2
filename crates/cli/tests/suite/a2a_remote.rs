//! A preset row `kind: a2a` from the command line, against another `subagent serve` process
//! (two processes, as on two machines): `subagent delegate` runs its child there, and a server
//! that goes silent (stopped with SIGSTOP: no events, no keep-alives) fails the run past the
//! row's idle timeout, saying so.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use subagent_test_support::FakeServer;

use super::serve::{TOKEN, start, stop};
use super::support::{HELLO_AND_GATED, fake_preset, stderr, stdout, subagent};

const SCENARIOS: &str = HELLO_AND_GATED;

/// The caller's preset: its own model (unused by the a2a row) and a row `remote` of kind a2a
/// in front of the server at `base`, its token in `A2A_TOKEN`.
/// `subagent delegate --provider remote` on `prompt` under `preset`, calling with `token`, in a
/// blocking task of its own (the server it calls runs meanwhile).
fn delegate_remote(
    home: &Path,
    token: &'static str,
    preset: PathBuf,
    prompt: &'static str,
) -> tokio::task::JoinHandle<std::process::Output> {
    let home = home.to_path_buf();
    tokio::task::spawn_blocking(move || {
        subagent(&home)
            .env("A2A_TOKEN", token)
            .env("FAKE_KEY", "test-key")
            .args(["delegate", "--provider", "remote", "--preset"])
            .arg(&preset)
            .arg(prompt)
            .output()
            .unwrap()
    })
}

fn caller_preset(dir: &Path, model: &str, base: &str, idle_ms: u64) -> PathBuf {
    let caller = dir.join("caller");
    std::fs::create_dir_all(&caller).unwrap();
    let row = format!(
        "  - name: remote\n    kind: a2a\n    config:\n      url: {base}\n      token_env: A2A_TOKEN\n      timeouts: {{idle_ms: {idle_ms}}}\n"
    );
    fake_preset(&caller, model, &row)
}

fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preset_row_of_kind_a2a_delegates_to_another_subagent_serve() {
    let model = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (server, server_stderr, base) =
        start(dir.path(), &fake_preset(dir.path(), &model.url(), ""));
    let preset = caller_preset(dir.path(), &model.url(), &base, 60_000);
    let output = delegate_remote(dir.path(), TOKEN, preset, "HELLO from the caller")
        .await
        .unwrap();
    assert_eq!(
        (output.status.code(), stdout(&output).as_str()),
        (Some(0), "Hi there.\n"),
        "{}",
        stderr(&output)
    );
    // A wrong token: the card is public, the message is refused (401) before anything runs.
    let preset = caller_preset(dir.path(), &model.url(), &base, 60_000);
    let wrong = delegate_remote(
        dir.path(),
        "not-the-token-0123456789",
        preset,
        "HELLO again",
    )
    .await
    .unwrap();
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
    assert!(
        stderr(&wrong).contains("UNAUTHORIZED") && stderr(&wrong).contains("refused the token"),
        "{}",
        stderr(&wrong)
    );
    assert_eq!(
        model.model_requests().len(),
        1,
        "only the first message ran"
    );
    let (code, _, _) = tokio::task::spawn_blocking(move || stop(server, server_stderr))
        .await
        .unwrap();
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_gone_silent_fails_the_run_past_the_idle_timeout() {
    let model = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (server, server_stderr, base) =
        start(dir.path(), &fake_preset(dir.path(), &model.url(), ""));
    let preset = caller_preset(dir.path(), &model.url(), &base, 1_500);
    let delegate = delegate_remote(dir.path(), TOKEN, preset, "GATED: work until told");
    // The remote run waits on the gate (its second model request): stop the server whole.
    model.wait_requests(2).await;
    signal(server.id(), "-STOP");
    let output = delegate.await.unwrap();
    signal(server.id(), "-CONT");
    model.gate("go").open();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("sent nothing for 1500 ms (not even a keep-alive)"),
        "{}",
        stderr(&output)
    );
    let (code, _, _) = tokio::task::spawn_blocking(move || stop(server, server_stderr))
        .await
        .unwrap();
    assert_eq!(code, Some(0));
}

/// Our provider → our server (a separate `subagent serve` process) → the real pinned `claude`
/// on the far side, all against the fake model server.
#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_row_reaches_claude_code_on_the_far_side() {
    const FAR: &str = r#"
- name: claude
  match: "claude, what is the password"
  steps:
    - text: "claude-says-swordfish"
"#;
    let model = FakeServer::from_yaml(FAR).await.unwrap();
    let dir = tempfile::Builder::new()
        .prefix("subagent-a2a-e2e-")
        .tempdir()
        .unwrap();
    let url = model.url();
    let far = crate::suite::support::write_file(
        dir.path(),
        "far.yaml",
        format!(
            r#"version: 1
model: {{kind: anthropic, name: far-model, base_url: "{url}", api_key_env: FAKE_KEY}}
providers:
{claude}tools:
  - {{name: claude_code, provider: claude-code}}
"#,
            claude = super::pinned::claude_code_row(&dir.path().join("far"), &url, ""),
        ),
    );
    let (server, server_stderr, base) = start(dir.path(), &far);
    let caller = dir.path().join("caller");
    std::fs::create_dir_all(&caller).unwrap();
    let row = format!(
        "  - name: remote\n    kind: a2a\n    config: {{url: \"{base}\", token_env: A2A_TOKEN, skill: claude_code}}\n"
    );
    let preset = fake_preset(&caller, &url, &row);
    let home = dir.path().to_path_buf();
    let output = tokio::task::spawn_blocking(move || {
        subagent(&home)
            .env("A2A_TOKEN", TOKEN)
            .env("FAKE_KEY", "test-key")
            .args(["delegate", "--json", "--provider", "remote", "--preset"])
            .arg(&preset)
            .arg("claude, what is the password?")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcome = super::support::json_lines(&output).pop().unwrap();
    assert!(
        outcome["text"]
            .as_str()
            .unwrap()
            .starts_with("claude-says-swordfish"),
        "{outcome}"
    );
    // The far side really ran claude: its requests reached the model server.
    assert!(
        super::pinned::claude_asked(&model.model_requests()),
        "no request from claude"
    );
    let (code, _, _) = tokio::task::spawn_blocking(move || stop(server, server_stderr))
        .await
        .unwrap();
    assert_eq!(code, Some(0));
}
