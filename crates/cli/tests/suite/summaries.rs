//! `subagent run` shows a long-running child's progress summary (a spawn row with
//! `summary_interval_secs: 1`) under the child's name while the child is still at work.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use pretty_assertions::assert_eq;
use subagent_test_support::FakeServer;

use super::support::write_file;
use super::support::{Subagent, bin};

const SCENARIO: &str = r#"
- name: summary
  match: "progress summary request"
  steps:
    - text: "Listing the project's files."
- name: child
  match: "CHILD-LONG"
  steps:
    - tool_calls:
        - {id: call_child_ls, name: ls, input: {}}
    - wait_gate: hold
      text: "child done"
- name: parent
  match: "delegate a long job"
  steps:
    - tool_calls:
        - id: call_long
          name: subagent
          input: {description: long job, prompt: "CHILD-LONG look around"}
    - text: "parent done"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_shows_a_running_childs_progress_summary() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = write_file(
        dir.path(),
        "summaries.yaml",
        format!(
            "version: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {}\n  api_key_env: FAKE_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\n    config:\n      summary_interval_secs: 1\ntools:\n  - name: subagent\n    provider: spawn\n",
            server.url()
        ),
    );
    let binary = bin();
    let (lines, status) = tokio::task::block_in_place(|| {
        let mut child = Subagent::new(binary, dir.path())
            .env("TMPDIR", dir.path())
            .fake_key()
            .arg("run")
            .preset(&preset)
            .arg("delegate a long job")
            .command()
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = Vec::new();
        let mut called = false;
        for line in BufReader::new(child.stderr.take().unwrap()).lines() {
            let line = line.unwrap();
            called |= line.contains("] tool ls {}");
            // The child waits at the gate until a summary of it at work is shown (on a slow
            // machine one may come before its first answer: then the next one).
            if called && line.contains("] summary: ") {
                server.gate("hold").open();
            }
            lines.push(line);
        }
        (lines, child.wait().unwrap())
    });
    let err = lines.join("\n");
    assert!(status.success(), "{err}");
    // Plain lines: `[who 1.2s] what`, the time left out.
    let untimed: Vec<String> = lines
        .iter()
        .filter_map(|line| {
            let (who, rest) = line.strip_prefix('[')?.split_once(' ')?;
            let (_, what) = rest.split_once("] ")?;
            Some(format!("[{who}] {what}"))
        })
        .collect();
    let at = |wanted: &str| {
        untimed
            .iter()
            .position(|line| line == wanted)
            .unwrap_or_else(|| panic!("no line {wanted:?} in:\n{err}"))
    };
    let call = at("[spawn] tool ls {}");
    let finished = at("[parent] finished: completed");
    assert!(
        untimed[call..finished]
            .iter()
            .any(|line| line == "[spawn] summary: Listing the project's files."),
        "{err}"
    );
    // Summary requests carry the child's tools, byte for byte (the cached prefix).
    let requests = server.model_requests();
    let summaries: Vec<_> = requests
        .iter()
        .filter(|r| {
            r.scenario
                .as_ref()
                .is_some_and(|(name, _)| name == "summary")
        })
        .collect();
    assert!(!summaries.is_empty(), "{err}");
    let child_tools = requests
        .iter()
        .find(|r| r.scenario.as_ref().is_some_and(|(name, _)| name == "child"))
        .and_then(|r| r.body.as_ref())
        .map(|body| body["tools"].to_string());
    for summary in summaries {
        assert_eq!(
            summary.body.as_ref().map(|body| body["tools"].to_string()),
            child_tools
        );
    }
}
