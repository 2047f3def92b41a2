//! Progress summaries: a tool-less fork of a running agent's conversation, asked at each tick of
//! a manual clock, shares the agent's request prefix byte for byte, runs no tool, and neither its
//! failure nor its cost touches the agent's run; cancelling the run drops a summary in flight.

use std::sync::Arc;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_core::{CancellationToken, Run, RunEvent, StopReason, Usage};
use subagent_model::ModelKind;
use subagent_runtime::summary::{SUMMARY_INTERVAL, SUMMARY_PROMPT};
use subagent_runtime::{Agent, AgentConfig, SummaryConfig, SummaryStats, SummaryTicks};
use subagent_session::ContentBlock;
use subagent_test_support::{FakeServer, RecordedRequest};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use subagent_test_support::runs::assert_answered;

use super::support::config;

const SCENARIO: &str = r#"
- name: summary
  match: "progress summary request"
  steps:
    - text: "Listing the project's files."
      usage: {input_tokens: 14, output_tokens: 9, cache_read_tokens: 1200}
- name: child
  match: "LONG-TASK"
  steps:
    - text: "Looking around."
      tool_calls:
        - name: ls
          input: {}
    - wait_gate: hold
      text: "All done."
"#;

struct Summaries {
    ticks: Arc<Notify>,
    stats: watch::Receiver<SummaryStats>,
}

fn with_summaries(config: &mut AgentConfig) -> Summaries {
    let ticks = Arc::new(Notify::new());
    let summaries = SummaryConfig::with_ticks(SummaryTicks::Manual(Arc::clone(&ticks)));
    let stats = summaries.stats.subscribe();
    config.summaries = Some(summaries);
    Summaries { ticks, stats }
}

impl Summaries {
    async fn tick_until(&mut self, done: impl Fn(&SummaryStats) -> bool) {
        self.ticks.notify_one();
        self.stats.wait_for(|stats| done(stats)).await.unwrap();
    }
}

fn model_config(kind: ModelKind, server: &FakeServer, config: &mut AgentConfig) {
    config.model = server.model(kind);
}

fn is_summary(request: &RecordedRequest) -> bool {
    request.messages.last().is_some_and(|m| {
        m.content
            .iter()
            .any(|b| b.as_text() == Some(SUMMARY_PROMPT))
    })
}

/// Starts an agent of `config` on `prompt`; the run, and its events collected on a task.
fn start_collecting(config: AgentConfig, prompt: &str) -> (Run, JoinHandle<Vec<RunEvent>>) {
    let mut run = Agent::new(config)
        .unwrap()
        .start_prompt(prompt, CancellationToken::new());
    let events = tokio::spawn(run.take_events().unwrap().collect::<Vec<_>>());
    (run, events)
}

