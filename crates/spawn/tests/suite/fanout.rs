//! Fan-out through a parent: the delegation calls of one assistant message all start at once;
//! they do not queue behind the bound meant for I/O tools (`AgentConfig::tool_concurrency`).

use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_core::agents::StaticAgents;
use subagent_core::{CancellationToken, StopReason};
use subagent_model::ModelKind;
use subagent_runtime::{Agent, DelegationToolConfig};
use subagent_test_support::FakeServer;

use super::support::{last_results, model, parent_config, registry_with};

/// A parent whose first turn makes `n` delegation calls; every child's model waits on the gate
/// `all-started` before it answers.
fn scenarios(n: usize) -> String {
    let mut yaml = String::from(
        "- name: child\n  match: \"GATED-CHILD\"\n  steps:\n    - wait_gate: all-started\n      text: \"child done\"\n- name: parent\n  match: \"FAN-OUT\"\n  steps:\n    - tool_calls:\n",
    );
    for i in 0..n {
        yaml.push_str(&format!(
            "        - {{name: subagent, id: call_{i}, input: {{prompt: \"GATED-CHILD {i}\"}}}}\n"
        ));
    }
    yaml.push_str("    - text: \"parent done\"\n");
    yaml
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegation_calls_of_one_turn_all_run_at_once_beyond_the_io_tool_bound() {
    const N: usize = 6;
    let server = FakeServer::from_yaml(&scenarios(N)).await.unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let registry = registry_with(&model, 3);
    let dir = tempfile::tempdir().unwrap();
    let mut config = parent_config(
        &model,
        dir.path(),
        &registry,
        DelegationToolConfig::new("spawn"),
        std::sync::Arc::new(StaticAgents::default()),
    );
    config.tool_concurrency = 2;
    let run = Agent::new(config)
        .unwrap()
        .start_prompt("FAN-OUT", CancellationToken::new());

    // No child can finish before the gate opens, so all N children's requests reaching the
    // server means all N delegations are running at once (the parent's request is the first).
    // The bound only turns a regression into a failure instead of a hang.
    let all_started = tokio::time::timeout(Duration::from_secs(60), server.wait_requests(1 + N))
        .await
        .is_ok();
    let seen = server.model_requests().len();
    server.gate("all-started").open();
    assert!(
        all_started,
        "only {seen} model requests (parent + children) while the children were gated: the delegations queued behind tool_concurrency = 2"
    );

    let outcome = run.outcome().await;
    assert_eq!(
        (outcome.status, outcome.text.as_str()),
        (StopReason::Completed, "parent done")
    );
    let requests = server.model_requests();
    let parent_second = requests
        .iter()
        .rfind(|r| r.messages.first().is_some_and(|m| m.text() == "FAN-OUT"))
        .unwrap();
    let results: Vec<(String, bool)> = last_results(parent_second)
        .into_iter()
        .map(|(id, text, is_error)| {
            (
                format!("{id}: {}", text.lines().next().unwrap_or("")),
                is_error,
            )
        })
        .collect();
    let expected: Vec<(String, bool)> = (0..N)
        .map(|i| (format!("call_{i}: child done"), false))
        .collect();
    assert_eq!(results, expected);
}
