//! Isolation at the seam: the value a call or an agent type names, the registry's gate, and the
//! isolator's part of a start (prepare before the provider, take over the run after it, abandon
//! on a refusal), with the relayed run's events and cancellation.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use pretty_assertions::assert_eq;
use subagent_core::agents::AgentProfile;
use subagent_core::isolation::{Isolated, Isolator};
use subagent_core::registry::Registry;
use subagent_core::{
    Capabilities, Capability, Error, Isolation, Outcome, Result, Run, RunEvent, StartRequest,
    StopReason, SubagentProvider, WorktreeReport,
};

/// Records the cwd it was started in; finishes at once, or waits for a cancel.
struct Recording {
    cwds: Mutex<Vec<PathBuf>>,
    refuse: bool,
    wait: bool,
}

impl Recording {
    fn new(refuse: bool, wait: bool) -> Arc<Self> {
        Arc::new(Self {
            cwds: Mutex::new(Vec::new()),
            refuse,
            wait,
        })
    }
}

#[async_trait]
impl SubagentProvider for Recording {
    fn name(&self) -> &str {
        "recording"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE.with(Capability::Isolation, true)
    }

    async fn start(&self, request: StartRequest) -> Result<Run> {
        self.cwds.lock().unwrap().push(request.parent.cwd.clone());
        if self.refuse {
            return Err(Error::spawn_failed("no binary"));
        }
        let (sender, run) = Run::channel("recording", &request);
        let wait = self.wait;
        tokio::spawn(async move {
            sender.emit(RunEvent::Text {
                text: "working".into(),
                parent_tool_use_id: None,
            });
            if wait {
                sender.cancel_token().cancelled().await;
                sender.finish(Outcome::cancelled());
            } else {
                sender.finish(Outcome::completed("done"));
            }
        });
        Ok(run)
    }
}

/// Moves the child into `/isolated/<prompt>` and records what it is asked to do.
#[derive(Default)]
struct Moving {
    log: Arc<Mutex<Vec<String>>>,
    refuse: bool,
}

struct Moved {
    path: PathBuf,
    log: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Isolator for Moving {
    async fn prepare(
        &self,
        isolation: Isolation,
        request: &mut StartRequest,
    ) -> Result<Box<dyn Isolated>> {
        self.log.lock().unwrap().push(format!(
            "prepare {isolation} from {}",
            request.parent.cwd.display()
        ));
        if self.refuse {
            return Err(Error::invalid("not a git repository"));
        }
        let path = PathBuf::from("/isolated").join(request.prompt_text());
        request.parent.cwd.clone_from(&path);
        Ok(Box::new(Moved {
            path,
            log: Arc::clone(&self.log),
        }))
    }
}

#[async_trait]
impl Isolated for Moved {
    fn attach(self: Box<Self>, run: Run) -> Run {
        let (sender, relayed) = Run::relay(&run);
        tokio::spawn(async move {
            let mut outcome = sender.forward(run).await;
            self.log
                .lock()
                .unwrap()
                .push(format!("cleanup after {}", outcome.status));
            outcome.worktree = Some(WorktreeReport {
                path: self.path.clone(),
                branch: "subagent/test".into(),
                diffstat: " a | 1 +".into(),
            });
            sender.finish(outcome);
        });
        relayed
    }

