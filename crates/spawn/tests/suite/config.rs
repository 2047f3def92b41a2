//! One effective configuration: what a child of a parent's delegation tool sends its model,
//! from the call's arguments, its agent type and the preset (model aliases, reasoning effort).

use std::collections::BTreeMap;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_core::StopReason;
use subagent_core::agents::{AgentProfile, StaticAgents};
use subagent_core::registry::Registry;
use subagent_model::{ModelAliases, ModelKind};
use subagent_runtime::DelegationToolConfig;
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::FakeServer;

use subagent_test_support::runs::assert_answered;

use super::support::run;
use super::support::{delegating, model, parent_config, registry_with, requests_for};

/// The parent makes one delegation call with `input`; the child answers.
fn scenario(input: &Value) -> String {
    delegating(
        input,
        r#"
- name: child
  match: "CHILD-TASK"
  steps:
    - text: "child done"
"#,
    )
}

/// What the child's first request carried: its model id and its reasoning fields.
async fn child_sent(kind: ModelKind, profile: AgentProfile, input: Value) -> Value {
    let server = FakeServer::from_yaml(&scenario(&input)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(kind, &server);
    let registry = Registry::with_max_depth(3);
    let aliases = ModelAliases::new(
        BTreeMap::from([("fast".to_owned(), "tiny-model".to_owned())]),
        Some(kind),
    );
    registry
        .register(Arc::new(
            SpawnProvider::new("spawn", Arc::clone(&model), SpawnConfig::default())
                .with_aliases(aliases),
        ))
        .unwrap();
    let config = parent_config(
        &model,
        dir.path(),
        &Arc::new(registry),
        DelegationToolConfig::new("spawn"),
        Arc::new(StaticAgents(vec![profile])),
    );
    let outcome = run(config, "please delegate").await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    assert_eq!(server.violations(), Vec::<String>::new());
    let requests = server.model_requests();
    let child = requests_for(&requests, "CHILD-TASK");
    assert_eq!(child.len(), 1, "{outcome:?}");
    let body = child[0].body.clone().unwrap();
    let picked: serde_json::Map<String, Value> = ["model", "thinking", "reasoning"]
        .into_iter()
        .filter_map(|key| body.get(key).map(|value| (key.to_owned(), value.clone())))
        .collect();
    Value::Object(picked)
}

fn agent(model: Option<&str>) -> AgentProfile {
    let mut profile = AgentProfile::new("worker", "Does the work.");
    profile.model = model.map(str::to_owned);
    profile
}

#[tokio::test]
async fn model_aliases_resolve_to_ids_for_a_spawned_child() {
    use ModelKind::{Anthropic, OpenaiResponses};
    let task = |extra: Value| {
        let mut input = json!({"prompt": "CHILD-TASK go", "subagent_type": "worker"});
        input
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        input
    };
    // (the model kind, the agent type's model, the call's model, what the child's request names)
    let cases = [
        // The agent type's Claude Code alias, on an Anthropic model.
        (Anthropic, "sonnet", None, "claude-sonnet-5"),
        // The preset's own alias.
        (OpenaiResponses, "fast", None, "tiny-model"),
        // The call's model beats the agent type's, and is resolved too.
        (
            Anthropic,
            "fast",
            Some("haiku"),
            "claude-haiku-4-5-20251001",
        ),
        // `inherit` in the call leaves the agent type's; in the agent type, the parent's model.
        (Anthropic, "opus", Some("inherit"), "claude-opus-4-8"),
        (Anthropic, "inherit", None, "fake-model"),
        // An id is sent as written.
        (OpenaiResponses, "gpt-5.5", None, "gpt-5.5"),
    ];
    for (kind, agent_model, call_model, expected) in cases {
        let input = task(call_model.map_or_else(|| json!({}), |model| json!({"model": model})));
        let label = format!("{kind:?} {agent_model} {input}");
        let sent = child_sent(kind, agent(Some(agent_model)), input).await;
        assert_eq!(sent, json!({"model": expected}), "{label}");
    }
}

#[tokio::test]
async fn an_agent_types_effort_reaches_the_childs_model_request() {
    let thinker = || {
        let mut profile = agent(None);
        profile.effort = Some(subagent_core::Effort::High);
        profile
    };
    let task = json!({"prompt": "CHILD-TASK go", "subagent_type": "worker"});
    assert_eq!(
        child_sent(ModelKind::Anthropic, thinker(), task.clone()).await,
        json!({"model": "fake-model", "thinking": {"type": "enabled", "budget_tokens": 10000}})
    );
    assert_eq!(
        child_sent(ModelKind::OpenaiResponses, thinker(), task).await,
        json!({"model": "fake-model", "reasoning": {"effort": "high"}})
    );
}

#[tokio::test]
async fn a_spawn_provider_offers_effort_only_on_a_model_that_sends_it() {
    let server = FakeServer::from_yaml("[]").await.unwrap();
    let declared = |kind: ModelKind, chat_takes_it: bool| {
        let mut config = subagent_model::ModelConfig::new(kind, "m").with_base_url(server.url());
        config.reasoning_effort = chat_takes_it;
        let model = subagent_model::build_with_env(&config, |_| Some("k".to_owned())).unwrap();
        let provider = SpawnProvider::new("spawn", model, SpawnConfig::default());
        subagent_core::SubagentProvider::capabilities(&provider).effort
    };
    assert_eq!(
        [
            declared(ModelKind::Anthropic, false),
            declared(ModelKind::OpenaiResponses, false),
            declared(ModelKind::OpenaiChat, true),
            declared(ModelKind::OpenaiChat, false),
        ],
        [true, true, true, false]
    );
    assert!(subagent_spawn::capabilities().effort);
}

const LIMITED: &str = r#"
- name: explorer
  match: "EXPLORE-TASK"
  steps:
    - text: "explored"
- name: lead
  match: "LEAD-TASK"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "PLAN-TASK", subagent_type: "plan"}
    - tool_calls:
        - name: subagent
          input: {prompt: "EXPLORE-TASK", subagent_type: "explore"}
    - text: "lead done"
