//! A fork reasons as its parent does: its requests carry the parent's reasoning setting (the
//! same thinking budget or reasoning effort), so its first request stays the parent's prefix.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_core::Effort;
use subagent_model::ModelKind;
use subagent_test_support::{FakeServer, RecordedRequest};

use super::support::{
    PARENT_FORKS, fork_it, fork_row, is_fork_request, model, notified, parent_config, registry,
};

/// The fork child's scenario; [`PARENT_FORKS`] follows.
const FORK_CHILD: &str = r#"
- name: fork-child
  match: "FORK-JOB"
  steps:
    - text: "fork report""#;

/// The reasoning fields of a request's body (`thinking`, `reasoning`), `{}` without any.
fn reasoning(request: &RecordedRequest) -> Value {
    let body = request.body.as_ref().unwrap();
    let picked: serde_json::Map<String, Value> = ["thinking", "reasoning"]
        .into_iter()
        .filter_map(|key| body.get(key).map(|value| (key.to_owned(), value.clone())))
        .collect();
    Value::Object(picked)
}

/// The reasoning fields of the parent's first request and of the fork's.
async fn parent_and_fork(kind: ModelKind, effort: Option<Effort>) -> (Value, Value) {
    let server = FakeServer::from_yaml(&notified(
        "The fork reported back.",
        &format!("{FORK_CHILD}{PARENT_FORKS}"),
    ))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(kind, &server);
    let registry = registry();
    let mut config = parent_config(&model, dir.path(), &registry, fork_row());
    config.effort = effort;
    fork_it(config).await;
    assert_eq!(server.violations(), Vec::<String>::new());
    let requests = server.model_requests();
    let forks: Vec<&RecordedRequest> = requests.iter().filter(|r| is_fork_request(r)).collect();
    assert_eq!(forks.len(), 1);
    (reasoning(&requests[0]), reasoning(forks[0]))
}

#[tokio::test]
async fn a_fork_asks_its_model_for_the_parents_effort() {
    let cases = [
        (
            ModelKind::Anthropic,
            Some(Effort::High),
            json!({"thinking": {"type": "enabled", "budget_tokens": 10000}}),
        ),
        (
            ModelKind::OpenaiResponses,
            Some(Effort::Low),
            json!({"reasoning": {"effort": "low"}}),
        ),
        (ModelKind::OpenaiResponses, None, json!({})),
    ];
    for (kind, effort, expected) in cases {
        let label = format!("{kind:?} {effort:?}");
        assert_eq!(
            parent_and_fork(kind, effort).await,
            (expected.clone(), expected),
            "{label}"
        );
    }
}