    async fn abandon(self: Box<Self>) {
        self.log.lock().unwrap().push("abandon".into());
    }
}

fn registry_of(provider: Arc<Recording>, isolator: Option<Arc<Moving>>) -> Registry {
    let mut registry = Registry::new();
    registry.register(provider).unwrap();
    if let Some(isolator) = isolator {
        registry.set_isolator(isolator);
    }
    registry
}

fn request(prompt: &str) -> StartRequest {
    StartRequest::builder(prompt)
        .cwd("/parent/checkout")
        .isolation(Isolation::Worktree)
        .build()
}

#[test]
fn worktree_is_the_one_isolation_and_other_values_name_it() {
    assert_eq!(Isolation::parse("worktree"), Ok(Isolation::Worktree));
    assert_eq!(
        Isolation::parse("remote"),
        Err(Error::invalid(
            "isolation \"remote\" is not available (valid: worktree)"
        ))
    );
    let mut typed = AgentProfile::new("isolated", "works apart");
    typed.isolation = Some("worktree".into());
    let mut remote = AgentProfile::new("far", "works far away");
    remote.isolation = Some("remote".into());
    let plain = AgentProfile::new("plain", "plain");
    // The call's value wins; else the agent type's; else none.
    assert_eq!(
        Isolation::resolve(None, Some(&typed)),
        Ok(Some(Isolation::Worktree))
    );
    assert_eq!(
        Isolation::resolve(Some("worktree"), Some(&plain)),
        Ok(Some(Isolation::Worktree))
    );
    assert_eq!(Isolation::resolve(None, Some(&plain)), Ok(None));
    assert_eq!(Isolation::resolve(None, None), Ok(None));
    assert_eq!(
        Isolation::resolve(None, Some(&remote)),
        Err(Error::invalid(
            "agent type \"far\" asks for isolation \"remote\", which is not available (valid: worktree)"
        ))
    );
    assert_eq!(
        Isolation::resolve(Some("none"), Some(&typed)).map_err(|e| e.to_string()),
        Err("invalid arguments: isolation \"none\" is not available (valid: worktree)".into())
    );
    assert_eq!(
        serde_json::to_value(Isolation::Worktree).unwrap(),
        serde_json::json!("worktree")
    );
}

#[tokio::test]
async fn without_an_isolator_isolation_is_refused_and_nothing_starts() {
    let provider = Recording::new(false, false);
    let registry = registry_of(Arc::clone(&provider), None);
    let error = registry.start("recording", request("a")).await.unwrap_err();
    assert_eq!(
        error,
        Error::invalid(
            "isolation \"worktree\" is not available here: no isolator is installed in the registry"
        )
    );
    assert_eq!(*provider.cwds.lock().unwrap(), Vec::<PathBuf>::new());
}

#[tokio::test]
async fn the_capability_gate_comes_before_the_isolator() {
    struct Bare;
    #[async_trait]
    impl SubagentProvider for Bare {
        fn name(&self) -> &str {
            "bare"
        }
        fn capabilities(&self) -> Capabilities {
            Capabilities::NONE
        }
        async fn start(&self, _: StartRequest) -> Result<Run> {
            unreachable!("refused by the gate")
        }
    }
    let isolator = Arc::new(Moving::default());
    let mut registry = Registry::new();
    registry.register(Arc::new(Bare)).unwrap();
    registry.set_isolator(isolator.clone());
    let error = registry.start("bare", request("a")).await.unwrap_err();
    assert_eq!(
        error,
        Error::UnsupportedCapability {
            provider: "bare".into(),
            missing: vec![Capability::Isolation],
            because: None,
        }
    );
    assert_eq!(*isolator.log.lock().unwrap(), Vec::<String>::new());
}

#[tokio::test]
async fn the_provider_starts_in_the_isolated_place_and_the_outcome_reports_it() {
    let provider = Recording::new(false, false);
    let isolator = Arc::new(Moving::default());
    let registry = registry_of(Arc::clone(&provider), Some(isolator.clone()));
    let mut run = registry.start("recording", request("one")).await.unwrap();
    let id = run.id();
    let events: Vec<RunEvent> = run.take_events().unwrap().collect().await;
    let outcome = run.outcome().await;
    assert_eq!(
        *provider.cwds.lock().unwrap(),
        vec![PathBuf::from("/isolated/one")]
    );
    // One Started (the child's, with its id) and one Finished, the events in between passed on.
    assert_eq!(
        events,
        vec![
            RunEvent::Started {
                run_id: id,
                provider: "recording".into(),
                description: "one".into()
            },
            RunEvent::Text {
                text: "working".into(),
                parent_tool_use_id: None
            },
            RunEvent::Finished {
                status: StopReason::Completed
            }
        ]
    );
    assert_eq!(
        (outcome.text.as_str(), outcome.worktree),
        (
            "done",
            Some(WorktreeReport {
                path: PathBuf::from("/isolated/one"),
                branch: "subagent/test".into(),
                diffstat: " a | 1 +".into(),
            })
        )
    );
    assert_eq!(
        *isolator.log.lock().unwrap(),
        [
            "prepare worktree from /parent/checkout",
            "cleanup after completed"
        ]
    );
}

#[tokio::test]
async fn cancelling_the_relayed_run_cancels_the_child_and_still_cleans_up() {
    let provider = Recording::new(false, true);
    let isolator = Arc::new(Moving::default());
    let registry = registry_of(Arc::clone(&provider), Some(isolator.clone()));
    let run = registry.start("recording", request("two")).await.unwrap();
    run.cancel();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Cancelled);
    assert!(outcome.worktree.is_some());
    assert_eq!(
        *isolator.log.lock().unwrap(),
        [
            "prepare worktree from /parent/checkout",
            "cleanup after cancelled"
        ]
    );
}

#[tokio::test]
async fn a_refused_start_abandons_the_place_and_a_refusing_isolator_starts_nothing() {
    let provider = Recording::new(true, false);
    let isolator = Arc::new(Moving::default());
    let registry = registry_of(Arc::clone(&provider), Some(isolator.clone()));
    let error = registry
        .start("recording", request("three"))
        .await
        .unwrap_err();
    assert_eq!(error, Error::spawn_failed("no binary"));
    assert_eq!(
        *isolator.log.lock().unwrap(),
        ["prepare worktree from /parent/checkout", "abandon"]
    );

    let provider = Recording::new(false, false);
    let isolator = Arc::new(Moving {
        refuse: true,
        ..Moving::default()
    });
    let registry = registry_of(Arc::clone(&provider), Some(isolator));
    let error = registry
        .start("recording", request("four"))
        .await
        .unwrap_err();
    assert_eq!(error, Error::invalid("not a git repository"));
    assert_eq!(*provider.cwds.lock().unwrap(), Vec::<PathBuf>::new());
}
