//! Routing between providers: a parent's delegation tool over a registry holding both in-process
//! providers, spawn and fork, wired to the fake model server.
//!
//! These tests need two providers at once, so they live here, in the one crate that links every
//! provider: a provider crate never depends on another, not even for its tests
//! (`cargo xtask tidy`).

use std::path::Path;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use subagent_core::agents::{AgentProfile, StaticAgents};
use subagent_core::registry::Registry;
use subagent_core::{CancellationToken, Outcome, StopReason};
use subagent_fork::{ForkConfig, ForkProvider, fork_task_text};
use subagent_model::{Model, ModelKind};
use subagent_runtime::{Agent, AgentConfig, DelegationToolConfig, FORK_PREAMBLE};
use subagent_session::ContentBlock;
use subagent_spawn::{DEFAULT_SYSTEM_PROMPT, SpawnConfig, SpawnProvider};
use subagent_test_support::parent::{has_text_starting, last_results, read_only_agents};
use subagent_test_support::{FakeServer, RecordedRequest, requests_for};

const PARENT_SYSTEM: &str = "You are the parent.";

fn model(server: &FakeServer) -> Arc<dyn Model> {
    server.model(ModelKind::Anthropic)
}

/// A registry with `spawn` and `fork`.
fn registry(model: &Arc<dyn Model>) -> Arc<Registry> {
    let registry = Registry::with_max_depth(3);
    let spawn = SpawnProvider::new("spawn", Arc::clone(model), SpawnConfig::default());
    registry.register(Arc::new(spawn)).unwrap();
    let fork = ForkProvider::new("fork", ForkConfig::default(), None);
    registry.register(Arc::new(fork)).unwrap();
    Arc::new(registry)
}

subagent_test_support::delegating_parent!();

/// A parent on `model` in `dir` with the delegation tool of `row` on `registry` offering
/// `agents`.
fn parent_config(
    model: &Arc<dyn Model>,
    dir: &Path,
    registry: &Arc<Registry>,
    row: DelegationToolConfig,
    agents: Vec<AgentProfile>,
) -> AgentConfig {
    let agents = Arc::new(StaticAgents(agents));
    delegating_parent(model, dir, registry, row, agents, PARENT_SYSTEM)
}

/// Runs a parent of `config` on `prompt` to its outcome, which must be completed.
async fn completed(config: AgentConfig, prompt: &str) -> Outcome {
    let outcome = Agent::new(config)
        .unwrap()
        .start_prompt(prompt, CancellationToken::new())
        .outcome()
        .await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    outcome
}

const ROUTES: &str = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "parent heard back"
- name: fork-child
  match: "FORK-JOB"
  steps:
    - text: "fork report"
- name: spawn-child
  match: "SPAWN-JOB"
  steps:
    - text: "spawn report"
- name: parent
  match: "route both"
  steps:
    - tool_calls:
        - {id: call_fork, name: subagent, input: {prompt: "FORK-JOB look around"}}
        - {id: call_spawn, name: subagent, input: {prompt: "SPAWN-JOB look around", subagent_type: explore}}
    - text: "waiting for the fork"
"#;

