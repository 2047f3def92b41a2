//! Permission questions go to the client and its answer is obeyed; cancel stops the run and
//! its children.

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, PromptRequest, StopReason, TextContent,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_core::PermissionMode;
use subagent_test_support::FakeServer;

use super::support::{TestParent, open, prompt, prompt_once, select, with_client};

const EDIT: &str = r#"
- name: parent
  match: "make a file"
  steps:
    - tool_calls:
        - {id: call_touch, name: bash, input: {command: "touch made.txt"}}
    - text: "tried"
"#;

/// A rejected question refuses the call: the command never runs and the call fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_question_refuses_the_tool_call() {
    let (seen, dir) = prompt_once(EDIT, select("reject_once"), "make a file").await;
    let questions = seen.questions();
    assert_eq!(questions.len(), 1);
    let mut question = questions[0].clone();
    question.as_object_mut().unwrap().remove("sessionId");
    assert_eq!(
        question,
        json!({
            "toolCall": {
                "toolCallId": "call_touch",
                "title": "bash: touch made.txt",
                "kind": "execute",
                "status": "pending",
                "content": [{"type": "content", "content": {"type": "text", "text": "$ touch made.txt"}}],
                "rawInput": {"command": "touch made.txt"},
            },
            "options": [
                {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
                {"optionId": "allow_always", "name": "Always allow every bash call in this session", "kind": "allow_always"},
                {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
            ],
        })
    );
    assert!(!dir.path().join("made.txt").exists());
    let result = seen
        .updates()
        .into_iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update")
        .unwrap();
    assert_eq!(
        result,
        json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_touch",
            "status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": "permission denied: approval for bash was refused"}}],
        })
    );
}

const CHANGE: &str = r#"
- name: parent
  match: "change the notes"
  steps:
    - tool_calls:
        - {id: call_edit, name: edit_file, input: {path: "notes.txt", old_string: "one\n", new_string: "two\n"}}
        - {id: call_write, name: write_file, input: {path: "new.txt", content: "fresh\n"}}
    - text: "tried"
"#;

/// An edit is asked with its diff and a write with its content, as diffs the client shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_and_a_write_are_asked_with_their_diffs() {
    let server = FakeServer::from_yaml(CHANGE).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\n").unwrap();
    let parent = Arc::new(TestParent::new(&server, PermissionMode::Default));
    let (_, seen) = with_client(parent, select("reject_once"), async |cx, _| {
        let session = open(&cx, dir.path()).await;
        prompt(&cx, &session, "change the notes").await
    })
    .await;
    let shown = seen.asked("content");
    let at = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    assert_eq!(
        shown,
        [
            json!([{"type": "diff", "path": at("notes.txt"), "oldText": "one\n", "newText": "two\n"}]),
            json!([{"type": "diff", "path": at("new.txt"), "newText": "fresh\n"}]),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "one\n"
    );
}

const CHILD_EDIT: &str = r#"
- name: child
  match: "CHILD-EDIT"
  steps:
    - tool_calls:
        - {id: call_child_touch, name: bash, input: {command: "touch child.txt"}}
    - text: "child made it"
- name: parent
  match: "delegate an edit"
  steps:
    - tool_calls:
        - id: call_sub
          name: subagent
          input: {prompt: "CHILD-EDIT make the file", description: "make the file"}
    - text: "parent done"
"#;

/// A child's question goes to the client too, under the child's call id; allowed, it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_question_is_asked_and_an_allow_is_obeyed() {
    let (seen, dir) = prompt_once(CHILD_EDIT, select("allow_once"), "delegate an edit").await;
    assert_eq!(seen.asked("toolCallId"), [json!("call_child_touch")]);
    assert_eq!(
        seen.asked("title"),
        [json!("bash: touch child.txt (subagent at depth 1)")]
    );
    assert!(dir.path().join("child.txt").exists());
    assert_eq!(seen.message(), "parent done");
}

const LONG_CHILD: &str = r#"
- name: child
  match: "CHILD-WAIT"
  steps:
    - tool_calls:
        - {id: call_wait, name: bash, input: {command: "echo started > ready.fifo; exec sleep 271828"}}
    - text: "never"
- name: parent
  match: "delegate a long job"
  steps:
    - tool_calls:
        - id: call_sub
          name: subagent
          input: {prompt: "CHILD-WAIT wait", description: "a long job"}
    - text: "never"
"#;

/// session/cancel while a child's command runs: the prompt answers cancelled and the command
/// is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_the_run_and_its_children() {
    let server = FakeServer::from_yaml(LONG_CHILD).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ready.fifo");
    subagent_test_support::procs::mkfifo(&fifo);
    let parent = Arc::new(TestParent::new(&server, PermissionMode::Default));
    let (stop, seen) = with_client(parent, select("allow_once"), async |cx, _| {
        let session = open(&cx, dir.path()).await;
        let running = cx
            .send_request(PromptRequest::new(
                session.clone(),
                vec![ContentBlock::Text(TextContent::new("delegate a long job"))],
            ))
            .block_task();
        let running = tokio::spawn(running);
        // The command has started once it wrote to the fifo.
        assert_eq!(
            subagent_test_support::procs::text_from(fifo).await,
            "started\n"
        );
        cx.send_notification(CancelNotification::new(session))
            .unwrap();
        running.await.unwrap().map(|r| r.stop_reason)
    })
    .await;
    assert_eq!(stop.unwrap(), StopReason::Cancelled);
    // The run's cancelled children are stopped as their handles drop: the command goes within
    // moments (the process crate's grace period at most).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !subagent_test_support::procs::live_lines_with("sleep 271828").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the child's command survived the cancel"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let last = seen.updates().into_iter().last().unwrap();
    assert_eq!(
        (&last["toolCallId"], &last["status"]),
        (&json!("call_sub"), &json!("failed")),
        "{last}"
    );
}

const TWICE: &str = r#"
- name: parent
  match: "two files"
  steps:
    - tool_calls:
        - {id: call_one, name: bash, input: {command: "touch one.txt"}}
    - tool_calls:
        - {id: call_two, name: bash, input: {command: "touch two.txt"}}
    - text: "done"
"#;

/// "Always allow" holds for the tool for the rest of the session: the second call is not asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_is_not_asked_again() {
    let (seen, dir) = prompt_once(TWICE, select("allow_always"), "two files").await;
    assert_eq!(seen.asked("toolCallId"), [json!("call_one")]);
    assert!(dir.path().join("one.txt").exists() && dir.path().join("two.txt").exists());
}
