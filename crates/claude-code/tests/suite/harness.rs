//! What every end-to-end test needs: the installed CLI, a fake model server, and a sandbox of
//! temp dirs (HOME, CLAUDE_CONFIG_DIR, CLAUDE_CODE_TMPDIR, a project outside any git repo)
//! passed to claude through the provider's config, never through this process's environment.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use subagent_claude_code::{ClaudeCodeConfig, ClaudeCodeProvider};
use subagent_core::{Outcome, Run, RunEvent, StartRequest, StartRequestBuilder};
use subagent_test_support::{FakeServer, RecordedRequest};
use tempfile::TempDir;

/// The scenarios of the suite: each test picks one by a marker word in its prompt.
pub(super) const SCENARIOS: &str = r#"
- name: bash
  match: "BASH-ROUND-TRIP"
  steps:
    - text: "Running it."
      tool_calls:
        - name: Bash
          input: {command: "echo hello-from-bash > out.txt && cat out.txt", description: "write a file"}
    - text: "The command printed hello-from-bash."
- name: schema
  match: "SCHEMA-WIDGET"
  steps:
    - tool_calls:
        - name: StructuredOutput
          input: {name: widget, n: 3}
    - text: "done"
- name: schema-ignored
  match: "SCHEMA-IGNORED"
  steps:
    - text: "just text"
    - text: "still just text"
- name: turns
  match: "MAX-TURNS"
  steps:
    - tool_calls: [{name: Bash, input: {command: "true", description: "one"}}]
    - tool_calls: [{name: Bash, input: {command: "true", description: "two"}}]
    - text: "never reached"
- name: cancel
  match: "CANCEL-MID-TOOL"
  steps:
    - tool_calls:
        - name: Bash
          input: {command: "sleep 3017 & echo $! > started.fifo; wait", description: "wait forever"}
    - text: "should not get here"
- name: model-error
  match: "MODEL-ERROR"
  steps:
    - error: {status: 400, type: invalid_request_error, message: "fake bad request"}
- name: delegate
  match: "DELEGATE-NESTED"
  steps:
    - tool_calls:
        - name: Agent
          input: {description: "sub task", prompt: "SUBTASK-XYZ answer with the number", subagent_type: "general-purpose"}
    - text: "parent done"
- name: subtask
  match: "SUBTASK-XYZ"
  steps:
    - tool_calls: [{name: Bash, input: {command: "echo nested-bash", description: "nested"}}]
    - text: "sub result 42"
- name: nest-top
  match: "NEST-TOP"
  steps:
    - tool_calls: [{name: Agent, input: {description: "level one", prompt: "NEST-LEVEL-ONE go", subagent_type: "general-purpose"}}]
    - text: "top done"
- name: nest-one
  match: "NEST-LEVEL-ONE"
  steps:
    - tool_calls: [{name: Agent, input: {description: "level two", prompt: "NEST-LEVEL-TWO go", subagent_type: "general-purpose"}}]
    - text: "one done"
- name: nest-two
  match: "NEST-LEVEL-TWO"
  steps: [{text: "two reached"}]
- name: remember
  match: "REMEMBER"
  steps: [{text: "I will remember 42."}]
- name: recall
  match: "RECALL"
  steps: [{text: "You said 42."}]
- name: hello
  match: ".*"
  steps: [{text: "hi from fake"}]
"#;

/// The installed claude (`cargo xtask install-clis`).
pub(super) fn claude_binary() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let binary = workspace.join("target/clis/node_modules/.bin/claude");
    assert!(
        binary.is_file(),
        "the e2e tests need the claude CLI at {}; install it with `cargo xtask install-clis` or \
         `npm install --prefix target/clis @anthropic-ai/claude-code@2.1.197`",
        binary.display()
    );
    binary
}

/// Whether `dir` is inside a git work tree: a `.git` directory with a `HEAD`, or a `.git` file
/// (a linked worktree), in it or any ancestor.
pub(super) fn inside_git_repo(dir: &Path) -> bool {
    dir.ancestors()
        .any(|d| d.join(".git/HEAD").is_file() || d.join(".git").is_file())
}

/// A fake server plus the temp dirs of one test.
pub(super) struct Harness {
    pub server: FakeServer,
    root: TempDir,
}

impl Harness {
    pub(super) async fn new() -> Self {
        Self::with_scenarios(|_| SCENARIOS.to_owned()).await
    }

    /// A harness whose fake model plays the scenarios `yaml` writes for the project directory
    /// (a tool call that names a file there needs its absolute path).
    pub(super) async fn with_scenarios(yaml: impl FnOnce(&Path) -> String) -> Self {
        let root = subagent_test_support::sandbox::dirs(
            "subagent-claude-e2e-",
            &["home", "home/.claude", "tmp", "project"],
        );
        let server = FakeServer::from_yaml(&yaml(&root.path().join("project")))
            .await
            .unwrap();
        let harness = Self { server, root };
        assert!(
            !inside_git_repo(&harness.project()),
            "the project dir {} must be outside any git repo",
            harness.project().display()
        );
        harness
    }

    pub(super) fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// The config every test starts from.
    pub(super) fn config(&self) -> ClaudeCodeConfig {
        let dir = |name: &str| self.root.path().join(name).display().to_string();
        ClaudeCodeConfig {
            binary: claude_binary(),
            env: [
                ("HOME".to_owned(), dir("home")),
                ("CLAUDE_CONFIG_DIR".to_owned(), dir("home/.claude")),
                ("CLAUDE_CODE_TMPDIR".to_owned(), dir("tmp")),
                ("ANTHROPIC_BASE_URL".to_owned(), self.server.url()),
                ("ANTHROPIC_API_KEY".to_owned(), "dummy".to_owned()),
            ]
            .into(),
            grace_ms: 5000,
            idle_timeout_secs: Some(60),
            timeout_secs: Some(120),
            ..ClaudeCodeConfig::default()
        }
    }

    pub(super) fn provider(
        &self,
        adjust: impl FnOnce(&mut ClaudeCodeConfig),
    ) -> ClaudeCodeProvider {
        let mut config = self.config();
        adjust(&mut config);
        ClaudeCodeProvider::new("claude", config).unwrap()
    }

    pub(super) fn request(&self, prompt: &str) -> StartRequestBuilder {
        StartRequest::builder(prompt).cwd(self.project())
    }

    /// The model requests so far (`POST /v1/messages`).
    pub(super) fn model_requests(&self) -> Vec<RecordedRequest> {
        self.server.model_requests()
    }
}

/// Collects every event and the outcome of a run (which must end within 120 s).
pub(super) async fn finish(run: Run) -> (Vec<RunEvent>, Outcome) {
    subagent_test_support::runs::finish_within(run, Duration::from_secs(120)).await
}

/// The system prompt text of a recorded request.
pub(super) fn system_text(request: &RecordedRequest) -> String {
    match request.body.as_ref().and_then(|b| b.get("system")) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Live processes whose cwd is `dir` or below it, or whose command line contains `needle`.
pub(super) fn live_processes(dir: &Path, needle: &str) -> Vec<String> {
    subagent_test_support::procs::live()
        .iter()
        .filter(|p| p.runs_in(dir) || p.cmdline.contains(needle))
        .map(subagent_test_support::procs::Proc::line)
        .collect()
}

/// The texts of the run's top-level `Text` events.
pub(super) fn texts(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Text {
                text,
                parent_tool_use_id: None,
            } => Some(text.clone()),
            _ => None,
        })
        .collect()
}
