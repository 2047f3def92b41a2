//! Following a run to its outcome: events to the renderer, Ctrl-C to cancel.

use std::time::Duration;

use futures::StreamExt;
use subagent_core::{Outcome, Run, RunEvent};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::render::Progress;

/// A signal that asks `subagent` to stop: each one cancels the run the same way (the first
/// Ctrl-C path), and the command then exits with the signal's conventional code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StopSignal {
    /// SIGINT (Ctrl-C): exit 130.
    Interrupt,
    /// SIGTERM (`kill`, `timeout`, systemd, `docker stop`): exit 143.
    Terminate,
    /// SIGHUP (the terminal went away): exit 129.
    Hangup,
}

impl StopSignal {
    const ALL: [Self; 3] = [Self::Interrupt, Self::Terminate, Self::Hangup];

    fn kind(self) -> SignalKind {
        match self {
            Self::Interrupt => SignalKind::interrupt(),
            Self::Terminate => SignalKind::terminate(),
            Self::Hangup => SignalKind::hangup(),
        }
    }

    /// The signal's name, for messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
            Self::Hangup => "SIGHUP",
        }
    }

    /// 128 + the signal's number, as shells report a death by it.
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Self::Interrupt => 130,
            Self::Terminate => 143,
            Self::Hangup => 129,
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP, listened to from the moment a command starts (so a signal that
/// lands while the child is being started is not lost, and does not kill us before we can stop
/// it).
pub(crate) struct Interrupts {
    heeded: Vec<(StopSignal, Signal)>,
    /// Caught so that they do not kill, and never read.
    _ignored: Vec<Signal>,
}

impl Interrupts {
    /// Starts listening. A handler that cannot be installed leaves that signal its default
    /// effect (the children still die with us: their guardian sees us go).
    /// A detached `--bg` run catches SIGINT and SIGHUP and does nothing (a closed terminal or
    /// the shell's Ctrl-C must not stop it): only SIGTERM (and `subagent stop`) do.
    pub(crate) fn listen() -> Self {
        let detached = crate::bg::detached();
        let (ignored, heeded): (Vec<StopSignal>, Vec<StopSignal>) = StopSignal::ALL
            .into_iter()
            .partition(|stop| detached && *stop != StopSignal::Terminate);
        Self {
            heeded: heeded
                .into_iter()
                .filter_map(|stop| signal(stop.kind()).ok().map(|signal| (stop, signal)))
                .collect(),
            _ignored: ignored
                .into_iter()
                .filter_map(|stop| signal(stop.kind()).ok())
                .collect(),
        }
    }

    async fn next(&mut self) -> StopSignal {
        if self.heeded.is_empty() {
            return std::future::pending().await;
        }
        let waits = self.heeded.iter_mut().map(|(stop, signal)| {
            Box::pin(async move {
                if signal.recv().await.is_none() {
                    std::future::pending::<()>().await;
                }
                *stop
            })
        });
        futures::future::select_all(waits).await.0
    }
}

/// What the caller learns besides the outcome.
pub(crate) struct Driven {
    pub outcome: Outcome,
    /// The first stop signal received (Ctrl-C, SIGTERM, SIGHUP), if any.
    pub interrupted: Option<StopSignal>,
    /// The run's own tool calls, tool results and progress, in order (for summaries; a child's
    /// are left out).
    pub events: Vec<RunEvent>,
}

/// Follows `run` until it finishes: renders events, redraws the live line, cancels on the first
/// stop signal (Ctrl-C, SIGTERM, SIGHUP) and waits for the run to stop its children; a second
/// one stops waiting (dropping the run's tasks kills what they own).
pub(crate) async fn drive(
    mut run: Run,
    progress: &mut Progress,
    interrupts: &mut Interrupts,
) -> Driven {
    let mut events = run.take_events();
    let mut seen = Vec::new();
    let mut interrupted = None;
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
                            | RunEvent::TaskStarted { .. }
                            | RunEvent::TaskEnded { .. }
                    );
                    if own {
                        seen.push(event);
                    }
                }
                None => break,
            },
            _ = tick.tick() => progress.redraw(),
            received = interrupts.next() => {
                progress.clear();
                if interrupted.is_some() {
                    eprintln!(
                        "interrupted again ({}): not waiting for the run to stop",
                        received.name()
                    );
                    let mut outcome = Outcome::cancelled();
                    outcome.diagnostic =
                        Some("cancelled; the user stopped waiting for the run to stop".into());
                    return Driven { outcome, interrupted, events: seen };
                }
                interrupted = Some(received);
                eprintln!(
                    "cancelling on {}… (the child and its processes are being stopped; Ctrl-C again to stop waiting)",
                    received.name()
                );
                run.cancel();
            }
        }
    }
    progress.clear();
    let outcome = run.outcome().await;
    let usage = &outcome.usage;
    tracing::debug!(
        status = %outcome.status,
        input_tokens = usage.input_tokens,
        output_tokens = usage.output_tokens,
        tool_uses = usage.tool_uses,
        duration_ms = usage.duration_ms,
        "run finished"
    );
    Driven {
        outcome,
        interrupted,
        events: seen,
    }
}
