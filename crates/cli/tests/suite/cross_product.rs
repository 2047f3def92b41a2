//! The whole product: `subagent run` with a parent whose delegation tools reach the real
//! `claude` and `codex` CLIs, all against one fake model server. Needs the pinned CLIs
//! (`cargo xtask install-clis`); runs with the `e2e` feature.

use std::path::{Path, PathBuf};

use subagent_test_support::FakeServer;

use super::support::{json_lines, root, stderr, subagent};

const SCENARIOS: &str = r#"
- name: parent
  match: "ask both products"
  steps:
    - tool_calls:
        - name: claude_code
          input: {prompt: "claude, what is the password?", description: "ask claude"}
        - name: codex
          input: {prompt: "codex, what is the password?", description: "ask codex"}
    - text: "both products answered"
- name: claude
  match: "claude, what is the password"
  steps:
    - text: "claude-says-swordfish"
- name: codex
  match: "codex, what is the password"
  steps:
    - text: "codex-says-swordfish"
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

fn preset(dir: &Path, url: &str) -> PathBuf {
    let d = |name: &str| {
        let path = dir.join(name);
        std::fs::create_dir_all(&path).unwrap();
        path.display().to_string()
    };
    let text = format!(
        r#"version: 1
model: {{kind: anthropic, name: parent-model, base_url: "{url}", api_key_env: FAKE_KEY}}
providers:
  - name: spawn
    kind: spawn
  - name: claude-code
    kind: claude-code
    config:
      binary: "{claude}"
      timeout_secs: 120
      env: {{HOME: "{home}", CLAUDE_CONFIG_DIR: "{home}/.claude", CLAUDE_CODE_TMPDIR: "{tmp}", ANTHROPIC_BASE_URL: "{url}", ANTHROPIC_API_KEY: dummy}}
  - name: codex
    kind: codex
    config:
      binary: "{codex}"
      model: gpt-5.5
      model_provider: {{id: fake, base_url: "{url}/v1", env_key: OPENAI_API_KEY}}
      codex_home: "{codex_home}"
      timeout_secs: 120
      env: {{HOME: "{home}", TMPDIR: "{tmp}", OPENAI_API_KEY: dummy}}
tools:
  - {{name: subagent, provider: spawn}}
  - {{name: claude_code, provider: claude-code}}
  - {{name: codex, provider: codex}}
"#,
        claude = cli(".bin/claude").display(),
        codex = cli(".bin/codex").display(),
        home = d("home"),
        tmp = d("tmp"),
        codex_home = d("codex-home"),
    );
    let path = dir.join("cross.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_delegates_to_claude_code_and_codex_in_one_turn() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let dir = tempfile::Builder::new()
        .prefix("subagent-cross-e2e-")
        .tempdir()
        .unwrap();
    let preset = preset(dir.path(), &server.url());
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let output = tokio::task::spawn_blocking(move || {
        subagent(&project)
            .env("FAKE_KEY", "test-key")
            .args(["run", "--json", "--preset"])
            .arg(&preset)
            .arg("ask both products for the password")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    assert_eq!(outcome["text"], "both products answered");
    let delegations = outcome["delegations"].as_array().unwrap();
    let result_of = |tool: &str| {
        let d = delegations.iter().find(|d| d["tool"] == tool).unwrap();
        assert_eq!(d["is_error"], false, "{d}");
        d["result"].as_str().unwrap().to_owned()
    };
    assert!(result_of("claude_code").starts_with("claude-says-swordfish"));
    assert!(result_of("codex").starts_with("codex-says-swordfish"));

    // Each product really ran: its own requests reached the server.
    let requests = server.model_requests();
    assert!(
        requests.iter().any(|r| r
            .header("user-agent")
            .is_some_and(|ua| ua.starts_with("claude-cli/2.1.197"))),
        "no request from claude"
    );
    assert!(
        requests.iter().any(|r| r.path.starts_with("/v1/responses")),
        "no request from codex"
    );
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

/// `delegate --resume` continues a Claude Code session: the second run's request carries the
/// first run's conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_resumes_a_claude_code_session() {
    let server = FakeServer::from_yaml(
        r#"
- match: "remember the word BETA"
  steps: [{text: "remembered"}]
- match: "which word did I ask you to remember"
  steps: [{text: "you asked me to remember BETA"}]
"#,
    )
    .await
    .unwrap();
    let dir = tempfile::Builder::new()
        .prefix("subagent-resume-e2e-")
        .tempdir()
        .unwrap();
    let preset = preset(dir.path(), &server.url());
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let delegate = move |prompt: &'static str, resume: Option<String>| {
        let (preset, project) = (preset.clone(), project.clone());
        tokio::task::spawn_blocking(move || {
            let mut command = subagent(&project);
            command.args([
                "delegate",
                "--json",
                "--provider",
                "claude-code",
                "--preset",
            ]);
            command.arg(&preset);
            if let Some(id) = resume {
                command.args(["--resume", &id]);
            }
            command.arg(prompt).output().unwrap()
        })
    };
    let first = delegate("remember the word BETA", None).await.unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let outcome = json_lines(&first).pop().unwrap();
    assert_eq!(outcome["text"], "remembered");
    let session = outcome["session"]["id"].as_str().unwrap().to_owned();

    let second = delegate(
        "which word did I ask you to remember?",
        Some(session.clone()),
    )
    .await
    .unwrap();
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let outcome = json_lines(&second).pop().unwrap();
    assert_eq!(outcome["text"], "you asked me to remember BETA");
    assert_eq!(outcome["session"]["id"], session.as_str());
    let last = server.model_requests().pop().unwrap();
    assert!(
        last.body
            .unwrap()
            .to_string()
            .contains("remember the word BETA"),
        "the resumed request lacks the first conversation"
    );

    // A provider that cannot resume refuses before starting anything.
    let refused = {
        let (preset, project) = (dir.path().join("cross.yaml"), dir.path().join("project"));
        tokio::task::spawn_blocking(move || {
            subagent(&project)
                .args([
                    "delegate",
                    "--provider",
                    "spawn",
                    "--resume",
                    "x",
                    "--preset",
                ])
                .arg(&preset)
                .arg("hello")
                .output()
                .unwrap()
        })
        .await
        .unwrap()
    };
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains(
            "error[UNSUPPORTED_CAPABILITY]: subagent provider \"spawn\" does not support the capability: \"resume\""
        ),
        "{}",
        stderr(&refused)
    );
}
