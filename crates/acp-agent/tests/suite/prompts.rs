//! Prompts: streamed text, a conversation that goes on, a delegation as a tool call, stop
//! reasons.

use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{InitializeRequest, StopReason};
use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_core::PermissionMode;
use subagent_test_support::FakeServer;

use super::support::{TestParent, open, prompt, prompt_once, select, with_client};

const CHAT: &str = r#"
- name: second
  match: "what did I say"
  steps:
    - text: "you said hello"
- name: first
  match: "say hello"
  steps:
    - thinking: "a greeting is due"
      text: "hello there"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_is_honest_and_a_second_prompt_continues_the_conversation() {
    let server = FakeServer::from_yaml(CHAT).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let parent = Arc::new(TestParent::new(&server, PermissionMode::Default));
    let ((init, first, first_message, second), seen) =
        with_client(parent, select("reject_once"), async |cx, seen| {
            let init = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await
                .unwrap();
            let session = open(&cx, dir.path()).await;
            let first = prompt(&cx, &session, "say hello").await;
            let first_message = seen.message();
            let second = prompt(&cx, &session, "what did I say?").await;
            (
                serde_json::to_value(&init).unwrap(),
                first,
                first_message,
                second,
            )
        })
        .await;
    assert_eq!(
        init,
        json!({
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": false,
                "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
                "mcpCapabilities": {"http": false, "sse": false},
                "sessionCapabilities": {},
                "auth": {},
            },
            "authMethods": [],
            "agentInfo": {"name": "subagent", "version": env!("CARGO_PKG_VERSION")},
        })
    );
    assert_eq!(
        (first, second),
        (Ok(StopReason::EndTurn), Ok(StopReason::EndTurn))
    );
    assert_eq!(first_message, "hello there");
    assert_eq!(seen.message(), "hello thereyou said hello");
    let thoughts: String = seen
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "agent_thought_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(thoughts, "a greeting is due");
    // The second prompt's request carries the first exchange.
    let requests = server.model_requests();
    let texts: Vec<String> = requests
        .last()
        .unwrap()
        .messages
        .iter()
        .map(|m| m.text())
        .collect();
    assert_eq!(texts, ["say hello", "hello there", "what did I say?"]);
    assert_eq!(server.violations(), Vec::<String>::new());
}

const DELEGATE: &str = r#"
- name: child
  match: "CHILD-TASK"
  steps:
    - tool_calls:
        - {id: call_ls, name: ls, input: {path: "."}}
    - text: "child says 42"
- name: parent
  match: "please delegate"
  steps:
    - tool_calls:
        - id: call_sub
          name: subagent
          input: {prompt: "CHILD-TASK count the things", description: "count the things"}
    - text: "parent done"
"#;

/// The delegation is one tool call (kind think, titled by its description) whose updates
/// carry the child's progress, then its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegation_is_a_tool_call_carrying_the_child_progress() {
    let (seen, _dir) = prompt_once(DELEGATE, select("reject_once"), "please delegate").await;
    let calls: Vec<_> = seen
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] != "agent_message_chunk")
        .collect();
    let first = &calls[0];
    assert_eq!(
        first,
        &json!({
            "sessionUpdate": "tool_call",
            "toolCallId": "call_sub",
            "title": "count the things",
            "kind": "think",
            "rawInput": {"prompt": "CHILD-TASK count the things", "description": "count the things"},
        })
    );
    let progress: Vec<_> = calls[1..calls.len() - 1]
        .iter()
        .map(|u| {
            assert_eq!(
                (&u["toolCallId"], &u["status"]),
                (&json!("call_sub"), &json!("in_progress"))
            );
            u["content"][0]["content"]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        progress.first().map(String::as_str),
        Some("→ ls: ."),
        "{progress:#?}"
    );
    assert_eq!(
        progress.last().map(String::as_str),
        Some("✓ ls: .\n\nchild says 42"),
        "{progress:#?}"
    );
    let last = calls.last().unwrap();
    assert_eq!(
        (&last["sessionUpdate"], &last["toolCallId"], &last["status"]),
        (
            &json!("tool_call_update"),
            &json!("call_sub"),
            &json!("completed")
        )
    );
    let result = last["content"][0]["content"]["text"].as_str().unwrap();
    assert!(result.starts_with("child says 42"), "{result}");
    assert_eq!(seen.message(), "parent done");
    // Nothing was asked: ls needs no approval.
    assert_eq!(seen.questions(), Vec::<serde_json::Value>::new());
}

const LOOP: &str = r#"
- name: parent
  match: "keep going"
  steps:
    - tool_calls:
        - {id: call_1, name: ls, input: {path: "."}}
    - tool_calls:
        - {id: call_2, name: ls, input: {path: "."}}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_limit_is_max_turn_requests() {
    let server = FakeServer::from_yaml(LOOP).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut parent = TestParent::new(&server, PermissionMode::Default);
    parent.max_turns = Some(1);
    let (stop, _) = with_client(Arc::new(parent), select("reject_once"), async |cx, _| {
        let session = open(&cx, dir.path()).await;
        prompt(&cx, &session, "keep going").await
    })
    .await;
    assert_eq!(stop, Ok(StopReason::MaxTurnRequests));
}

/// Fails the build it is told to, else builds `TestParent`'s parent.
struct FailNext {
    inner: TestParent,
    fail: std::sync::atomic::AtomicBool,
}

impl subagent_acp_agent::ParentFactory for FailNext {
    fn build(
        &self,
        cwd: &std::path::Path,
        broker: Arc<dyn subagent_runtime::PermissionBroker>,
        session: &subagent_acp_agent::SessionTools,
    ) -> Result<subagent_runtime::Agent, String> {
        if self.fail.swap(false, std::sync::atomic::Ordering::SeqCst) {
            return Err("the preset went away".to_owned());
        }
        self.inner.build(cwd, broker, session)
    }
}

/// A prompt whose parent cannot be built is refused, and the conversation is not lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_that_cannot_be_built_keeps_the_conversation() {
    let server = FakeServer::from_yaml(CHAT).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let parent = Arc::new(FailNext {
        inner: TestParent::new(&server, PermissionMode::Default),
        fail: std::sync::atomic::AtomicBool::new(false),
    });
    let factory = Arc::clone(&parent);
    let ((first, refused, third), _) =
        with_client(factory, select("reject_once"), async |cx, _| {
            let session = open(&cx, dir.path()).await;
            let first = prompt(&cx, &session, "say hello").await;
            parent.fail.store(true, std::sync::atomic::Ordering::SeqCst);
            let refused = prompt(&cx, &session, "say hello again").await.unwrap_err();
            let third = prompt(&cx, &session, "what did I say?").await;
            (first, refused, third)
        })
        .await;
    assert_eq!(first, Ok(StopReason::EndTurn));
    assert_eq!(
        (&refused["data"]["code"], &refused["data"]["message"]),
        (&json!("INVALID_ARGUMENTS"), &json!("the preset went away"))
    );
    assert_eq!(third, Ok(StopReason::EndTurn));
    let texts: Vec<String> = server
        .model_requests()
        .last()
        .unwrap()
        .messages
        .iter()
        .map(|m| m.text())
        .collect();
    assert_eq!(texts, ["say hello", "hello there", "what did I say?"]);
}
