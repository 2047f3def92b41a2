//! The `acp` provider kind from the command line: a preset with `kind: acp` rows for the pinned
//! codex-acp and claude-agent-acp (`cargo xtask install-clis`), used by `subagent delegate` and
//! by a parent's delegation tools, all against one fake model server. Runs with the `e2e`
//! feature.

use std::path::{Path, PathBuf};

use subagent_test_support::FakeServer;

use super::support::{delegation_result, json_run, root};

const SCENARIOS: &str = r#"
- name: parent
  match: "ask both adapters"
  steps:
    - tool_calls:
        - name: claude_acp
          input: {prompt: "claude-acp, what is the password?", description: "ask claude"}
        - name: codex_acp
          input: {prompt: "codex-acp, what is the password?", description: "ask codex"}
    - text: "both adapters answered"
- name: claude
  match: "claude-acp, what is the password"
  steps:
    - text: "claude-acp-says-swordfish"
- name: codex
  match: "codex-acp, what is the password"
  steps:
    - text: "codex-acp-says-swordfish"
"#;

fn cli(path: &str) -> PathBuf {
    let path = root().join("target/clis/node_modules").join(path);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo xtask install-clis`",
        path.display()
    );
    path
}

/// A preset whose `acp` rows run the two pinned adapters against `url`.
fn preset(dir: &Path, url: &str) -> PathBuf {
    let d = |name: &str| {
        let path = dir.join(name);
        std::fs::create_dir_all(&path).unwrap();
        path.display().to_string()
    };
    let bwrap =
        cli("@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-resources/bwrap");
    let path = format!(
        "{}:{}",
        bwrap.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let text = format!(
        r#"version: 1
model: {{kind: anthropic, name: parent-model, base_url: "{url}", api_key_env: FAKE_KEY}}
providers:
  - name: codex-acp
    kind: acp
    config:
      command: "{codex_acp}"
      args: [-c, 'model_provider="fake"', -c, 'model_providers.fake={{name="fake",base_url="{url}/v1",wire_api="responses",env_key="OPENAI_API_KEY",request_max_retries=0,stream_max_retries=0}}', -c, 'model="gpt-5.5"', -c, analytics.enabled=false, -c, features.plugins=false]
      modes: {{plan: read-only, default: read-only, accept-edits: auto}}
      timeout_secs: 120
      env: {{HOME: "{home}", TMPDIR: "{tmp}", CODEX_HOME: "{codex_home}", OPENAI_API_KEY: dummy, PATH: "{path}"}}
  - name: claude-acp
    kind: acp
    config:
      command: node
      args: ["{claude_acp}"]
      modes: {{plan: dontAsk, default: default, accept-edits: acceptEdits}}
      timeout_secs: 120
      env: {{HOME: "{home}", CLAUDE_CONFIG_DIR: "{home}/.claude", CLAUDE_CODE_TMPDIR: "{tmp}", ANTHROPIC_BASE_URL: "{url}", ANTHROPIC_API_KEY: dummy, IS_SANDBOX: "1", CLAUDE_CODE_EXECUTABLE: "{claude}", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"}}
tools:
  - {{name: codex_acp, provider: codex-acp}}
  - {{name: claude_acp, provider: claude-acp}}
"#,
        codex_acp = cli("@zed-industries/codex-acp-linux-x64/bin/codex-acp").display(),
        claude_acp = cli("@zed-industries/claude-agent-acp/dist/index.js").display(),
        claude = cli(".bin/claude").display(),
        home = d("home"),
        tmp = d("tmp"),
        codex_home = d("codex-home"),
    );
    let path = dir.join("acp.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_rows_serve_delegate_and_a_parents_delegation_tools() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let dir = tempfile::Builder::new()
        .prefix("subagent-acp-cli-e2e-")
        .tempdir()
        .unwrap();
    let preset = preset(dir.path(), &server.url());
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();

    // `subagent delegate` to each row.
    for (provider, answer) in [
        ("codex-acp", "codex-acp-says-swordfish"),
        ("claude-acp", "claude-acp-says-swordfish"),
    ] {
        let prompt = format!("{provider}, what is the password?");
        let args = ["delegate", "--json", "--provider", provider];
        let outcome = json_run(&project, &args, &preset, &prompt).await;
        assert_eq!(
            (&outcome["status"], &outcome["text"]),
            (&serde_json::json!("completed"), &serde_json::json!(answer)),
            "{outcome}"
        );
    }

    // A parent's delegation tools reach both in one turn.
    let prompt = "ask both adapters for the password";
    let outcome = json_run(&project, &["run", "--json"], &preset, prompt).await;
    assert_eq!(outcome["text"], "both adapters answered");
    let result_of = |tool: &str| delegation_result(&outcome, tool);
    assert!(result_of("claude_acp").starts_with("claude-acp-says-swordfish"));
    assert!(result_of("codex_acp").starts_with("codex-acp-says-swordfish"));
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}
