//! A fork runs in the background: it keeps its parent's tool list (the prompt cache needs the
//! same prefix) but may call only the background tools, and it never asks. A call to a tool
//! outside the list is refused with a result the model can read; a call that would need
//! approval is denied at once, and the parent's broker is never asked.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use pretty_assertions::assert_eq;
use subagent_core::PermissionMode;
use subagent_model::ModelKind;
use subagent_runtime::{PermissionBroker, PermissionPolicy, Tool};
use subagent_session::ContentBlock;
use subagent_test_support::{FakeServer, RecordedRequest};

use super::support::{
    PARENT_FORKS, fork_it, fork_row, is_fork_request, model, notified, parent_config, registry,
};

subagent_test_support::background_doubles!();

/// The fork child's scenario; [`PARENT_FORKS`] follows.
const FORK_CHILD: &str = r#"
- name: fork-child
  match: "FORK-JOB"
  steps:
    - tool_calls:
        - name: bash
          input: {command: "echo hi"}
        - name: ask_user
          input: {question: "ok?"}
    - text: "fork done""#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_calls_only_the_background_tools_and_never_asks() {
    let server = FakeServer::from_yaml(&notified(
        "notified",
        &format!("{FORK_CHILD}{PARENT_FORKS}"),
    ))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let registry = registry();
    let mut config = parent_config(&model, dir.path(), &registry, fork_row());
    let ask_user: Arc<dyn Tool> = Arc::new(AskUser);
    config.tools = config.tools.with([ask_user]);
    let broker = Arc::new(Counting::default());
    config.permissions = PermissionPolicy::new(PermissionMode::Default)
        .with_broker(Arc::clone(&broker) as Arc<dyn PermissionBroker>);
    fork_it(config).await;
    assert_eq!(server.violations(), Vec::<String>::new());
    let requests = server.model_requests();
    let forks: Vec<&RecordedRequest> = requests.iter().filter(|r| is_fork_request(r)).collect();
    assert_eq!(forks.len(), 2);
    // The parent's list, unchanged.
    assert_eq!(forks[0].tool_names(), requests[0].tool_names());
    assert!(forks[0].tool_names().contains(&"ask_user".to_owned()));
    let results: Vec<(String, bool)> = forks[1]
        .messages
        .last()
        .unwrap()
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolResult {
                content, is_error, ..
            } => Some((content.to_text(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            (
                "permission denied: bash needs approval, and a background run never asks (auto-denied)"
                    .to_owned(),
                true
            ),
            (
                "ask_user is not available to a background agent (it runs with ls, read_file, glob, grep, write_file, edit_file, delete, bash, task_output, task_stop, Skill and delegation when allowed to nest); do without it"
                    .to_owned(),
                true
            ),
        ]
    );
    assert_eq!(broker.0.load(Ordering::SeqCst), 0);
}
