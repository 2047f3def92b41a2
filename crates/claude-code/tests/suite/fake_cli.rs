//! The run's end against a stand-in `claude` (a shell script printing stream-json): races that
//! the real CLI makes too short to hit on purpose.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_claude_code::{ClaudeCodeConfig, ClaudeCodeProvider};
use subagent_core::{Outcome, RunEvent, StartRequest, StopReason, SubagentProvider};
use subagent_test_support::runs;

fn fake_claude(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("claude");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The provider `cc` on the stand-in `claude` at `binary`, killed 2 s after its cancel.
fn stand_in(binary: PathBuf) -> ClaudeCodeProvider {
    ClaudeCodeProvider::new(
        "cc",
        ClaudeCodeConfig {
            binary,
            grace_ms: 2000,
            ..ClaudeCodeConfig::default()
        },
    )
    .unwrap()
}

/// Runs a stand-in `claude` of `body` in `dir`, cancels the run at the first event `at` holds
/// for, and returns the outcome (within 30 s).
async fn cancel_at(dir: &Path, body: &str, at: impl Fn(&RunEvent) -> bool) -> Outcome {
    let binary = fake_claude(dir, body);
    let provider = stand_in(binary);
    let run = provider.start(StartRequest::new("hi", dir)).await.unwrap();
    runs::cancel_at(run, at, Duration::from_secs(30)).await
}

#[tokio::test]
async fn a_cancel_after_the_success_result_keeps_the_completed_outcome() {
    // claude printed its successful result and is still on its way out when the cancel lands.
    let dir = tempfile::tempdir().unwrap();
    // The result's usage is the last event before the end.
    let outcome = cancel_at(
        dir.path(),
        r#"cat >/dev/null
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"all done","session_id":"s1","usage":{"input_tokens":3,"output_tokens":2}}'
exec sleep 300"#,
        |event| matches!(event, RunEvent::Usage { .. }),
    )
    .await;
    assert_eq!(
        (outcome.status, outcome.text.as_str(), outcome.diagnostic),
        (StopReason::Completed, "all done", None)
    );
}

#[tokio::test]
async fn a_cancel_before_the_result_is_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = cancel_at(
        dir.path(),
        r#"cat >/dev/null
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
exec sleep 300"#,
        |event| matches!(event, RunEvent::Progress { .. }),
    )
    .await;
    assert_eq!(outcome.status, StopReason::Cancelled);
}

/// The stdio control protocol against a stand-in claude: the prompt arrives as a stream-json
/// message; a question claude cancels (`control_cancel_request`: its own hook decided first) is
/// never answered (its asker never answers either: nothing waits on it); another question's
/// answer comes back on stdin; and stdin closes once the `result` is out.
#[tokio::test]
async fn questions_answers_and_a_cancelled_question() {
    use std::sync::Arc;

    use subagent_core::{Asker, ParentAsker, ToolAnswer, ToolQuestion};

    /// `Bash` questions wait forever; `Write` questions are denied.
    struct Parent;
    #[async_trait::async_trait]
    impl ParentAsker for Parent {
        async fn ask(&self, question: ToolQuestion) -> ToolAnswer {
            if question.tool == "Bash" {
                std::future::pending::<()>().await;
            }
            ToolAnswer::Deny {
                message: format!("no {}", question.input["file_path"].as_str().unwrap_or("?")),
            }
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let binary = fake_claude(
        dir.path(),
        r#"read -r first
echo "$first" > first.json
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
echo '{"type":"control_request","request_id":"q1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t1"}}'
echo '{"type":"control_cancel_request","request_id":"q1"}'
echo '{"type":"control_request","request_id":"q2","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"x.txt"},"tool_use_id":"t2"}}'
read -r answer
echo "$answer" > answer.json
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s1","usage":{"input_tokens":1,"output_tokens":1}}'
cat > rest.txt"#,
    );
    let provider = stand_in(binary);
    let mut request = StartRequest::new("hi there", dir.path());
    request.parent.asker = Some(Asker(Arc::new(Parent)));
    let run = provider.start(request).await.unwrap();
    let (_, outcome) = runs::finish_within(run, Duration::from_secs(30)).await;
    assert_eq!(
        (outcome.status, outcome.text.as_str()),
        (StopReason::Completed, "done")
    );
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(name)).unwrap()).unwrap()
    };
    assert_eq!(
        read("first.json"),
        serde_json::json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hi there"}]}, "parent_tool_use_id": null, "session_id": ""})
    );
    assert_eq!(
        read("answer.json"),
        serde_json::json!({"type": "control_response", "response": {"subtype": "success", "request_id": "q2", "response": {"behavior": "deny", "message": "no x.txt"}}})
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("rest.txt")).unwrap(),
        ""
    );
}
