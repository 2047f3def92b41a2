//! `Run::channel`: the outcome always resolves, whatever the provider does.

use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use pretty_assertions::assert_eq;
use subagent_core::registry::Registry;
use subagent_core::{
    Capabilities, Outcome, Result, Run, RunEvent, StartRequest, StopReason, SubagentProvider,
};

/// What the test provider does after starting.
#[derive(Clone, Copy)]
enum Behaviour {
    Panic,
    DropSender,
    WaitForCancel,
    Finish,
}

struct Provider(Behaviour);

#[async_trait]
impl SubagentProvider for Provider {
    fn name(&self) -> &str {
        "test"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }

    async fn start(&self, request: StartRequest) -> Result<Run> {
        let (sender, run) = Run::channel("test", &request);
        let behaviour = self.0;
        tokio::spawn(async move {
            sender.emit(RunEvent::Text {
                text: "working".into(),
                parent_tool_use_id: None,
            });
            match behaviour {
                Behaviour::Panic => panic!("provider bug"),
                Behaviour::DropSender => drop(sender),
                Behaviour::WaitForCancel => {
                    sender.cancel_token().cancelled().await;
                    let mut outcome = Outcome::cancelled();
                    outcome.text = "partial".into();
                    sender.finish(outcome);
                }
                Behaviour::Finish => {
                    let mut outcome = Outcome::completed("done");
                    outcome.diagnostic =
                        Some("\u{1b}[31mred\u{1b}[0m key sk-ant-abcdefghijkl".into());
                    sender.finish(outcome);
                }
            }
        });
        Ok(run)
    }
}

async fn start(behaviour: Behaviour) -> Run {
    let registry = Registry::new();
    registry.register(Arc::new(Provider(behaviour))).unwrap();
    registry
        .start("test", StartRequest::new("task", "/tmp"))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_panicking_provider_yields_failed() {
    let outcome = start(Behaviour::Panic).await.outcome().await;
    assert_eq!(outcome.status, StopReason::Failed);
    assert_eq!(
        outcome.diagnostic.as_deref(),
        Some("the provider's task panicked before the run finished")
    );
}

#[tokio::test]
async fn a_dropped_sender_yields_failed() {
    let mut run = start(Behaviour::DropSender).await;
    let events: Vec<RunEvent> = run.take_events().unwrap().collect().await;
    assert!(matches!(
        events.last(),
        Some(RunEvent::Finished {
            status: StopReason::Failed
        })
    ));
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Failed);
    assert_eq!(
        outcome.diagnostic.as_deref(),
        Some("the provider dropped the run without reporting an outcome")
    );
}

#[tokio::test]
async fn cancel_reaches_the_provider_and_yields_cancelled() {
    let run = start(Behaviour::WaitForCancel).await;
    run.cancel();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Cancelled);
    assert_eq!(outcome.text, "partial");
}

#[tokio::test]
async fn cancelling_the_request_token_cancels_the_run_but_not_the_other_way() {
    let registry = Registry::new();
    registry
        .register(Arc::new(Provider(Behaviour::WaitForCancel)))
        .unwrap();
    let request = StartRequest::new("task", "/tmp");
    let parent_token = request.cancel.clone();
    let run = registry.start("test", request).await.unwrap();
    parent_token.cancel();
    assert_eq!(run.outcome().await.status, StopReason::Cancelled);

    let request = StartRequest::new("task", "/tmp");
    let parent_token = request.cancel.clone();
    let run = registry.start("test", request).await.unwrap();
    run.cancel();
    assert_eq!(run.outcome().await.status, StopReason::Cancelled);
    assert!(!parent_token.is_cancelled());
}

#[tokio::test]
async fn events_arrive_in_order_and_the_outcome_is_sanitized() {
    let mut run = start(Behaviour::Finish).await;
    let id = run.id();
    let events: Vec<RunEvent> = run.take_events().unwrap().collect().await;
    assert_eq!(
        events,
        vec![
            RunEvent::Started {
                run_id: id,
                provider: "test".into(),
                description: "task".into()
            },
            RunEvent::Text {
                text: "working".into(),
                parent_tool_use_id: None
            },
            RunEvent::Finished {
                status: StopReason::Completed
            },
        ]
    );
    assert!(run.take_events().is_none());
    let outcome = run.outcome().await;
    assert_eq!(outcome.text, "done");
    assert_eq!(outcome.diagnostic.as_deref(), Some("red key sk-[redacted]"));
}

/// The diagnostic a provider finishes with, as the caller reads it.
async fn diagnostic_seen(diagnostic: &str) -> String {
    let (sender, run) = Run::channel("test", &StartRequest::new("task", "/tmp"));
    sender.finish(Outcome::failed(diagnostic));
    run.outcome().await.diagnostic.unwrap()
}

#[tokio::test]
async fn diagnostics_are_bounded_on_a_char_boundary() {
    let clean = diagnostic_seen(&"ü".repeat(5000)).await;
    assert!(clean.len() <= subagent_core::DIAGNOSTIC_LIMIT);
    assert!(clean.ends_with("…[truncated]"));
    assert_eq!(
        diagnostic_seen("a\u{7}b\r\nBearer abcdefghijklmnop c").await,
        "ab\nBearer [redacted] c"
    );
}

/// What an observer saw, and whether the outcome waited for what it returned.
#[derive(Default)]
struct Seen {
    events: std::sync::Mutex<Vec<String>>,
    ended: std::sync::Mutex<Option<StopReason>>,
    waited: Arc<std::sync::atomic::AtomicBool>,
}

impl subagent_core::RunObserver for Seen {
    fn event(&self, event: &RunEvent) {
        let kind = serde_json::to_value(event).unwrap()["type"]
            .as_str()
            .unwrap()
            .to_owned();
        self.events.lock().unwrap().push(kind);
    }

    fn ended(&self, outcome: &Outcome) -> Option<futures::future::BoxFuture<'static, ()>> {
        *self.ended.lock().unwrap() = Some(outcome.status);
        let waited = Arc::clone(&self.waited);
        Some(Box::pin(async move {
            tokio::task::yield_now().await;
            waited.store(true, std::sync::atomic::Ordering::SeqCst);
        }))
    }
}

/// An observer is told each event as the caller's stream yields it, and the outcome before
/// `outcome()` returns it, after what it returned is awaited.
#[tokio::test]
async fn an_observer_sees_what_the_caller_takes_and_the_outcome_waits_for_it() {
    let mut run = start(Behaviour::Finish).await;
    let seen = Arc::new(Seen::default());
    run.observe(Arc::clone(&seen) as Arc<dyn subagent_core::RunObserver>);
    let mut events = run.take_events().unwrap();
    let first = events.next().await.unwrap();
    assert!(matches!(first, RunEvent::Started { .. }));
    // Only what the caller took so far.
    assert_eq!(*seen.events.lock().unwrap(), ["started"]);
    while events.next().await.is_some() {}
    assert_eq!(
        *seen.events.lock().unwrap(),
        ["started", "text", "finished"]
    );
    assert_eq!(*seen.ended.lock().unwrap(), None);
    let outcome = run.outcome().await;
    assert_eq!(*seen.ended.lock().unwrap(), Some(outcome.status));
    assert!(seen.waited.load(std::sync::atomic::Ordering::SeqCst));
}
