//! The whole product: `subagent run` with a parent whose delegation tools reach the real
//! `claude` and `codex` CLIs, all against one fake model server. Needs the pinned CLIs
//! (`cargo xtask install-clis`); runs with the `e2e` feature.

use std::path::{Path, PathBuf};

use super::pinned::{claude_asked, claude_code_row, codex_row};
use super::support::write_file;
use super::support::{
    Place, delegate_json, delegation_result, json_lines, json_run, stderr, stdout, subagent,
};

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

fn preset(dir: &Path, url: &str) -> PathBuf {
    preset_with(dir, url, "", "")
}

/// The preset with extra lines in the claude-code and codex `config:` blocks.
fn preset_with(dir: &Path, url: &str, claude_extra: &str, codex_extra: &str) -> PathBuf {
    let text = format!(
        r#"version: 1
model: {{kind: anthropic, name: parent-model, base_url: "{url}", api_key_env: FAKE_KEY}}
providers:
  - name: spawn
    kind: spawn
{claude}{codex}tools:
  - {{name: subagent, provider: spawn}}
  - {{name: claude_code, provider: claude-code}}
  - {{name: codex, provider: codex}}
"#,
        claude = claude_code_row(dir, url, claude_extra),
        codex = codex_row(dir, url, codex_extra, ""),
    );
    write_file(dir, "cross.yaml", &text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_delegates_to_claude_code_and_codex_in_one_turn() {
    let Place {
        server,
        dir,
        project,
    } = Place::new(SCENARIOS, "subagent-cross-e2e-").await;
    let preset = preset(dir.path(), &server.url());
    let prompt = "ask both products for the password";
    let outcome = json_run(&project, &["run", "--json"], &preset, prompt).await;
    assert_eq!(outcome["text"], "both products answered");
    let result_of = |tool: &str| delegation_result(&outcome, tool);
    assert!(result_of("claude_code").starts_with("claude-says-swordfish"));
    assert!(result_of("codex").starts_with("codex-says-swordfish"));

    // Each product really ran: its own requests reached the server.
    let requests = server.model_requests();
    assert!(claude_asked(&requests), "no request from claude");
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
    let scenarios = r#"
- match: "remember the word BETA"
  steps: [{text: "remembered"}]
- match: "which word did I ask you to remember"
  steps: [{text: "you asked me to remember BETA"}]
"#;
    let Place {
        server,
        dir,
        project,
    } = Place::new(scenarios, "subagent-resume-e2e-").await;
    let preset = preset(dir.path(), &server.url());
    let delegate = |prompt: &'static str, resume: Option<String>| {
        let (preset, project) = (preset.clone(), project.clone());
        async move {
            let args = ["--provider", "claude-code"];
            delegate_json(&project, &args, &preset, resume.as_deref(), prompt).await
        }
    };
    let first = delegate("remember the word BETA", None).await;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let outcome = json_lines(&first).pop().unwrap();
    assert_eq!(outcome["text"], "remembered");
    let session = outcome["session"]["id"].as_str().unwrap().to_owned();

    let second = delegate(
        "which word did I ask you to remember?",
        Some(session.clone()),
    )
    .await;
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
    let Place {
        server,
        dir,
        project,
    } = Place::new(WRITING, "subagent-plan-agent-e2e-").await;
    // The products as loose as they go: only the agent's mode can hold them back.
    let preset = preset_with(
        dir.path(),
        &server.url(),
        "      permission_mode: bypassPermissions\n",
        "      sandbox: workspace-write\n",
    );
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
