//! Transcripts: a run given a session store writes its conversation there and its outcome names
//! the session; a resumed run continues it; a failed write is reported and the run goes on.

use futures::StreamExt;
use pretty_assertions::assert_eq;
use subagent_core::{CancellationToken, ErrorCode, RunEvent, SessionRef, StopReason};
use subagent_runtime::{Agent, SessionStore};
use subagent_session::{ContentBlock, Message, Role, load_transcript};
use subagent_test_support::FakeServer;

use super::support::{config, config_with_sessions, transcript_texts};

const SCENARIO: &str = r#"
- match: "list the files"
  steps:
    - tool_calls: [{name: ls, input: {path: "."}}]
    - text: "one file"
- match: "how many"
  steps:
    - text: "I said one"
"#;

#[tokio::test]
async fn a_run_writes_its_transcript_and_its_outcome_names_the_session() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let (config, store) = config_with_sessions(
        &server,
        dir.path(),
        &sessions.path().join("nested/sessions"),
    );
    let run = Agent::new(config)
        .unwrap()
        .start_prompt("list the files", CancellationToken::new());
    let id = run.id().to_string();
    let outcome = run.outcome().await;
    let path = store.transcript(&id).unwrap();
    assert_eq!(
        (outcome.status, outcome.session),
        (
            StopReason::Completed,
            Some(SessionRef {
                provider: "runtime".to_owned(),
                id: id.clone(),
                cwd: Some(dir.path().to_path_buf()),
                transcript: Some(path.clone()),
            })
        )
    );
    // Two turns: the prompt and the ls call, the result and the answer.
    assert_eq!(
        transcript_texts(&path),
        vec![
            (Role::User, "list the files".to_owned()),
            (Role::Assistant, String::new()),
            (Role::User, String::new()),
            (Role::Assistant, "one file".to_owned()),
        ]
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(store.dir()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "the sessions directory is private");
}

#[tokio::test]
async fn a_resumed_run_sends_the_earlier_conversation_and_appends_to_the_same_session() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let (config, store) = config_with_sessions(&server, dir.path(), sessions.path());
    let first = Agent::new(config.clone())
        .unwrap()
        .start_prompt("list the files", CancellationToken::new())
        .outcome()
        .await;
    let session = first.session.unwrap();
    let before = load_transcript(session.transcript.as_deref().unwrap())
        .unwrap()
        .log;

    let resumed = store
        .resume("runtime", &session, vec![ContentBlock::text("how many?")])
        .await
        .unwrap();
    let request = subagent_core::StartRequest::new("how many?", dir.path());
    let outcome = Agent::new(config)
        .unwrap()
        .resuming(resumed.session)
        .start("runtime", &request, resumed.seed)
        .outcome()
        .await;
    assert_eq!(
        (outcome.status, outcome.text.as_str(), outcome.session),
        (StopReason::Completed, "I said one", Some(session.clone()))
    );
    // The resumed run's one request carries the whole first conversation, then the prompt.
    let asked = server.model_requests().pop().unwrap();
    let mut expected = before.messages();
    expected.push(Message::user("how many?"));
    assert_eq!(asked.messages, expected);
    // The transcript is the first run's events followed by the second's.
    let after = load_transcript(session.transcript.as_deref().unwrap())
        .unwrap()
        .log;
    assert_eq!(after.truncated(before.len()), before);
    let mut continued = before.messages();
    continued.extend([Message::user("how many?"), Message::assistant("I said one")]);
    assert_eq!(after.messages(), continued);
}

#[tokio::test]
async fn a_session_id_that_names_no_transcript_is_not_resumable() {
    let sessions = tempfile::tempdir().unwrap();
    let store = SessionStore::new(sessions.path());
    let refuse = |id: &str| {
        let store = store.clone();
        let session = SessionRef {
            provider: "runtime".to_owned(),
            id: id.to_owned(),
            cwd: None,
            transcript: None,
        };
        async move {
            let error = store
                .resume("runtime", &session, Vec::new())
                .await
                .unwrap_err();
            (error.code(), error.to_string())
        }
    };
    let unknown = uuid_like();
    assert_eq!(
        refuse(&unknown).await,
        (
            ErrorCode::NotResumable,
            format!(
                "run cannot be resumed: no session {unknown} in {}: no run of this provider wrote it there",
                sessions.path().display()
            )
        )
    );
    assert_eq!(
        refuse("../../etc/passwd").await,
        (
            ErrorCode::NotResumable,
            "run cannot be resumed: no session \"../../etc/passwd\": a session id is the `session.id` of an earlier outcome (a UUID)".to_owned()
        )
    );
}

fn uuid_like() -> String {
    subagent_core::RunId::new().to_string()
}

#[tokio::test]
async fn a_failed_write_is_reported_and_the_run_goes_on() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The sessions directory would be inside a regular file: it cannot be created.
    let blocker = dir.path().join("not-a-directory");
    std::fs::write(&blocker, "x").unwrap();
    let mut config = config(&server, dir.path());
    config.sessions = Some(SessionStore::new(blocker.join("sessions")));
    let mut run = Agent::new(config)
        .unwrap()
        .start_prompt("list the files", CancellationToken::new());
    let events = run.take_events().unwrap();
    let outcome = run.outcome().await;
    let events: Vec<RunEvent> = events.collect().await;
    assert_eq!(
        (outcome.status, outcome.text.as_str(), outcome.session),
        (StopReason::Completed, "one file", None)
    );
    assert_eq!(
        subagent_test_support::runs::progress(&events),
        vec![format!(
            "transcript not written, the run cannot be resumed: {}: Not a directory (os error 20)",
            blocker.join("sessions").display()
        )]
    );
}

#[tokio::test]
async fn without_a_store_nothing_is_written_and_no_session_is_named() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outcome = super::support::run(config(&server, dir.path()), "list the files").await;
    assert_eq!(
        (outcome.status, outcome.session),
        (StopReason::Completed, None)
    );
}

#[tokio::test]
async fn a_session_open_for_a_run_cannot_be_resumed_twice_at_once() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let (config, store) = config_with_sessions(&server, dir.path(), sessions.path());
    let session = super::support::run(config, "list the files")
        .await
        .session
        .unwrap();
    let held = store.resume("runtime", &session, Vec::new()).await.unwrap();
    let error = store
        .resume("runtime", &session, Vec::new())
        .await
        .unwrap_err();
    assert_eq!(
        (error.code(), error.to_string()),
        (
            ErrorCode::NotResumable,
            format!(
                "run cannot be resumed: session {} is in use: the run writing it has not ended",
                session.id
            )
        )
    );
    // Released with the open session, it can be resumed again; another provider's name cannot.
    drop(held);
    store.resume("runtime", &session, Vec::new()).await.unwrap();
    let error = store
        .resume("spawn", &session, Vec::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "run cannot be resumed: session {} is a session of provider \"runtime\", not \"spawn\"",
            session.id
        )
    );
}
