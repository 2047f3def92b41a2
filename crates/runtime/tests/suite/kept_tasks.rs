//! A task table the host keeps beyond its runs (`AgentConfig::tasks`, `subagent acp`'s
//! sessions): a run ends while its background task runs, neither waiting for it nor stopping
//! it; the host hears of its end; the next run tells the model before its prompt.

use std::path::Path;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use subagent_core::{Run, StartRequest, StopReason};
use subagent_runtime::{Agent, AgentConfig, EventLog, Seed, TaskStatus, TaskTable};
use subagent_session::ContentBlock;
use subagent_test_support::FakeServer;

use super::support::config;

const SCENARIOS: &str = r#"
- name: first
  match: "wait for the word"
  steps:
    - tool_calls:
        - id: call_bg
          name: bash
          input: {command: "cat word.fifo", description: "the word", run_in_background: true}
    - text: "waiting in the background"
- name: second
  match: "what was the word"
  steps:
    - text: "it was bird"
"#;

/// One run of `config` with `tasks` on `prompt`, continuing `log`: its status and log.
async fn run_once(
    config: &AgentConfig,
    tasks: &Arc<TaskTable>,
    dir: &Path,
    log: Option<EventLog>,
    prompt: &str,
) -> (StopReason, EventLog) {
    let agent = Agent::new(config.clone())
        .unwrap()
        .with_tasks(Arc::clone(tasks));
    let blocks = vec![ContentBlock::text(prompt)];
    let seed = match log {
        Some(log) => Seed::resumed(log, blocks),
        None => Seed::fresh(blocks),
    };
    let request = StartRequest::builder(prompt).cwd(dir).build();
    let (sender, _run): (_, Run) = Run::channel("test", &request);
    let (outcome, log) = agent.run(seed, &sender).await;
    (outcome.status, log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_table_outlives_the_run_and_the_next_run_tells_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("word.fifo");
    subagent_test_support::procs::mkfifo(&fifo);
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let config = config(&server, dir.path());
    let tasks = Arc::new(TaskTable::default());
    let (status, log) = run_once(&config, &tasks, dir.path(), None, "wait for the word").await;
    // The run ended with its command still running: not waited for, not stopped.
    assert_eq!(status, StopReason::Completed);
    assert_eq!(tasks.running(), 1);
    // Between runs the host hears of the end; nothing is delivered by looking.
    tokio::task::spawn_blocking(move || std::fs::write(fifo, "bird\n").unwrap())
        .await
        .unwrap();
    let ended = tasks.next_ended(&Default::default()).await;
    assert_eq!(
        (
            ended.state.status(),
            ended.tool_use_id.as_str(),
            ended.notified
        ),
        (TaskStatus::Completed, "call_bg", false)
    );
    let (status, _) = run_once(&config, &tasks, dir.path(), Some(log), "what was the word?").await;
    assert_eq!(status, StopReason::Completed);
    // The second run's request: the notification first, then the prompt, in one message.
    let request = server.model_requests().pop().unwrap();
    let last = request.messages.last().unwrap();
    let texts: Vec<String> = last
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts[0].starts_with("<task-notification>")
            && texts[0].contains("<tool_use_id>call_bg</tool_use_id>")
            && texts[0].contains("<status>completed</status>")
            && texts[0].contains("bird"),
        "{}",
        texts[0]
    );
    assert_eq!(texts[1], "what was the word?");
    assert!(tasks.take_finished().is_empty(), "told once");
    assert_eq!(server.violations(), Vec::<String>::new());
}
