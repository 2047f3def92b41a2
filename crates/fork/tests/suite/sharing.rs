//! A fork's requests share the parent's history: no message is copied, whatever its length.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use subagent_core::CancellationToken;
use subagent_model::{Model, ModelRequest, ModelStream, Scenarios, ScriptedModel};

use super::support::{completed, fork_row, parent_config, registry};

const SCENARIOS: &str = r#"
- name: parent
  match: "PARENT-TASK"
  steps:
    - tool_calls: [{name: subagent, input: {prompt: "FORK-TASK look around"}}]
    - text: "parent waits"
    - text: "parent done"
- name: fork
  match: "FORK-TASK"
  steps:
    - text: "fork done"
"#;

/// The scripted model, keeping every request it was sent.
struct Recording {
    inner: ScriptedModel,
    requests: Mutex<Vec<ModelRequest>>,
}

#[async_trait]
impl Model for Recording {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> subagent_model::Result<ModelStream> {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.stream(request, cancel).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_forks_first_request_shares_the_parents_messages_and_tools() {
    let dir = tempfile::tempdir().unwrap();
    let recording = Arc::new(Recording {
        inner: ScriptedModel::new("shared", Scenarios::from_yaml(SCENARIOS).unwrap()),
        requests: Mutex::default(),
    });
    let model: Arc<dyn Model> = recording.clone();
    let registry = registry();
    let config = parent_config(&model, dir.path(), &registry, fork_row());
    completed(config, "PARENT-TASK").await;

    let requests = recording.requests.lock().unwrap().clone();
    let is_fork = |r: &ModelRequest| {
        r.messages
            .last()
            .is_some_and(|m| m.text().contains("FORK-TASK"))
    };
    let parent_first = requests.iter().find(|r| !is_fork(r)).unwrap();
    let fork_first = requests.iter().find(|r| is_fork(r)).unwrap();
    // The parent's prompt and its delegating assistant message, then the fork's seed.
    assert_eq!(fork_first.messages.len(), 3);
    assert!(fork_first.messages.shares(&parent_first.messages, 0));
    let parent_second = requests
        .iter()
        .find(|r| !is_fork(r) && r.messages.len() == 3)
        .unwrap();
    assert!(fork_first.messages.shares(&parent_second.messages, 1));
    assert!(Arc::ptr_eq(&fork_first.tools, &parent_first.tools));
    assert_eq!(fork_first.system, parent_first.system);
}
