//! Resuming spawn sessions through the Rust API: the resumed run's first model request carries
//! the earlier conversation, a torn transcript line (a run killed mid-write) is cut off, an
//! unknown session is `NOT_RESUMABLE`, and the delegation tool's `resume` argument continues a
//! session (or is refused, before anything starts, by a provider that cannot resume).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use subagent_core::registry::Registry;
use subagent_core::{
    Error, ErrorCode, Outcome, RunEvent, RunId, SessionRef, StartRequest, StopReason,
};
use subagent_model::{Model, ModelKind};
use subagent_runtime::{DelegationToolConfig, SessionStore};
use subagent_session::{Message, load_transcript};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::FakeServer;

use super::support::run;
use super::support::{agents, last_results, model, parent_config};

const CHILD: &str = r#"
- match: "remember the word BETA"
  steps: [{text: "remembered"}]
- match: "which word"
  steps: [{text: "you asked me to remember BETA"}]
"#;

fn registry(model: &Arc<dyn Model>, sessions: Option<&Path>) -> Arc<Registry> {
    let mut provider = SpawnProvider::new("spawn", Arc::clone(model), SpawnConfig::default());
    if let Some(dir) = sessions {
        provider = provider.with_sessions(SessionStore::new(dir));
    }
    let registry = Registry::new();
    registry.register(Arc::new(provider)).unwrap();
    Arc::new(registry)
}

async fn delegate(
    registry: &Registry,
    cwd: &Path,
    prompt: &str,
    resume: Option<SessionRef>,
) -> (Outcome, Vec<RunEvent>) {
    let mut builder = StartRequest::builder(prompt).cwd(cwd);
    if let Some(session) = resume {
        builder = builder.resume(session);
    }
    let mut run = registry.start("spawn", builder.build()).await.unwrap();
    let events = run.take_events().unwrap();
    let outcome = run.outcome().await;
    (outcome, events.collect().await)
}

