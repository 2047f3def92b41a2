//! Starting agents that are not there or not agents: no adapter needed.

use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_acp::{AcpConfig, AcpProvider};
use subagent_core::{ErrorCode, StartRequest, StopReason, SubagentProvider};

/// One run of "say hi" in `cwd`, to its outcome (a bound against hanging).
async fn say_hi(provider: &AcpProvider, cwd: &std::path::Path) -> subagent_core::Outcome {
    let run = provider
        .start(StartRequest::new("say hi", cwd))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(60), run.outcome())
        .await
        .expect("the run ended")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_agent_is_spawn_failed_and_one_that_exits_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let missing = AcpProvider::new("acp", AcpConfig::new("/nonexistent/acp-agent")).unwrap();
    let Err(error) = missing.start(StartRequest::new("say hi", dir.path())).await else {
        panic!("a missing agent started");
    };
    assert_eq!(error.code(), ErrorCode::SpawnFailed, "{error}");

    // `true` exits at once without a word: the run fails (never hangs), saying so.
    let gone = AcpProvider::new("acp", AcpConfig::new("true")).unwrap();
    let outcome = say_hi(&gone, dir.path()).await;
    assert_eq!(outcome.status, StopReason::Failed, "{outcome:?}");
    assert!(
        outcome
            .diagnostic
            .as_deref()
            .unwrap_or_default()
            .starts_with("the ACP agent failed: "),
        "{outcome:?}"
    );
}

/// The run reads the agent's stdout and feeds the SDK in one task: a burst of a thousand updates
/// written at once (more than the pipe holds) all arrive, in order, and the prompt's answer after
/// them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_updates_arrives_whole_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let agent =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/burst-agent.sh");
    let mut config = AcpConfig::new(agent);
    config.env.insert("BURST".to_owned(), "1000".to_owned());
    let provider = AcpProvider::new("burst", config).unwrap();
    for _ in 0..3 {
        let outcome = say_hi(&provider, dir.path()).await;
        assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
        let expected: String = (0..1000).map(|i| format!("{i} ")).collect();
        assert_eq!(outcome.text, expected);
    }
}