async fn shares_the_prefix(kind: ModelKind) {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&server, dir.path());
    model_config(kind, &server, &mut config);
    config.system = Some("You are the agent under test.".to_owned());
    let mut summaries = with_summaries(&mut config);
    let (run, events) = start_collecting(config, "LONG-TASK: look around");
    // The agent's second request waits at the server: the agent is at work.
    server.wait_requests(2).await;
    summaries.tick_until(|stats| stats.delivered == 1).await;
    // Nothing new since: the next tick asks nothing.
    summaries.tick_until(|stats| stats.skipped == 1).await;
    server.gate("hold").open();
    let outcome = run.outcome().await;
    let events = events.await.unwrap();
    assert_answered(&outcome, "All done.");
    // The agent's usage is its own two calls (10 + 5 each by default), not the summary's.
    assert_eq!(
        (outcome.usage.input_tokens, outcome.usage.output_tokens),
        (20, 10)
    );
    assert_eq!(
        *summaries.stats.borrow(),
        SummaryStats {
            requested: 1,
            delivered: 1,
            skipped: 1,
            usage: Usage {
                input_tokens: 14,
                output_tokens: 9,
                cache_read_tokens: 1200,
                ..Usage::default()
            },
            ..SummaryStats::default()
        }
    );
    let summaries_seen: Vec<&RunEvent> = events
        .iter()
        .filter(|e| matches!(e, RunEvent::Summary { .. }))
        .collect();
    assert_eq!(
        summaries_seen,
        [&RunEvent::Summary {
            text: "Listing the project's files.".into(),
            parent_tool_use_id: None
        }]
    );
    assert_eq!(server.violations(), Vec::<String>::new());

    let requests = server.model_requests();
    assert_eq!(requests.len(), 3, "two of the agent's, one summary");
    let (child, summary) = (&requests[1], &requests[2]);
    assert!(is_summary(summary) && !is_summary(child));
    let (cbody, sbody) = (child.body.as_ref().unwrap(), summary.body.as_ref().unwrap());
    // Same model, system prompt, tools and reasoning settings, byte for byte.
    let (system, messages, limit) = match kind {
        ModelKind::Anthropic => ("system", "messages", "max_tokens"),
        _ => ("instructions", "input", "max_output_tokens"),
    };
    for key in ["model", system, "tools", "thinking", "reasoning"] {
        assert_eq!(
            sbody.get(key).map(Value::to_string),
            cbody.get(key).map(Value::to_string),
            "{key}"
        );
    }
    assert!(sbody["tools"].as_array().unwrap().len() >= 8);
    // tool_choice as the agent sends it (none on Anthropic, `auto` on Responses), never `none`.
    assert_eq!(sbody.get("tool_choice"), cbody.get("tool_choice"));
    assert_eq!(sbody[limit], 160);
    // The conversation: the agent's last request, then the prompt in its last user message.
    let (cwire, swire) = (
        cbody[messages].as_array().unwrap(),
        sbody[messages].as_array().unwrap(),
    );
    let shared = match kind {
        // The cache marker moves from the agent's last block to the summary's last block (as
        // it moves between two turns of one conversation): every message before is raw-equal.
        ModelKind::Anthropic => cwire.len() - 1,
        // No markers: the agent's whole input is a raw prefix of the summary's.
        _ => cwire.len(),
    };
    assert!(shared >= 2);
    assert_eq!(
        swire[..shared]
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>(),
        cwire[..shared]
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
    );
    let n = child.messages.len();
    assert_eq!(summary.messages[..n - 1], child.messages[..n - 1]);
    let mut expected_last = child.messages[n - 1].content.clone();
    expected_last.push(ContentBlock::text(SUMMARY_PROMPT));
    assert_eq!(summary.messages.len(), n);
    assert_eq!(summary.messages[n - 1].content, expected_last);
    // The sizes docs/performance.md quotes: the body, and what is new after the shared prefix.
    let tail_bytes: usize = swire[shared..].iter().map(|m| m.to_string().len()).sum();
    eprintln!(
        "summary request ({kind:?}): body {} bytes, of which after the agent's prefix {tail_bytes} bytes (the agent's last request: {} bytes)",
        sbody.to_string().len(),
        cbody.to_string().len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summary_shares_the_runs_prefix_anthropic() {
    shares_the_prefix(ModelKind::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summary_shares_the_runs_prefix_responses() {
    shares_the_prefix(ModelKind::OpenaiResponses).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summary_runs_no_tool_and_its_failure_leaves_the_run_alone() {
    let scenario = r#"
- name: summary
  match: "progress summary request"
  steps:
    - error: {status: 500, type: api_error, message: "summary broke", times: 1}
      text: "Writing a file."
      tool_calls:
        - name: write_file
          input: {path: "touched.txt", content: "no"}
- name: child
  match: "LONG-TASK"
  steps:
    - tool_calls:
        - name: ls
          input: {}
    - wait_gate: hold1
      tool_calls:
        - name: ls
          input: {}
    - wait_gate: hold2
      text: "All done."
"#;
    let server = FakeServer::from_yaml(scenario).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&server, dir.path());
    let mut summaries = with_summaries(&mut config);
    let (run, events) = start_collecting(config, "LONG-TASK: look twice");
    server.wait_requests(2).await;
    // The first summary fails (HTTP 500): counted, nothing else.
    summaries.tick_until(|stats| stats.failed == 1).await;
    server.gate("hold1").open();
    // child 1, child 2, the failed summary, child 3 (waiting at hold2).
    server.wait_requests(4).await;
    // The second answers with a tool call: dropped, never run.
    summaries.tick_until(|stats| stats.delivered == 1).await;
    server.gate("hold2").open();
    let outcome = run.outcome().await;
    let events = events.await.unwrap();
    assert_answered(&outcome, "All done.");
    assert_eq!(outcome.diagnostic, None);
    assert_eq!(outcome.usage.tool_uses, 2);
    assert_eq!(
        (outcome.usage.input_tokens, outcome.usage.output_tokens),
        (30, 15)
    );
    let stats = *summaries.stats.borrow();
    assert_eq!(
        (
            stats.requested,
            stats.failed,
            stats.delivered,
            stats.tool_calls_dropped
        ),
        (2, 1, 1, 1)
    );
    assert!(!dir.path().join("touched.txt").exists());
    // The agent's own tool calls are the only ones in its stream; the summary's text is one
    // event.
    let calls: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolCall { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(calls, ["ls", "ls"]);
    assert!(events.contains(&RunEvent::Summary {
        text: "Writing a file.".into(),
        parent_tool_use_id: None
    }));
    // Five requests: nothing ever answered the summary's tool call.
    let requests = server.model_requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(requests.iter().filter(|r| is_summary(r)).count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_run_drops_its_summary_in_flight() {
    let scenario = r#"
- name: summary
  match: "progress summary request"
  steps:
    - text: "Still"
      wait_gate_mid: never
- name: child
  match: "LONG-TASK"
  steps:
    - tool_calls:
        - name: ls
          input: {}
    - wait_gate: hold
      text: "All done."
"#;
    let server = FakeServer::from_yaml(scenario).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&server, dir.path());
    let summaries = with_summaries(&mut config);
    let run = Agent::new(config)
        .unwrap()
        .start_prompt("LONG-TASK: wait", CancellationToken::new());
    server.wait_requests(2).await;
    summaries.ticks.notify_one();
    // The summary's answer has started and waits at its gate, never opened.
    server.wait_requests(3).await;
    run.cancel();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Cancelled);
    // The summary's stream was dropped with the run (it never finished).
    server.wait_dropped(1).await;
    let stats = *summaries.stats.borrow();
    assert_eq!((stats.requested, stats.delivered, stats.failed), (1, 0, 0));
}

/// The default schedule on tokio's paused clock (it moves only when every task waits): the
/// first summary one interval (30 s) after the start, then a tick with nothing new skipped.
#[tokio::test(start_paused = true)]
async fn the_default_interval_runs_on_the_clock() {
    let scenario = r#"
- name: summary
  match: "progress summary request"
  steps:
    - text: "Thinking about the task."
- name: child
  match: "LONG-TASK"
  steps:
    - wait_gate: hold
      text: "All done."
"#;
    let scenarios = subagent_model::Scenarios::from_yaml(scenario).unwrap();
    let scripted = Arc::new(subagent_model::ScriptedModel::new("scripted", scenarios));
    let dir = tempfile::tempdir().unwrap();
    let mut config = AgentConfig::new(
        Arc::clone(&scripted) as Arc<dyn subagent_model::Model>,
        subagent_runtime::Roots::new(dir.path()).unwrap(),
    );
    let summaries = SummaryConfig::from_secs(None).unwrap();
    let mut stats = summaries.stats.subscribe();
    config.summaries = Some(summaries);
    let start = tokio::time::Instant::now();
    let run = Agent::new(config)
        .unwrap()
        .start_prompt("LONG-TASK: think", CancellationToken::new());
    stats.wait_for(|s| s.delivered == 1).await.unwrap();
    let first = start.elapsed();
    assert!(
        first >= SUMMARY_INTERVAL && first < 2 * SUMMARY_INTERVAL,
        "{first:?}"
    );
    stats.wait_for(|s| s.skipped == 1).await.unwrap();
    assert!(start.elapsed() >= 2 * SUMMARY_INTERVAL);
    scripted.gates().gate("hold").open();
    let outcome = run.outcome().await;
    assert_answered(&outcome, "All done.");
    assert_eq!(stats.borrow().requested, 1);
}
