//! The `acp` provider kind from the command line: a preset with `kind: acp` rows for the pinned
//! codex-acp and claude-agent-acp (`cargo xtask install-clis`), used by `subagent delegate` and
//! by a parent's delegation tools, all against one fake model server. Runs with the `e2e`
//! feature.

use std::path::{Path, PathBuf};

use super::pinned::{codex_acp_row, made, pinned};
use super::support::write_file;
use super::support::{Place, delegation_result, json_run};

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

/// A preset whose `acp` rows run the two pinned adapters against `url`.
fn preset(dir: &Path, url: &str) -> PathBuf {
    let text = format!(
        r#"version: 1
model: {{kind: anthropic, name: parent-model, base_url: "{url}", api_key_env: FAKE_KEY}}
providers:
{codex_acp}  - name: claude-acp
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
        codex_acp = codex_acp_row(dir, url, "codex-acp"),
        claude_acp = pinned("@zed-industries/claude-agent-acp/dist/index.js").display(),
        claude = pinned(".bin/claude").display(),
        home = made(dir, "home"),
        tmp = made(dir, "tmp"),
    );
    write_file(dir, "acp.yaml", &text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_rows_serve_delegate_and_a_parents_delegation_tools() {
    let Place {
        server,
        dir,
        project,
    } = Place::new(SCENARIOS, "subagent-acp-cli-e2e-").await;
    let preset = preset(dir.path(), &server.url());

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
