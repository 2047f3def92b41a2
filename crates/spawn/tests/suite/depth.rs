//! Depth: the refusal at the cap (before argument validation), and the registry's cap holding
//! even for a provider that ignores depth and delegates again.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use subagent_core::registry::Registry;
use subagent_core::{
    Capabilities, Error, Outcome, Run, StartRequest, StopReason, SubagentProvider,
};
use subagent_model::ModelKind;
use subagent_runtime::{DelegationToolConfig, NESTED_REFUSAL};

use super::support::{Parent, run};
use super::support::{agents, last_results, requests_for};

const NESTED: &str = r#"
- name: child
  match: "CHILD-AT-CAP"
  steps:
    - tool_calls:
        - name: subagent
          input: {not_a_field: true}
    - text: "did it myself"
- name: parent
  match: "delegate once"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "CHILD-AT-CAP work"}
    - text: "parent done"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_at_the_depth_cap_is_refused_before_its_arguments_are_read() {
    // Cap 1: the top-level agent may delegate, its child (depth 1) may not.
    let parent = Parent::start(NESTED, ModelKind::Anthropic, 1).await;
    let (server, _registry) = (&parent.server, &parent.registry);
    let outcome = parent.run("delegate once").await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    let requests = server.model_requests();
    let child = requests_for(&requests, "CHILD-AT-CAP");
    assert_eq!(child.len(), 2);
    // At its cap the child is given no delegation tool; its call anyway, with invalid
    // arguments, is answered with the refusal and its code: depth is decided first.
    assert!(!child[0].tool_names().contains(&"subagent".to_owned()));
    let results = last_results(child[1]);
    assert_eq!(
        results
            .into_iter()
            .map(|(_, text, is_error)| (text, is_error))
            .collect::<Vec<_>>(),
        vec![(
            format!(
                "NESTED_DELEGATION_FORBIDDEN: nested delegation is forbidden: {NESTED_REFUSAL}"
            ),
            true
        )]
    );
}

/// A provider that ignores depth: every start immediately tries to start itself again, one
/// level deeper, through the registry.
struct Rogue {
    registry: OnceLock<Weak<Registry>>,
    starts: AtomicUsize,
    refusals: Mutex<Vec<Error>>,
}

#[async_trait]
impl SubagentProvider for Rogue {
    fn name(&self) -> &str {
        "rogue"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }

    async fn start(&self, request: StartRequest) -> Result<Run, Error> {
        self.starts.fetch_add(1, Ordering::SeqCst);
        let registry = self.registry.get().and_then(Weak::upgrade).unwrap();
        let again = StartRequest::builder("again")
            .depth(request.child_depth())
            .build();
        match registry.start("rogue", again).await {
            Ok(run) => {
                let _ = run.outcome().await;
            }
            Err(error) => self.refusals.lock().unwrap().push(error),
        }
        let (sender, run) = Run::channel("rogue", &request);
        sender.finish(Outcome::completed("rogue finished"));
        Ok(run)
    }
}

const ROGUE: &str = r#"
- name: parent
  match: "go rogue"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "anything"}
    - text: "parent done"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_caps_depth_even_for_a_provider_that_ignores_it() {
    let parent = Parent::start(ROGUE, ModelKind::Anthropic, 2).await;
    let registry = &parent.registry;
    let rogue = Arc::new(Rogue {
        registry: OnceLock::new(),
        starts: AtomicUsize::new(0),
        refusals: Mutex::new(Vec::new()),
    });
    rogue.registry.set(Arc::downgrade(registry)).unwrap();
    registry
        .register(Arc::clone(&rogue) as Arc<dyn SubagentProvider>)
        .unwrap();
    let config = parent.config_with(DelegationToolConfig::new("rogue"), agents());
    let outcome = run(config, "go rogue").await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    // Depth 1 (from the tool) and depth 2 (the rogue's own); depth 3 was refused.
    assert_eq!(rogue.starts.load(Ordering::SeqCst), 2);
    assert_eq!(
        *rogue.refusals.lock().unwrap(),
        vec![Error::DepthExceeded {
            child_depth: 3,
            max_depth: 2
        }]
    );
}

/// A provider that enforces depth itself (declares `depth_limit`) and records the requests it
/// is given.
struct Capped {
    requests: Mutex<Vec<StartRequest>>,
}

#[async_trait]
impl SubagentProvider for Capped {
    fn name(&self) -> &str {
        "capped"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE.with(subagent_core::Capability::DepthLimit, true)
    }

    async fn start(&self, request: StartRequest) -> Result<Run, Error> {
        let (sender, run) = Run::channel("capped", &request);
        self.requests.lock().unwrap().push(request);
        sender.finish(Outcome::completed("capped finished"));
        Ok(run)
    }
}

/// A child started at the registry's cap by a parent whose own cap is the registry's (what the
/// CLI builds) must be told the cap: a provider with nested delegation of its own (Claude
/// Code's sub-agents) keeps it only without one, and would nest past the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_with_depth_limit_is_always_told_the_cap() {
    let parent = Parent::start(ROGUE, ModelKind::Anthropic, 1).await;
    let registry = &parent.registry;
    let capped = Arc::new(Capped {
        requests: Mutex::new(Vec::new()),
    });
    registry
        .register(Arc::clone(&capped) as Arc<dyn SubagentProvider>)
        .unwrap();
    let mut config = parent.config_with(DelegationToolConfig::new("capped"), agents());
    config.max_depth = registry.max_depth();
    let outcome = run(config, "go rogue").await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    let requests = capped.requests.lock().unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].child_depth(), 1);
    assert_eq!(requests[0].max_depth, Some(1));
}

/// A child never runs looser than its parent, whatever runs it: the request carries the
/// parent's mode (tightened by the agent type's) as its permission ceiling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_parents_permission_mode_is_the_childs_ceiling() {
    for (parent_mode, expected) in [
        (
            subagent_core::PermissionMode::Plan,
            subagent_core::PermissionMode::Plan,
        ),
        (
            subagent_core::PermissionMode::AcceptEdits,
            subagent_core::PermissionMode::AcceptEdits,
        ),
        (
            subagent_core::PermissionMode::Bypass,
            subagent_core::PermissionMode::Bypass,
        ),
    ] {
        let parent = Parent::start(ROGUE, ModelKind::Anthropic, 2).await;
        let registry = &parent.registry;
        let capped = Arc::new(Capped {
            requests: Mutex::new(Vec::new()),
        });
        registry
            .register(Arc::clone(&capped) as Arc<dyn SubagentProvider>)
            .unwrap();
        let mut config = parent.config_with(DelegationToolConfig::new("capped"), agents());
        config.permissions = subagent_runtime::PermissionPolicy::new(parent_mode);
        let outcome = run(config, "go rogue").await;
        assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
        let requests = capped.requests.lock().unwrap();
        assert_eq!(
            requests[0].permission_ceiling,
            Some(expected),
            "{parent_mode}"
        );
    }
}
