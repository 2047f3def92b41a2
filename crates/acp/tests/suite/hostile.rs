//! The acp provider against a hostile agent (`tests/fixtures/hostile-agent.sh`, run through the
//! real process path): one that floods `session/update`s and never answers the prompt, one that
//! asks permission in a loop whatever it is told, one that never answers `session/close` and
//! ignores SIGTERM. Each run ends, saying why, and the agent's process is gone after it.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use subagent_acp::{AcpConfig, AcpProvider};
use subagent_core::{Outcome, RunEvent, StartRequest, StopReason, SubagentProvider};
use subagent_test_support::runs::assert_answered;

/// A bound against hanging: every run here ends long before it.
const HANG: Duration = Duration::from_secs(60);

fn provider(behaviour: &str, configure: impl FnOnce(&mut AcpConfig)) -> AcpProvider {
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile-agent.sh");
    let mut config = AcpConfig::new(agent);
    config
        .env
        .insert("HOSTILE".to_owned(), behaviour.to_owned());
    config.grace_ms = 500;
    configure(&mut config);
    AcpProvider::new(behaviour, config).unwrap()
}

/// The agent's pid, as it wrote it in the run's cwd.
fn agent_pid(cwd: &Path) -> i32 {
    std::fs::read_to_string(cwd.join("agent.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Whether a process with this pid still exists (a zombie counts: it was not reaped).
fn exists(pid: i32) -> bool {
    let pid = rustix::process::Pid::from_raw(pid).unwrap();
    rustix::process::test_kill_process(pid).is_ok()
}

async fn outcome_of(run: subagent_core::Run) -> Outcome {
    tokio::time::timeout(HANG, run.outcome()).await.unwrap()
}

/// An agent that floods updates and never answers its prompt: a cancel still ends the run,
/// cancelled, and the agent is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_agent_is_ended_by_a_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let provider = provider("flood", |_| {});
    let mut run = provider
        .start(StartRequest::new("say hi", dir.path()))
        .await
        .unwrap();
    let mut events = run.take_events().unwrap();
    let mut texts = 0;
    while let Some(event) = events.next().await {
        if matches!(event, RunEvent::Text { .. }) {
            texts += 1;
            if texts == 10_000 {
                break;
            }
        }
    }
    run.cancel();
    // The events go on arriving until the agent is gone; they are read to their end.
    let drained = tokio::spawn(async move { events.count().await });
    let outcome = outcome_of(run).await;
    assert_eq!(outcome.status, StopReason::Cancelled, "{outcome:?}");
    tokio::time::timeout(HANG, drained).await.unwrap().unwrap();
    assert!(!exists(agent_pid(dir.path())));
}

/// An agent that floods updates, uncancelled: the run's overall limit ends it, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_agent_is_ended_by_the_overall_limit() {
    let dir = tempfile::tempdir().unwrap();
    let provider = provider("flood", |config| config.timeout_secs = Some(1));
    let mut run = provider
        .start(StartRequest::new("say hi", dir.path()))
        .await
        .unwrap();
    let events = run.take_events().unwrap();
    let drained = tokio::spawn(async move { events.count().await });
    let outcome = outcome_of(run).await;
    assert_eq!(outcome.status, StopReason::Failed, "{outcome:?}");
    assert!(
        outcome
            .diagnostic
            .as_deref()
            .unwrap_or_default()
            .contains("time"),
        "{outcome:?}"
    );
    tokio::time::timeout(HANG, drained).await.unwrap().unwrap();
    assert!(!exists(agent_pid(dir.path())));
}

/// An agent that asks permission again and again: past the row's bound its requests are
/// answered `cancelled`, the turn is cancelled, and the run fails saying why; the agent
/// (which ignores the cancel) is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_asking_permission_in_a_loop_is_stopped_at_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let provider = provider("permissions", |config| {
        config.max_permission_requests = 5;
    });
    let run = provider
        .start(StartRequest::new("say hi", dir.path()))
        .await
        .unwrap();
    let outcome = outcome_of(run).await;
    assert_eq!(outcome.status, StopReason::Failed, "{outcome:?}");
    let diagnostic = outcome.diagnostic.unwrap_or_default();
    assert!(
        diagnostic.contains("more than 5 permission requests")
            && diagnostic.contains("max_permission_requests"),
        "{diagnostic}"
    );
    assert!(!exists(agent_pid(dir.path())));
    let answers = std::fs::read_to_string(dir.path().join("answers.log")).unwrap();
    let answers: Vec<&str> = answers.lines().collect();
    assert_eq!(answers[..5], ["selected"; 5]);
    assert!(
        answers[5..].iter().all(|answer| *answer != "selected"),
        "{answers:?}"
    );
}

/// An agent that answers its prompt but never `session/close`, and ignores SIGTERM: the run
/// completes with its answer, and the agent is killed and gone; a cancel while the close is
/// waited for ends it too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_never_closes_its_session_is_ended() {
    let dir = tempfile::tempdir().unwrap();
    let provider = provider("no-close", |_| {});
    let run = provider
        .start(StartRequest::new("say hi", dir.path()))
        .await
        .unwrap();
    let outcome = outcome_of(run).await;
    assert_answered(&outcome, "done");
    assert!(!exists(agent_pid(dir.path())));

    let dir = tempfile::tempdir().unwrap();
    let mut run = provider
        .start(StartRequest::new("say hi", dir.path()))
        .await
        .unwrap();
    let mut events = run.take_events().unwrap();
    while let Some(event) = events.next().await {
        if matches!(event, RunEvent::Text { .. }) {
            break;
        }
    }
    run.cancel();
    let outcome = outcome_of(run).await;
    assert!(
        matches!(
            outcome.status,
            StopReason::Completed | StopReason::Cancelled
        ),
        "{outcome:?}"
    );
    assert!(!exists(agent_pid(dir.path())));
}
