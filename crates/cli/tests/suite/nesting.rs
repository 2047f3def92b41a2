//! Nesting is opt-in through the CLI: `subagent run`'s children get no delegation tool and are
//! refused if they call one, unless the preset's tool row sets `max_depth` above 1 or the agent
//! definition lists the delegation tool in `tools:`.

use std::path::Path;

use pretty_assertions::assert_eq;
use subagent_runtime::NESTED_REFUSAL;
use subagent_test_support::parent::{NESTING_CHILD, last_results, nested_refusal};
use subagent_test_support::requests_for;
use subagent_test_support::{FakeServer, RecordedRequest};

use super::support::write_file;
use super::support::{stderr, stdout, subagent};

/// [`NESTING_CHILD`], started by the parents of these tests.
fn nesting() -> String {
    NESTING_CHILD.to_owned()
        + r#"
- name: lead
  match: "start a lead"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "CHILD-NESTS as a lead", subagent_type: lead}
    - text: "parent done"
- name: parent
  match: "start a child"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "CHILD-NESTS go", subagent_type: general-purpose}
    - text: "parent done"
"#
}

/// A preset on the fake server whose one tool row is `row` (YAML lines under `tools:`).
fn preset(dir: &Path, url: &str, row: &str) -> std::path::PathBuf {
    write_file(
        dir,
        "nesting.yaml",
        format!(
            "version: 1\nmax_depth: 3\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: FAKE_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\ntools:\n  - name: subagent\n    provider: spawn\n{row}"
        ),
    )
}

/// Runs `subagent run PROMPT` in `dir` with `preset`; returns the server's requests.
fn run(server: &FakeServer, dir: &Path, preset: &Path, prompt: &str) -> Vec<RecordedRequest> {
    let output = subagent(dir)
        .env("FAKE_KEY", "test-key")
        .args(["run", "--permission-mode", "bypass", "--preset"])
        .arg(preset)
        .arg(prompt)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "parent done\n");
    server.model_requests()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_cannot_delegate_and_is_refused_with_the_code() {
    let server = FakeServer::from_yaml(&nesting()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = preset(dir.path(), &server.url(), "");
    let requests = run(&server, dir.path(), &preset, "start a child");
    let child = requests_for(&requests, "CHILD-NESTS");
    assert_eq!(child.len(), 2);
    assert!(
        !child[0].tool_names().contains(&"subagent".to_owned()),
        "{:?}",
        child[0].tool_names()
    );
    assert_eq!(
        last_results(child[1]),
        nested_refusal("call_nested", NESTED_REFUSAL)
    );
    assert_eq!(requests_for(&requests, "GRANDCHILD-TASK").len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_with_max_depth_two_lets_a_child_delegate() {
    let server = FakeServer::from_yaml(&nesting()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = preset(dir.path(), &server.url(), "    max_depth: 2\n");
    let requests = run(&server, dir.path(), &preset, "start a child");
    let child = requests_for(&requests, "CHILD-NESTS");
    assert!(child[0].tool_names().contains(&"subagent".to_owned()));
    let grandchild = requests_for(&requests, "GRANDCHILD-TASK");
    assert_eq!(grandchild.len(), 1);
    assert!(!grandchild[0].tool_names().contains(&"subagent".to_owned()));
    let results = last_results(child[1]);
    assert!(
        results[0].1.starts_with("grandchild done\n\n<session_id>"),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_definition_listing_the_delegation_tool_may_delegate() {
    let server = FakeServer::from_yaml(&nesting()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let agents = dir.path().join(".subagents/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("lead.md"),
        "---\nname: lead\ndescription: Splits work and hands it on.\ntools: read_file, subagent\n---\nYou lead.\n",
    )
    .unwrap();
    let preset = preset(dir.path(), &server.url(), "");
    let requests = run(&server, dir.path(), &preset, "start a lead");
    let child = requests_for(&requests, "CHILD-NESTS");
    assert_eq!(child[0].tool_names(), ["read_file", "subagent"]);
    let grandchild = requests_for(&requests, "GRANDCHILD-TASK");
    assert_eq!(grandchild.len(), 1);
    assert!(!grandchild[0].tool_names().contains(&"subagent".to_owned()));
}
