//! Following a run to its outcome: events to the renderer, Ctrl-C to cancel.

use std::time::Duration;

use futures::StreamExt;
use subagent_core::{Outcome, Run, RunEvent};

use crate::render::Progress;

/// What the caller learns besides the outcome.
pub struct Driven {
    pub outcome: Outcome,
    /// The user pressed Ctrl-C.
    pub interrupted: bool,
    /// Every event, in order (for summaries).
    pub events: Vec<RunEvent>,
}

/// Follows `run` until it finishes: renders events, redraws the live line, cancels on Ctrl-C
/// (a second Ctrl-C is not needed: the run's children are stopped by their owner).
pub async fn drive(mut run: Run, progress: &mut Progress) -> Driven {
    let mut events = run.take_events();
    let mut seen = Vec::new();
    let mut interrupted = false;
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    while let Some(stream) = events.as_mut() {
        tokio::select! {
            event = stream.next() => match event {
                Some(event) => {
                    progress.event(&event);
                    seen.push(event);
                }
                None => break,
            },
            _ = tick.tick() => progress.redraw(),
            result = &mut ctrl_c, if !interrupted => {
                if result.is_ok() {
                    interrupted = true;
                    progress.clear();
                    eprintln!("cancelling… (the child and its processes are being stopped)");
                    run.cancel();
                }
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
