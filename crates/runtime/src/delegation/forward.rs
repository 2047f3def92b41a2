//! A child's events in its parent's stream: tagged with the delegation call's id, redacted
//! where they bypass a redacting emitter, and forwarded while a foreground call waits.

use futures::{FutureExt, StreamExt};
use subagent_core::{Outcome, Run};

use crate::report::forwarded;
use crate::tools::ToolContext;

/// [`forward_until_outcome`] for at most `limit_ms`: the outcome, or the run still going and
/// what is left of its events (the run's events end when it does, before its outcome).
pub(super) async fn forward_until(
    mut run: Run,
    context: &ToolContext,
    limit_ms: u64,
) -> std::result::Result<Outcome, (Run, subagent_core::RunEvents)> {
    let Some(mut events) = run.take_events() else {
        return Ok(run.outcome().await);
    };
    let limit = tokio::time::sleep(std::time::Duration::from_millis(limit_ms));
    let mut limit = std::pin::pin!(limit);
    loop {
        tokio::select! {
            biased;
            event = events.next() => match event {
                Some(event) => {
                    if let Some(event) = forwarded(event, &context.call_id) {
                        context.events.emit(event);
                    }
                }
                None => return Ok(run.outcome().await),
            },
            () = &mut limit => return Err((run, events)),
        }
    }
}

/// Waits for a foreground child's outcome, forwarding its events into the parent's stream
/// meanwhile (and those still queued when it ends).
pub(super) async fn forward_until_outcome(mut run: Run, context: &ToolContext) -> Outcome {
    let Some(mut events) = run.take_events() else {
        return run.outcome().await;
    };
    let outcome = run.outcome();
    let mut outcome = std::pin::pin!(outcome);
    let mut open = true;
    let outcome = loop {
        tokio::select! {
            biased;
            event = events.next(), if open => match event {
                Some(event) => {
                    if let Some(event) = forwarded(event, &context.call_id) {
                        context.events.emit(event);
                    }
                }
                None => open = false,
            },
            outcome = &mut outcome => break outcome,
        }
    };
    while open && let Some(Some(event)) = events.next().now_or_never() {
        if let Some(event) = forwarded(event, &context.call_id) {
            context.events.emit(event);
        }
    }
    outcome
}
