//! The session log a run returns never ends on unanswered tool calls, however the run stops.

use subagent_core::{Run, StartRequest, StopReason};
use subagent_runtime::{Agent, Seed};
use subagent_session::{ContentBlock, SessionEvent, dangling_tool_calls};
use subagent_test_support::FakeServer;

use super::support::config;

const SCENARIO: &str = r#"
- match: "keep going"
  steps:
    - tool_calls: [{name: ls, input: {path: "."}}]
    - tool_calls: [{name: ls, input: {path: "."}}]
    - text: never reached
"#;

#[tokio::test]
async fn a_run_stopped_by_its_turn_limit_keeps_its_last_tool_results() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&server, dir.path());
    config.max_turns = Some(1);
    let request = StartRequest::new("keep going", dir.path());
    let (sender, _run): (_, Run) = Run::channel("test", &request);
    let seed = Seed::fresh(vec![ContentBlock::text("keep going")]);
    let (outcome, log) = Agent::new(config).unwrap().run(seed, &sender).await;
    assert_eq!(outcome.status, StopReason::MaxTurns);
    let messages = log.messages();
    assert!(
        dangling_tool_calls(&messages).is_empty(),
        "the log ends on an unanswered call: {messages:#?}"
    );
    // The results are there, in a turn of their own that ended with the turn limit.
    let last = messages.last().unwrap();
    assert!(
        matches!(last.content[0], ContentBlock::ToolResult { .. }),
        "{last:?}"
    );
    assert!(matches!(
        *log.last().unwrap(),
        SessionEvent::TurnEnd {
            stop_reason: StopReason::MaxTurns
        }
    ));
    // Only one model call was made.
    assert_eq!(server.model_requests().len(), 1);
}

/// A broker that never answers (nobody at the terminal) and says when it was asked.
struct Silent {
    asked: tokio::sync::Notify,
}

#[async_trait::async_trait]
impl subagent_runtime::PermissionBroker for Silent {
    async fn ask(&self, _: subagent_runtime::PermissionRequest) -> subagent_runtime::Decision {
        self.asked.notify_one();
        std::future::pending().await
    }
}

#[tokio::test]
async fn cancel_while_a_permission_question_is_open_ends_the_run() {
    let server = FakeServer::from_yaml(
        "- match: 'ask me'\n  steps:\n    - tool_calls: [{name: bash, input: {command: 'true'}}]\n    - text: never\n",
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let broker = std::sync::Arc::new(Silent {
        asked: tokio::sync::Notify::new(),
    });
    let mut config = config(&server, dir.path());
    config.permissions =
        subagent_runtime::PermissionPolicy::new(subagent_core::PermissionMode::Default)
            .with_broker(broker.clone());
    let cancel = subagent_core::CancellationToken::new();
    let run = Agent::new(config)
        .unwrap()
        .start_prompt("ask me", cancel.clone());
    broker.asked.notified().await;
    run.cancel();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Cancelled, "{outcome:?}");
}
