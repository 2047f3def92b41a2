//! Admission (`max_starting`) against the real `claude`: past the bound a child waits, queued,
//! and starts once one before it has started; a queued child cancelled starts nothing.

use pretty_assertions::assert_eq;
use subagent_core::{RunEvent, StopReason, SubagentProvider};

use super::harness::{Harness, finish};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_bound_a_child_waits_queued_and_a_cancelled_one_starts_nothing() {
    let h = Harness::new().await;
    let provider = h.provider(|config| config.max_starting = Some(1));
    // The first starts at once; the second finds no room while claude boots.
    let first = provider.start(h.request("say hi").build()).await.unwrap();
    let second = provider.start(h.request("say hi").build()).await.unwrap();
    let third = provider.start(h.request("say hi").build()).await.unwrap();
    // The third is cancelled while it waits: nothing of it starts.
    third.cancel();
    let (third_events, third_outcome) = finish(third).await;
    assert_eq!(
        third_outcome.status,
        StopReason::Cancelled,
        "{third_outcome:?}"
    );
    assert!(
        matches!(third_events.get(1), Some(RunEvent::Queued { .. })),
        "{third_events:?}"
    );
    let (first_events, first_outcome) = finish(first).await;
    let (second_events, second_outcome) = finish(second).await;
    assert_eq!(
        (first_outcome.text.as_str(), second_outcome.text.as_str()),
        ("hi from fake", "hi from fake")
    );
    assert!(
        !first_events
            .iter()
            .any(|event| matches!(event, RunEvent::Queued { .. })),
        "{first_events:?}"
    );
    assert!(
        matches!(second_events.get(1), Some(RunEvent::Queued { ahead: 0 })),
        "{second_events:?}"
    );
    // Two children asked the model; the cancelled one never ran.
    assert_eq!(h.model_requests().len(), 2);
}
