//! A child's events in its parent's stream: tagged with the delegation call's id, redacted
//! where they bypass a redacting emitter, and forwarded while a foreground call waits.

use futures::{FutureExt, StreamExt};
use subagent_core::{Outcome, Run, RunEvent};

use crate::tools::ToolContext;

/// The child's event as the parent reports it: its text, tool calls, tool results and usage,
/// tagged with the delegation call's id (a grandchild's keep the id of the call nearest to
/// them), so a live view can say who is working and count a child's tokens apart from the
/// parent's. Lifecycle, task and thinking events stay the child's own.
fn forwarded(event: RunEvent, call_id: &str) -> Option<RunEvent> {
    let tag = |id: Option<String>| Some(id.unwrap_or_else(|| call_id.to_owned()));
    match event {
        RunEvent::Text {
            text,
            parent_tool_use_id,
        } => Some(RunEvent::Text {
            text,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        RunEvent::ToolCall {
            id,
            name,
            input,
            parent_tool_use_id,
        } => Some(RunEvent::ToolCall {
            id,
            name,
            input,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        RunEvent::ToolResult {
            id,
            output,
            is_error,
            parent_tool_use_id,
        } => Some(RunEvent::ToolResult {
            id,
            output,
            is_error,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        RunEvent::Usage {
            usage,
            parent_tool_use_id,
        } => Some(RunEvent::Usage {
            usage,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        RunEvent::Summary {
            text,
            parent_tool_use_id,
        } => Some(RunEvent::Summary {
            text,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        // A child's own progress (a product CLI's retry, a plan, a lost attempt): its line in
        // the parent's view, under the child's name.
        RunEvent::Progress {
            message,
            parent_tool_use_id,
        } => Some(RunEvent::Progress {
            message,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        _ => None,
    }
}

/// [`forwarded`], with the configured secrets redacted from what the event carries as text (the
/// child's text, its tool results and its summaries): for a child's events that reach the
/// parent's stream without passing through a redacting emitter (a background task's, a
/// teammate's).
pub fn forwarded_clean(
    event: RunEvent,
    call_id: &str,
    secrets: &crate::Secrets,
) -> Option<RunEvent> {
    forwarded(event, call_id).map(|event| crate::agent::redacted(secrets, event))
}

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

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// A child's own progress (a product CLI's retry, a plan) reaches the parent's stream under
    /// the delegation's call, so `subagent run` gives it a line named after the child; a
    /// grandchild's keeps its own call.
    #[test]
    fn a_childs_progress_is_forwarded_under_its_call() {
        assert_eq!(
            forwarded(RunEvent::progress("codex event turn.started"), "c1"),
            Some(RunEvent::Progress {
                message: "codex event turn.started".into(),
                parent_tool_use_id: Some("c1".into()),
            })
        );
        let nested = RunEvent::Progress {
            message: "plan: read".into(),
            parent_tool_use_id: Some("g1".into()),
        };
        assert_eq!(forwarded(nested.clone(), "c1"), Some(nested));
        assert_eq!(
            forwarded(
                RunEvent::Finished {
                    status: subagent_core::StopReason::Completed
                },
                "c1"
            ),
            None
        );
    }
}
