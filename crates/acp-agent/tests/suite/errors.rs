//! What the server refuses, with our stable codes.

use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, ImageContent, InitializeRequest, McpServer, McpServerStdio, NewSessionRequest,
    PromptRequest,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_core::PermissionMode;
use subagent_test_support::FakeServer;

use super::support::{TestParent, open, prompt, select, with_client};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_servers_images_and_unknown_sessions_are_refused() {
    let server = FakeServer::from_yaml("[]").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let parent = Arc::new(TestParent::new(&server, PermissionMode::Default));
    let (errors, _) = with_client(parent, select("reject_once"), async |cx, _| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await
            .unwrap();
        let mcp = cx
            .send_request(
                NewSessionRequest::new(dir.path())
                    .mcp_servers(vec![McpServer::Stdio(McpServerStdio::new("x", "/bin/x"))]),
            )
            .block_task()
            .await
            .unwrap_err();
        let relative = cx
            .send_request(NewSessionRequest::new("relative/dir"))
            .block_task()
            .await
            .unwrap_err();
        let session = open(&cx, dir.path()).await;
        let image = cx
            .send_request(PromptRequest::new(
                session,
                vec![ContentBlock::Image(ImageContent::new("aGk=", "image/png"))],
            ))
            .block_task()
            .await
            .unwrap_err();
        let unknown = prompt(&cx, "no-such-session", "hi").await.unwrap_err();
        [mcp, relative, image]
            .map(|e| serde_json::to_value(e).unwrap())
            .into_iter()
            .chain([unknown])
            .map(|e| (e["code"].clone(), e["data"]["code"].clone()))
            .collect::<Vec<_>>()
    })
    .await;
    let invalid = (json!(-32602), json!("INVALID_ARGUMENTS"));
    assert_eq!(
        errors,
        vec![invalid.clone(), invalid.clone(), invalid.clone(), invalid]
    );
}

const FAILING: &str = r#"
- name: fine
  match: "then work"
  steps:
    - text: "working"
- name: broken
  match: "break"
  steps:
    - error: {status: 400, type: invalid_request_error, message: "the request is bad"}
"#;

/// A failed run answers the prompt with an error saying so; the session stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_is_an_error_and_the_session_goes_on() {
    let server = FakeServer::from_yaml(FAILING).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let parent = Arc::new(TestParent::new(&server, PermissionMode::Default));
    let ((failed, next), _) = with_client(parent, select("reject_once"), async |cx, _| {
        let session = open(&cx, dir.path()).await;
        let failed = prompt(&cx, &session, "break").await.unwrap_err();
        let next = prompt(&cx, &session, "then work").await;
        (failed, next)
    })
    .await;
    assert_eq!(
        (&failed["code"], &failed["data"]["status"]),
        (&json!(-32603), &json!("failed"))
    );
    let message = failed["data"]["message"].as_str().unwrap();
    assert!(message.contains("the request is bad"), "{message}");
    assert_eq!(
        next,
        Ok(agent_client_protocol::v1::schema::StopReason::EndTurn)
    );
}
