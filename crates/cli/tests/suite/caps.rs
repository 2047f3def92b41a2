//! The preset's byte caps through the real binary: a model answer past `model.max_answer_bytes`
//! ends `subagent run --json` `failed` with `ANSWER_TOO_LARGE` (the answer's connection closed);
//! tool results past `max_tool_result_bytes` reach the model cut with a marker, the parent's and
//! its children's (who inherit the cap), a subagent's result (its session id and usage kept) and
//! a background subagent's notification.

use pretty_assertions::assert_eq;
use subagent_session::ContentBlock;
use subagent_test_support::FakeServer;

use super::support::write_file;
use super::support::{json_lines, stderr, subagent};

/// A preset on the fake server at `url` with the given caps.
fn capped_preset(dir: &std::path::Path, url: &str) -> std::path::PathBuf {
    write_file(
        dir,
        "capped.yaml",
        format!(
            "version: 1\nmax_depth: 2\nmax_tool_result_bytes: 3000\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: FAKE_KEY\n  retry: {{max_retries: 0}}\n  timeouts: {{total_ms: 120000}}\n  max_answer_bytes: 65536\nproviders:\n  - name: spawn\n    kind: spawn\ntools:\n  - name: subagent\n    provider: spawn\n"
        ),
    )
}

const ENDLESS: &str = r#"
- match: "talk forever"
  steps:
    - text: "Here it comes:"
      repeat: {text: "bla "}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_past_the_presets_cap_ends_the_run_answer_too_large() {
    let server = FakeServer::from_yaml(ENDLESS).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = capped_preset(dir.path(), &server.url());
    let output = tokio::task::block_in_place(|| {
        subagent(dir.path())
            .env("FAKE_KEY", "test-key")
            .args(["run", "--json", "--preset"])
            .arg(&preset)
            .arg("talk forever")
            .output()
            .unwrap()
    });
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    assert_eq!(
        (&outcome["type"], &outcome["status"], &outcome["diagnostic"]),
        (
            &"outcome".into(),
            &"failed".into(),
            &"ANSWER_TOO_LARGE: the model's answer passed 65536 bytes of text, thinking and tool calls (the model's max_answer_bytes) and its stream was stopped; ask for a shorter answer, or raise the cap".into()
        )
    );
    // The answer's stream was dropped, not read to a timeout.
    server.wait_dropped(1).await;
    assert_eq!(server.dropped_streams(), 1);
}

const DELEGATE: &str = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "noted"
- name: child
  match: "CHILD-LONG"
  steps:
    - tool_calls:
        - {id: child_read, name: read_file, input: {path: "big.txt", limit: 5000}}
    - text: "child:"
      repeat: {bytes: 10000}
- name: background child
  match: "CHILD-BG"
  steps:
    - text: "bg:"
      repeat: {text: "y", bytes: 10000}
- name: parent
  match: "read and delegate"
  steps:
    - tool_calls:
        - {id: call_read, name: read_file, input: {path: "big.txt", limit: 5000}}
        - id: call_child
          name: subagent
          input: {description: long child, prompt: "CHILD-LONG read big.txt and answer at length"}
    - tool_calls:
        - id: call_bg
          name: subagent
          input: {description: bg child, prompt: "CHILD-BG answer at length", run_in_background: true}
    - text: "waiting"
"#;

const READ_HINT: &str = " bytes cut here: a tool result keeps at most 3000 bytes. To see the rest, read fewer lines at a time with offset and limit.]";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_results_reach_the_model_cut_with_a_marker_in_parent_and_children() {
    let server = FakeServer::from_yaml(DELEGATE).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let big: String = (1..=3000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), big).unwrap();
    let preset = capped_preset(dir.path(), &server.url());
    let output = tokio::task::block_in_place(|| {
        subagent(dir.path())
            .env("FAKE_KEY", "test-key")
            .env("TMPDIR", dir.path())
            .args(["run", "--json", "--preset"])
            .arg(&preset)
            .arg("read and delegate")
            .output()
            .unwrap()
    });
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    assert_eq!(outcome["status"], "completed", "{outcome}");
    // Every tool result and text block that reached the model, by call id.
    let blocks: Vec<ContentBlock> = server
        .model_requests()
        .iter()
        .flat_map(|request| request.messages.iter())
        .flat_map(|message| message.content.iter().cloned())
        .collect();
    let result = |id: &str| {
        blocks
            .iter()
            .find_map(|block| match block {
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } if tool_use_id == id => Some(content.to_text()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no result for {id}"))
    };
    // The parent's read and its child's (the child inherits the parent's cap).
    for id in ["call_read", "child_read"] {
        let text = result(id);
        assert!(text.starts_with("     1\tline 1\n"), "{id}: {text}");
        assert!(text.contains(READ_HINT), "{id}: {text}");
        assert!(text.ends_with("  3000\tline 3000\n"), "{id}: {text}");
        assert!(text.len() < 3000 + 200, "{id}: {}", text.len());
    }
    // The child's long answer: cut, with the delegation's advice; its head is the answer's,
    // and its tail still names the session and the usage.
    let child = result("call_child");
    assert!(child.starts_with("child:xxxx"), "{child}");
    assert!(
        child.contains(" bytes cut here: a tool result keeps at most 3000 bytes. To see the rest, resume the subagent's session (the resume argument, with the session id at the end of this result) and ask it for the part you need, or ask for a shorter answer, or for long results written to a file.]"),
        "{child}"
    );
    assert!(child.contains("\n<session_id>"), "{child}");
    assert!(child.contains("\n<usage>input_tokens: "), "{child}");
    // So `--json` still reads the child's session from the result.
    let delegation = outcome["delegations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["input"]["description"] == "long child")
        .unwrap()
        .clone();
    assert!(
        delegation["child"]["session_id"].is_string(),
        "{delegation}"
    );
    // The background child's notification: cut, head and tail kept.
    let notification = blocks
        .iter()
        .find_map(|block| match block {
            ContentBlock::Text { text } if text.starts_with("<task-notification>") => {
                Some(text.clone())
            }
            _ => None,
        })
        .unwrap();
    assert!(notification.contains("<result>bg:yyyy"), "{notification}");
    assert!(
        notification.contains(" bytes cut here: a tool result keeps at most 3000 bytes. To see the rest, read the task's output file (named above) in parts, with bash (`sed -n`, `tail -c`); a subagent's session can be resumed (its session id above) to ask for the part you need.]"),
        "{notification}"
    );
    assert!(
        notification.ends_with("</usage>\n</task-notification>"),
        "{notification}"
    );
}