- name: parent
  match: "please delegate"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "LEAD-TASK", subagent_type: "lead"}
    - text: "parent done"
"#;

#[tokio::test]
async fn agent_in_tools_limits_the_types_a_child_may_start() {
    let server = FakeServer::from_yaml(LIMITED).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let registry = registry_with(&model, 3);
    // What the catalog makes of `tools: read_file, Agent(explore)`.
    let mut lead = AgentProfile::new("lead", "Leads.");
    lead.tool_filter = Some(subagent_core::ToolFilter::allow([
        "read_file",
        "Agent(explore)",
    ]));
    lead.agent_types = Some(vec!["explore".to_owned()]);
    let agents = StaticAgents(vec![
        lead,
        AgentProfile::new("explore", "Explores."),
        AgentProfile::new("plan", "Plans."),
    ]);
    let config = parent_config(
        &model,
        dir.path(),
        &registry,
        DelegationToolConfig::new("spawn"),
        Arc::new(agents),
    );
    let outcome = run(config, "please delegate").await;
    assert_answered(&outcome, "parent done");
    let requests = server.model_requests();
    // The lead kept the delegation tool (and its one other tool) and was refused `plan`,
    // saying which types it may start; `explore` ran.
    let lead = requests_for(&requests, "LEAD-TASK");
    assert_eq!(lead.len(), 3);
    assert_eq!(lead[0].tool_names(), ["read_file", "subagent"]);
    let refused = super::support::last_results(lead[1]);
    assert_eq!(refused.len(), 1);
    let (_, text, is_error) = &refused[0];
    assert!(*is_error);
    assert_eq!(
        text,
        "AGENT_TYPE_NOT_ALLOWED: this agent may not start agent type \"plan\" (allowed: \"explore\")"
    );
    assert!(requests_for(&requests, "PLAN-TASK").is_empty());
    assert_eq!(requests_for(&requests, "EXPLORE-TASK").len(), 1);
    let explored = super::support::last_results(lead[2]);
    assert_eq!(explored[0].1.split("\n\n").next(), Some("explored"));
}
