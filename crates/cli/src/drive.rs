//! Following a run to its outcome: events to the renderer, Ctrl-C to cancel.

use std::time::Duration;

use futures::StreamExt;
use subagent_core::{Outcome, Run, RunEvent};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::render::Progress;

/// SIGINT, listened to from the moment a command starts (so a Ctrl-C that lands while the child
/// is being started is not lost, and does not kill us before we can stop it).
pub struct Interrupts(Option<Signal>);

impl Interrupts {
    /// Starts listening. If the handler cannot be installed, Ctrl-C keeps its default effect
    /// (the children still die with us through their parent-death signal).
    pub fn listen() -> Self {
        Self(signal(SignalKind::interrupt()).ok())
    }

    async fn next(&mut self) {
        match &mut self.0 {
            Some(signal) => {
                if signal.recv().await.is_none() {
                    std::future::pending::<()>().await;
                }
            }
            None => std::future::pending::<()>().await,
        }
    }
}

/// What the caller learns besides the outcome.
pub struct Driven {
    pub outcome: Outcome,
    /// The user pressed Ctrl-C.
    pub interrupted: bool,
    /// The run's own tool calls and results, in order (for summaries; a child's are left out).
    pub events: Vec<RunEvent>,
}

/// Follows `run` until it finishes: renders events, redraws the live line, cancels on the first
/// Ctrl-C and waits for the run to stop its children; a second Ctrl-C stops waiting (dropping
/// the run's tasks kills what they own).
pub async fn drive(mut run: Run, progress: &mut Progress, interrupts: &mut Interrupts) -> Driven {
    let mut events = run.take_events();
    let mut seen = Vec::new();
    let mut interrupted = false;
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    while let Some(stream) = events.as_mut() {
        tokio::select! {
            event = stream.next() => match event {
                Some(event) => {
                    progress.event(&event);
                    let own = matches!(
                        &event,
                        RunEvent::ToolCall { parent_tool_use_id: None, .. }
                            | RunEvent::ToolResult { parent_tool_use_id: None, .. }
                    );
                    if own {
                        seen.push(event);
                    }
                }
                None => break,
            },
            _ = tick.tick() => progress.redraw(),
            () = interrupts.next() => {
                progress.clear();
                if interrupted {
                    eprintln!("interrupted again: not waiting for the run to stop");
                    let mut outcome = Outcome::cancelled();
                    outcome.diagnostic =
                        Some("cancelled; the user stopped waiting for the run to stop".into());
                    return Driven { outcome, interrupted, events: seen };
                }
                interrupted = true;
                eprintln!(
                    "cancelling… (the child and its processes are being stopped; Ctrl-C again to stop waiting)"
                );
                run.cancel();
            }
        }
    }
    progress.clear();
    Driven {
        outcome: run.outcome().await,
        interrupted,
        events: seen,
    }
}
