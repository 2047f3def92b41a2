//! Resuming a fork: a fork taken by a parent's delegation tool writes its transcript (the
//! inherited conversation included), its notification names the session, and the session
//! continues outside any tool call with its whole history.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use subagent_core::registry::Registry;
use subagent_core::{SessionRef, StartRequest, StopReason};
use subagent_fork::{ForkConfig, ForkProvider};
use subagent_model::ModelKind;
use subagent_runtime::{FORK_PREAMBLE, SessionStore};
use subagent_session::{Message, load_transcript};
use subagent_test_support::{FakeServer, RecordedRequest};

use super::support::{any_text, fork_it, fork_row, model, notified, parent_config};

const SCENARIO: &str = r#"
- name: fork-child
  match: "FORK-JOB"
  steps:
    - text: "fork report: the word is OMEGA"
- name: parent
  match: "please fork"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "FORK-JOB: find the word", description: "find the word"}
    - text: "Waiting for the fork."
- name: resumed
  match: "which word did you find"
  steps:
    - text: "OMEGA, as I reported"
"#;

/// Whether `request` is the fork's: the preamble is in a text of it (a resumed fork's opens
/// with its earlier conversation).
fn is_fork_request(request: &RecordedRequest) -> bool {
    any_text(request, |t| t.contains(FORK_PREAMBLE))
}

/// The session id a `<task-notification>` of the parent's last request names.
fn notified_session(request: &RecordedRequest) -> String {
    let text = request.messages.last().unwrap().text();
    let start = text.find("<session_id>").unwrap() + "<session_id>".len();
    let end = text.find("</session_id>").unwrap();
    text[start..end].to_owned()
}

#[tokio::test]
async fn a_fork_resumed_outside_a_tool_call_continues_its_whole_conversation() {
    let server = FakeServer::from_yaml(&notified("The fork reported back.", SCENARIO))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let registry = Registry::new();
    registry
        .register(Arc::new(
            ForkProvider::new("fork", ForkConfig::default(), Some(Arc::clone(&model)))
                .with_sessions(SessionStore::new(sessions.path())),
        ))
        .unwrap();
    let registry = Arc::new(registry);
    let config = parent_config(&model, dir.path(), &registry, fork_row());
    let outcome = fork_it(config).await;
    assert_eq!(outcome.text, "The fork reported back.");
    let requests = server.model_requests();
    let id = notified_session(requests.last().unwrap());
    let fork_first = requests.iter().find(|r| is_fork_request(r)).unwrap();
    // The transcript stands alone: the parent's conversation, then the fork's own.
    let transcript = sessions.path().join(format!("{id}.jsonl"));
    let mut expected = fork_first.messages.clone();
    expected.push(Message::assistant("fork report: the word is OMEGA"));
    assert_eq!(
        load_transcript(&transcript).unwrap().log.messages(),
        expected
    );

    // Resumed as `subagent delegate --provider fork --resume ID` does: no parent at all.
    let session = SessionRef {
        provider: "fork".to_owned(),
        id: id.clone(),
        cwd: Some(dir.path().to_path_buf()),
        transcript: None,
    };
    let request = StartRequest::builder("which word did you find?")
        .cwd(dir.path())
        .resume(session)
        .build();
    let resumed = registry
        .start("fork", request)
        .await
        .unwrap()
        .outcome()
        .await;
    assert_eq!(
        (
            resumed.status,
            resumed.text.as_str(),
            resumed.session.map(|s| (s.id, s.transcript))
        ),
        (
            StopReason::Completed,
            "OMEGA, as I reported",
            Some((id, Some(transcript)))
        )
    );
    expected.push(Message::user("which word did you find?"));
    assert_eq!(server.model_requests().last().unwrap().messages, expected);
    assert_eq!(server.violations(), Vec::<String>::new());
}
