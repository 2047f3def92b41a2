//! A fork still at work is summarized by a tool-less fork of its own conversation: the summary
//! request starts with the fork's exact prefix (and so with the parent's system prompt and
//! tools), reaches the parent's stream tagged with the delegation call, and is the task's
//! progress that `task_output` reads.

use std::sync::Arc;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_core::registry::Registry;
use subagent_core::{CancellationToken, RunEvent};
use subagent_fork::{ForkConfig, ForkProvider};
use subagent_model::ModelKind;
use subagent_runtime::summary::SUMMARY_PROMPT;
use subagent_runtime::{Agent, SummaryConfig, SummaryTicks};
use subagent_session::ContentBlock;
use subagent_test_support::{FakeServer, RecordedRequest};
use tokio::sync::Notify;

use subagent_test_support::runs::assert_answered;

use super::support::{fork_row, is_fork_request, model, notified, parent_config};

const SCENARIO: &str = r#"
- name: summary
  match: "progress summary request"
  steps:
    - text: "Looking around the project."
- name: fork-child
  match: "FORK-JOB"
  steps:
    - tool_calls:
        - {name: ls, input: {}}
    - wait_gate: hold
      text: "fork report: all good"
- name: parent
  match: "please fork"
  steps:
    - tool_calls:
        - {id: call_fork, name: subagent, input: {prompt: "FORK-JOB: look around", description: "look around"}}
    - wait_gate: parent-go
      tool_calls:
        - {id: call_read, name: task_output, input: {task_id: call_fork, block: false}}
    - text: "Waiting for the fork."
"#;

fn named<'a>(requests: &'a [RecordedRequest], scenario: &str) -> Vec<&'a RecordedRequest> {
    requests
        .iter()
        .filter(|r| {
            r.scenario
                .as_ref()
                .is_some_and(|(name, _)| name == scenario)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_fork_is_summarized_from_its_own_prefix() {
    let server = FakeServer::from_yaml(&notified("The fork reported back.", SCENARIO))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let ticks = Arc::new(Notify::new());
    let summaries = SummaryConfig::with_ticks(SummaryTicks::Manual(Arc::clone(&ticks)));
    let mut stats = summaries.stats.subscribe();
    let registry = Registry::new();
    registry
        .register(Arc::new(
            ForkProvider::new("fork", ForkConfig::default(), None).with_summaries(Some(summaries)),
        ))
        .unwrap();
    let mut config = parent_config(&model, dir.path(), &Arc::new(registry), fork_row());
    config.tools = config.tools.with(subagent_runtime::tools::task_tools());
    let mut run = Agent::new(config)
        .unwrap()
        .start_prompt("please fork", CancellationToken::new());
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let mut events = run.take_events().unwrap();
    let collector = tokio::spawn(async move {
        let mut all = Vec::new();
        while let Some(event) = events.next().await {
            let _ = seen_tx.send(event.clone());
            all.push(event);
        }
        all
    });
    // The parent's second request waits at parent-go, the fork's second at hold.
    server.wait_requests(4).await;
    ticks.notify_one();
    stats.wait_for(|s| s.delivered == 1).await.unwrap();
    // The parent's stream has the summary, tagged with the call that started the fork (and the
    // task table, which forwards it, has taken it in first).
    let summary_event = RunEvent::Summary {
        text: "Looking around the project.".into(),
        parent_tool_use_id: Some("call_fork".into()),
    };
    while let Some(event) = seen.recv().await {
        if event == summary_event {
            break;
        }
    }
    server.gate("parent-go").open();
    // The parent read the task (running, with its summary) and ended its answer: its third
    // request is in; the fork may finish.
    server.wait_requests(6).await;
    server.gate("hold").open();
    let outcome = run.outcome().await;
    collector.await.unwrap();
    assert_answered(&outcome, "The fork reported back.");
    assert_eq!(server.violations(), Vec::<String>::new());

    let requests = server.model_requests();
    // task_output's progress carried the summary.
    let read = requests
        .iter()
        .flat_map(|r| r.messages.iter())
        .flat_map(|m| m.content.iter())
        .find_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } if tool_use_id == "call_read" => Some(content.to_text()),
            _ => None,
        })
        .unwrap();
    assert!(read.contains("<status>running</status>"), "{read}");
    assert!(
        read.contains("summary: Looking around the project.\n</progress>"),
        "{read}"
    );
    // The summary request: the fork's last request, then the prompt.
    let summary = named(&requests, "summary");
    assert_eq!(summary.len(), 1);
    let summary = summary[0];
    let fork_last = named(&requests, "fork-child")
        .into_iter()
        .max_by_key(|r| r.messages.len())
        .unwrap();
    assert!(is_fork_request(fork_last) && is_fork_request(summary));
    let parent_first = &requests[0];
    let (sbody, fbody, pbody) = (
        summary.body.as_ref().unwrap(),
        fork_last.body.as_ref().unwrap(),
        parent_first.body.as_ref().unwrap(),
    );
    for key in ["model", "system", "tools", "thinking"] {
        assert_eq!(
            sbody.get(key).map(Value::to_string),
            fbody.get(key).map(Value::to_string),
            "{key}"
        );
        assert_eq!(
            sbody.get(key).map(Value::to_string),
            pbody.get(key).map(Value::to_string),
            "{key}"
        );
    }
    let (fwire, swire) = (
        fbody["messages"].as_array().unwrap(),
        sbody["messages"].as_array().unwrap(),
    );
    let shared = fwire.len() - 1;
    assert_eq!(
        swire[..shared]
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>(),
        fwire[..shared]
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
    );
    let mut last = fork_last.messages[shared].content.clone();
    last.push(ContentBlock::text(SUMMARY_PROMPT));
    assert_eq!(summary.messages[shared].content, last);
    assert_eq!(summary.messages.len(), shared + 1);
}