/// A row whose provider is spawn and whose fork is fork: a call without a type forks (the
/// child continues the parent's conversation), a typed call starts fresh on spawn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untyped_call_forks_and_a_typed_call_spawns() {
    let server = FakeServer::from_yaml(ROUTES).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(&server);
    let registry = registry(&model);
    let mut row = DelegationToolConfig::new("spawn");
    row.fork = Some("fork".to_owned());
    let config = parent_config(&model, dir.path(), &registry, row, read_only_agents());
    let outcome = completed(config, "please route both").await;
    assert_eq!(outcome.text, "parent heard back");
    assert_eq!(server.violations(), Vec::<String>::new());

    let requests = server.model_requests();
    let parent_first = &requests[0];
    // The fork: the parent's system prompt and tools, its prompt and its calling message, then
    // the placeholder results with the fork's task.
    let forks: Vec<&RecordedRequest> = requests
        .iter()
        .filter(|r| has_text_starting(r, FORK_PREAMBLE))
        .collect();
    assert_eq!(forks.len(), 1, "the fork made one model call");
    let fork = forks[0];
    let (parent_body, fork_body) = (
        parent_first.body.as_ref().unwrap(),
        fork.body.as_ref().unwrap(),
    );
    assert_eq!(fork_body["system"], parent_body["system"]);
    assert_eq!(fork_body["tools"], parent_body["tools"]);
    assert_eq!(fork.messages.len(), 3);
    assert_eq!(fork.messages[0], parent_first.messages[0]);
    assert_eq!(
        fork.messages[2]
            .content
            .last()
            .and_then(ContentBlock::as_text),
        Some(fork_task_text("FORK-JOB look around", None).as_str())
    );
    // The typed call: a fresh conversation on spawn, with explore's tools.
    let spawned = requests_for(&requests, "SPAWN-JOB look around")
        .into_iter()
        .filter(|r| r.messages.len() == 1)
        .collect::<Vec<_>>();
    assert_eq!(spawned.len(), 1);
    let system = spawned[0].body.as_ref().unwrap()["system"].to_string();
    assert!(system.contains(DEFAULT_SYSTEM_PROMPT), "{system}");
    assert!(!system.contains(PARENT_SYSTEM), "{system}");
    // No delegation tool: nesting is opt-in.
    assert_eq!(spawned[0].tool_names(), ["ls", "read_file", "glob", "grep"]);
    // The parent got the spawn child's report and the fork's start notice, in call order.
    let parent_second = requests
        .iter()
        .find(|r| {
            !has_text_starting(r, FORK_PREAMBLE)
                && r.messages.len() == 3
                && r.messages[0] == parent_first.messages[0]
        })
        .unwrap();
    assert_eq!(fork.messages[1], parent_second.messages[1]);
    let results = last_results(parent_second);
    assert_eq!(
        results
            .iter()
            .map(|(id, _, is_error)| (id.as_str(), *is_error))
            .collect::<Vec<_>>(),
        [("call_fork", false), ("call_spawn", false)]
    );
    assert!(
        results[0].1.starts_with("Started background subagent"),
        "{}",
        results[0].1
    );
    assert!(
        results[1].1.starts_with("spawn report\n\n<usage>"),
        "{}",
        results[1].1
    );
}

const TYPES: &str = r#"
- name: explore-child
  match: "EXPLORE-TASK"
  steps:
    - tool_calls:
        - name: write_file
          input: {path: "explore.txt", content: "x"}
    - text: "explore could not write"
- name: plan-child
  match: "PLAN-TASK"
  steps:
    - tool_calls:
        - name: write_file
          input: {path: "plan.txt", content: "x"}
        - name: bash
          input: {command: "touch plan-bash.txt"}
    - text: "plan could not write"
- name: parent
  match: "use the types"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "EXPLORE-TASK look", subagent_type: explore}
        - name: subagent
          input: {prompt: "PLAN-TASK think", subagent_type: plan}
        - name: subagent
          input: {prompt: "nothing", subagent_type: nope}
        - name: subagent
          input: {prompt: "nothing", subagent_type: forky}
    - text: "parent done"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_types_explore_and_plan_cannot_write_and_unknown_types_are_listed() {
    let server = FakeServer::from_yaml(TYPES).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(&server);
    let registry = registry(&model);
    let mut profiles = read_only_agents();
    let mut forky = AgentProfile::new("forky", "A type whose provider cannot take a persona.");
    forky.provider = Some("fork".into());
    forky.instructions = Some("Be brief.".into());
    profiles.push(forky);
    let config = parent_config(
        &model,
        dir.path(),
        &registry,
        DelegationToolConfig::new("spawn"),
        profiles,
    );
    let description = config.tools.get("subagent").unwrap().spec().description;
    assert!(description.contains("- explore: Read-only search of the code."));
    assert!(description.contains("fresh context"));
    completed(config, "use the types").await;
    for file in ["explore.txt", "plan.txt", "plan-bash.txt"] {
        assert!(!dir.path().join(file).exists(), "{file} was written");
    }
    let requests = server.model_requests();
    // No delegation tool either: nesting is opt-in.
    let read_only = ["ls", "read_file", "glob", "grep"];
    for marker in ["EXPLORE-TASK", "PLAN-TASK"] {
        let child = requests_for(&requests, marker);
        assert_eq!(child.len(), 2, "{marker}");
        // The filtered tools are absent from what the model sees.
        assert_eq!(child[0].tool_names(), read_only, "{marker}");
        for (_, text, is_error) in last_results(child[1]) {
            assert!(is_error);
            assert!(text.starts_with("No tool named"), "{text}");
        }
    }
    let parent_second = requests_for(&requests, "use the types")
        .into_iter()
        .find(|r| r.messages.len() == 3)
        .unwrap();
    let results = last_results(parent_second);
    assert!(results[0].1.starts_with("explore could not write"));
    assert!(results[1].1.starts_with("plan could not write"));
    assert_eq!(
        results[2].1,
        r#"UNKNOWN_AGENT_TYPE: unknown agent type "nope" (available: "explore", "plan", "forky")"#
    );
    assert!(results[2].2);
    assert_eq!(
        results[3].1,
        r#"UNSUPPORTED_CAPABILITY: subagent provider "fork" does not support the capability: "persona""#
    );
}
