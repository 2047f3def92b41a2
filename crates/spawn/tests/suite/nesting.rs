//! Nesting is opt-in: a spawned child gets no delegation tool and is refused if it calls one
//! anyway, unless its delegation row allows depth (`max_depth` above 1) or its agent type lists
//! the delegation tool in its tools.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use subagent_core::ToolFilter;
use subagent_core::agents::{AgentDirectory, AgentProfile, StaticAgents};
use subagent_model::ModelKind;
use subagent_runtime::{DelegationToolConfig, NESTED_REFUSAL};

use subagent_test_support::runs::assert_answered;

use super::support::{Parent, run};
use super::support::{builtin_and, last_results, requests_for};
use subagent_test_support::parent::{NESTING_CHILD, nested_refusal};

/// [`NESTING_CHILD`], started by the parents of these tests.
fn scenarios() -> String {
    NESTING_CHILD.to_owned()
        + r#"
- name: typed
  match: "parent starts a lead"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "CHILD-NESTS as a lead", subagent_type: lead}
    - text: "parent done"
- name: parent
  match: "parent starts"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "CHILD-NESTS go"}
    - text: "parent done"
"#
}

/// `lead` lists the delegation tool (`subagent`) among its tools: it may delegate.
fn lead() -> Arc<dyn AgentDirectory> {
    let mut lead = AgentProfile::new("lead", "Splits work and hands it on.");
    lead.tool_filter = Some(ToolFilter::allow(["read_file", "subagent"]));
    Arc::new(StaticAgents(vec![lead]))
}

/// Runs a parent (registry cap 3) that delegates once with `row`; returns the recorded
/// requests.
async fn nesting(
    row: DelegationToolConfig,
    prompt: &str,
) -> Vec<subagent_test_support::RecordedRequest> {
    let parent = Parent::start(&scenarios(), ModelKind::Anthropic, 3).await;
    let server = &parent.server;
    let config = parent.config_with(row, lead());
    let outcome = run(config, prompt).await;
    assert_answered(&outcome, "parent done");
    assert_eq!(server.violations(), Vec::<String>::new());
    server.model_requests()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_gets_no_delegation_tool_and_a_call_to_one_is_refused_with_its_code() {
    let requests = nesting(DelegationToolConfig::new("spawn"), "parent starts").await;
    let child = requests_for(&requests, "CHILD-NESTS");
    assert_eq!(child.len(), 2);
    assert_eq!(child[0].tool_names(), builtin_and(&[]));
    assert_eq!(
        last_results(child[1]),
        nested_refusal("call_nested", NESTED_REFUSAL)
    );
    assert_eq!(requests_for(&requests, "GRANDCHILD-TASK").len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_with_max_depth_above_one_lets_its_children_delegate_to_that_depth() {
    let mut row = DelegationToolConfig::new("spawn");
    row.max_depth = Some(2);
    let requests = nesting(row, "parent starts").await;
    let child = requests_for(&requests, "CHILD-NESTS");
    assert_eq!(child[0].tool_names(), builtin_and(&["subagent"]));
    let results = last_results(child[1]);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].1.starts_with("grandchild done\n\n<usage>"),
        "{results:?}"
    );
    // The grandchild runs at depth 2, the row's cap: it gets no delegation tool.
    let grandchild = requests_for(&requests, "GRANDCHILD-TASK");
    assert_eq!(grandchild.len(), 1);
    assert_eq!(grandchild[0].tool_names(), builtin_and(&[]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_type_listing_the_delegation_tool_may_delegate_once() {
    let requests = nesting(DelegationToolConfig::new("spawn"), "parent starts a lead").await;
    let child = requests_for(&requests, "CHILD-NESTS");
    assert_eq!(child[0].tool_names(), ["read_file", "subagent"]);
    let results = last_results(child[1]);
    assert!(
        results[0].1.starts_with("grandchild done\n\n<usage>"),
        "{results:?}"
    );
    // The grandchild has no type of its own that opts in: it may not delegate.
    let grandchild = requests_for(&requests, "GRANDCHILD-TASK");
    assert_eq!(grandchild.len(), 1);
    assert_eq!(grandchild[0].tool_names(), builtin_and(&[]));
}
