//! The whole product: `subagent run` with a parent whose delegation tools reach the real
//! `claude` and `codex` CLIs, all against one fake model server. Needs the pinned CLIs
//! (`cargo xtask install-clis`); runs with the `e2e` feature.

use std::path::{Path, PathBuf};

use subagent_test_support::FakeServer;

use super::support::{delegation_result, json_lines, json_run, root, stderr, stdout, subagent};

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
    preset_with(dir, url, "", "")
}

/// The preset with extra lines in the claude-code and codex `config:` blocks.
fn preset_with(dir: &Path, url: &str, claude_extra: &str, codex_extra: &str) -> PathBuf {
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
{claude_extra}      timeout_secs: 120
      env: {{HOME: "{home}", CLAUDE_CONFIG_DIR: "{home}/.claude", CLAUDE_CODE_TMPDIR: "{tmp}", ANTHROPIC_BASE_URL: "{url}", ANTHROPIC_API_KEY: dummy, IS_SANDBOX: "1"}}
  - name: codex
    kind: codex
    config:
      binary: "{codex}"
{codex_extra}      model: gpt-5.5
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
    let prompt = "ask both products for the password";
    let outcome = json_run(&project, &["run", "--json"], &preset, prompt).await;
    assert_eq!(outcome["text"], "both products answered");
    let result_of = |tool: &str| delegation_result(&outcome, tool);
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

    // A claude-code session id means nothing to spawn, which keeps its own transcripts: refused
    // before anything starts.
    let refused = {
        let (preset, project) = (dir.path().join("cross.yaml"), dir.path().join("project"));
        let id = session.clone();
        tokio::task::spawn_blocking(move || {
            // The key spawn's model needs, so that the refusal is about the session.
            subagent(&project)
                .env("FAKE_KEY", "unused")
                .args([
                    "delegate",
                    "--provider",
                    "spawn",
                    "--resume",
                    &id,
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
        stderr(&refused).contains(&format!(
            "error[NOT_RESUMABLE]: run cannot be resumed: no session {session} in "
        )),
        "{}",
        stderr(&refused)
    );
}

/// Scenarios of the plan-agent test: each product is asked to write a file with its own tools.
const WRITING: &str = r#"
- name: claude-writes
  match: "claude, write the marker"
  steps:
    - text: "Writing."
      tool_calls:
        - name: Bash
          input: {command: "echo from-claude > claude-marker.txt", description: "write a file"}
    - text: "claude finished"
- name: codex-writes
  match: "codex, write the marker"
  steps:
    - text: "Writing."
      tool_calls:
        - name: exec_command
          input: {cmd: "echo from-codex > codex-marker.txt"}
    - text: "Patching."
      tool_calls:
        - name: apply_patch
          custom: true
          input: "*** Begin Patch\n*** Add File: codex-patch.txt\n+from a patch\n*** End Patch\n"
    - text: "codex finished"
"#;

/// `subagent delegate --agent X` where X declares `permissionMode: plan`: its mode reaches the
/// product CLI (as the request's permission ceiling), so neither a Claude Code child configured
/// with `bypassPermissions` nor a Codex child configured for `workspace-write` writes anything.
/// The same providers without the agent do write: the preset alone would let them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_agent_delegated_to_claude_code_or_codex_cannot_write() {
    let server = FakeServer::from_yaml(WRITING).await.unwrap();
    let dir = tempfile::Builder::new()
        .prefix("subagent-plan-agent-e2e-")
        .tempdir()
        .unwrap();
    // The products as loose as they go: only the agent's mode can hold them back.
    let preset = preset_with(
        dir.path(),
        &server.url(),
        "      permission_mode: bypassPermissions\n",
        "      sandbox: workspace-write\n",
    );
    let project = dir.path().join("project");
    let agents = project.join(".subagents/agents");
    std::fs::create_dir_all(&agents).unwrap();
    for (name, provider) in [
        ("claude-planner", "claude-code"),
        ("codex-planner", "codex"),
    ] {
        std::fs::write(
            agents.join(format!("{name}.md")),
            format!(
                "---\nname: {name}\ndescription: Plans without changing anything.\nprovider: {provider}\npermissionMode: plan\n---\nLook, do not touch.\n"
            ),
        )
        .unwrap();
    }
    let delegate = |route: [&'static str; 2], prompt: &'static str| {
        let (preset, project) = (preset.clone(), project.clone());
        tokio::task::spawn_blocking(move || {
            subagent(&project)
                .args(["delegate", "--json"])
                .args(route)
                .arg("--preset")
                .arg(&preset)
                .arg(prompt)
                .output()
                .unwrap()
        })
    };
    let written = |name: &str| project.join(name).exists();

    let output = delegate(["--agent", "claude-planner"], "claude, write the marker")
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        !written("claude-marker.txt"),
        "a plan agent wrote through claude"
    );
    let output = delegate(["--agent", "codex-planner"], "codex, write the marker")
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        !written("codex-marker.txt"),
        "a plan agent's command wrote through codex"
    );
    assert!(
        !written("codex-patch.txt"),
        "a plan agent's patch applied through codex"
    );

    // The control: without the agent, the same providers write.
    let output = delegate(["--provider", "claude-code"], "claude, write the marker")
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(written("claude-marker.txt"), "{}", stdout(&output));
    let output = delegate(["--provider", "codex"], "codex, write the marker")
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(written("codex-marker.txt"), "{}", stdout(&output));
    assert!(written("codex-patch.txt"), "{}", stdout(&output));
}