#[tokio::test]
async fn a_resumed_spawn_run_sees_the_earlier_conversation_under_the_same_session() {
    let server = FakeServer::from_yaml(CHILD).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let registry = registry(&model(ModelKind::Anthropic, &server), Some(sessions.path()));
    let (first, _) = delegate(&registry, dir.path(), "remember the word BETA", None).await;
    let session = first.session.clone().unwrap();
    assert_eq!(
        (
            first.status,
            session.provider.as_str(),
            session.cwd.as_deref()
        ),
        (StopReason::Completed, "spawn", Some(dir.path()))
    );

    let (second, _) = delegate(&registry, dir.path(), "which word?", Some(session.clone())).await;
    assert_eq!(
        (second.status, second.text.as_str(), second.session),
        (
            StopReason::Completed,
            "you asked me to remember BETA",
            Some(session)
        )
    );
    let requests = server.model_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].messages,
        vec![
            Message::user("remember the word BETA"),
            Message::assistant("remembered"),
            Message::user("which word?"),
        ]
    );
    assert_eq!(server.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn a_torn_last_line_is_cut_off_and_the_session_resumes_from_its_intact_part() {
    let server = FakeServer::from_yaml(CHILD).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let registry = registry(&model(ModelKind::Anthropic, &server), Some(sessions.path()));
    let (first, _) = delegate(&registry, dir.path(), "remember the word BETA", None).await;
    let session = first.session.unwrap();
    let path = session.transcript.clone().unwrap();
    let intact = load_transcript(&path).unwrap().log;
    // What a run killed in the middle of a write leaves: half a line, no newline.
    let torn = format!(r#"{{"seq":{},"type":"turn_start","tu"#, intact.len());
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(torn.as_bytes())
        .unwrap();

    let (second, events) =
        delegate(&registry, dir.path(), "which word?", Some(session.clone())).await;
    assert_eq!(
        (second.status, second.text.as_str()),
        (StopReason::Completed, "you asked me to remember BETA")
    );
    assert_eq!(
        server.model_requests()[1].messages,
        vec![
            Message::user("remember the word BETA"),
            Message::assistant("remembered"),
            Message::user("which word?"),
        ]
    );
    assert_eq!(
        subagent_test_support::runs::progress(&events),
        vec![format!(
            "transcript: {}:5: skipped a torn last line ({} bytes): line is cut short (no newline): the write was interrupted",
            path.display(),
            torn.len()
        )]
    );
    // The file is whole again: the intact part, then the resumed run's turn.
    let after = load_transcript(&path).unwrap();
    assert_eq!(after.warnings, Vec::new());
    assert_eq!(after.log.truncated(intact.len()), intact);
    assert_eq!(after.log.messages().len(), 4);
}

#[tokio::test]
async fn resuming_an_unknown_session_is_refused_before_anything_starts() {
    let server = FakeServer::from_yaml(CHILD).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let unknown = RunId::new().to_string();
    let session = |id: &str| SessionRef {
        provider: "spawn".to_owned(),
        id: id.to_owned(),
        cwd: None,
        transcript: None,
    };
    let start = |registry: Arc<Registry>, session: SessionRef| {
        let request = StartRequest::builder("which word?")
            .cwd(dir.path())
            .resume(session)
            .build();
        async move { registry.start("spawn", request).await.err() }
    };
    let stored = registry(&model, Some(sessions.path()));
    assert_eq!(
        start(Arc::clone(&stored), session(&unknown)).await,
        Some(Error::NotResumable {
            message: format!(
                "no session {unknown} in {}: no run of this provider wrote it there",
                sessions.path().display()
            )
        })
    );
    assert_eq!(
        start(stored, session("x")).await.map(|e| e.code()),
        Some(ErrorCode::NotResumable)
    );
    // A provider that keeps no transcripts says so.
    assert_eq!(
        start(registry(&model, None), session(&unknown)).await,
        Some(Error::NotResumable {
            message: "provider \"spawn\" keeps no transcripts (no session store), so it cannot resume session ".to_owned() + &unknown
        })
    );
    assert_eq!(server.model_requests().len(), 0);
}

const PARENT: &str = r#"
- match: "continue the child"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "which word?", description: "recall", resume: "SESSION"}
    - text: "parent done"
"#;

/// The parent's model on its own server, scripted with the session id once it is known; the
/// child's model on the other.
#[tokio::test]
async fn the_delegation_tool_resumes_a_session_named_in_the_call() {
    let child_server = FakeServer::from_yaml(CHILD).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let child_model = model(ModelKind::Anthropic, &child_server);
    let registry = registry(&child_model, Some(sessions.path()));
    let (first, _) = delegate(&registry, dir.path(), "remember the word BETA", None).await;
    let session = first.session.unwrap();

    let parent_server = FakeServer::from_yaml(&PARENT.replace("SESSION", &session.id))
        .await
        .unwrap();
    let parent_model = model(ModelKind::Anthropic, &parent_server);
    let config = parent_config(
        &parent_model,
        dir.path(),
        &registry,
        DelegationToolConfig::new("spawn"),
        agents(),
    );
    let outcome = run(config, "continue the child").await;
    assert_eq!(
        (outcome.status, outcome.text.as_str()),
        (StopReason::Completed, "parent done")
    );
    let child_requests = child_server.model_requests();
    assert_eq!(
        child_requests.last().unwrap().messages,
        vec![
            Message::user("remember the word BETA"),
            Message::assistant("remembered"),
            Message::user("which word?"),
        ]
    );
    // The parent reads the answer and the session to continue it again.
    let result = last_results(parent_server.model_requests().last().unwrap());
    let (_, text, is_error) = &result[0];
    assert!(!is_error, "{text}");
    assert!(
        text.starts_with("you asked me to remember BETA\n\n")
            && text.contains(&format!("<session_id>{}</session_id>", session.id)),
        "{text}"
    );
}

#[tokio::test]
async fn a_row_whose_provider_cannot_resume_refuses_the_argument_before_starting() {
    let server = FakeServer::from_yaml(&PARENT.replace("SESSION", "any-session"))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let registry = Registry::new();
    registry.register(Arc::new(NoResume)).unwrap();
    let config = parent_config(
        &model,
        dir.path(),
        &Arc::new(registry),
        DelegationToolConfig::new("no-resume"),
        agents(),
    );
    let outcome = run(config, "continue the child").await;
    assert_eq!(outcome.status, StopReason::Completed);
    let result = last_results(server.model_requests().last().unwrap());
    assert_eq!(
        result[0].1,
        "UNSUPPORTED_CAPABILITY: subagent provider \"no-resume\" does not support the capability: \"resume\""
    );
}

/// A provider that declares nothing and must never be started.
struct NoResume;

#[async_trait::async_trait]
impl subagent_core::SubagentProvider for NoResume {
    fn name(&self) -> &str {
        "no-resume"
    }

    fn capabilities(&self) -> subagent_core::Capabilities {
        subagent_core::Capabilities::NONE
    }

    async fn start(&self, _: StartRequest) -> Result<subagent_core::Run, Error> {
        panic!("a refused request reached the provider")
    }
}
