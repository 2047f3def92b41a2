//! Driving one remote task: read its stream into the run, cancel it when the run is cancelled,
//! re-subscribe when the stream is lost, fail when the agent goes silent.

use std::time::Duration;

use serde_json::json;
use subagent_core::{Outcome, RunSender, StopReason};
use tokio::time::Instant;

use crate::client::{CallError, Next, Peer, Stream, subscribe_params};
use crate::events::Assembly;
use crate::rpc::{Kind, method};
use crate::types::{StreamResponse, Task};

/// The first wait before a re-subscribe; doubled after each failure up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
/// The longest wait between two re-subscribes.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// What a run needs to know about its agent.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// The provider's name (in the outcome's session).
    pub provider: String,
    /// The agent.
    pub peer: Peer,
    /// Whether it is a `subagent serve` (re-subscribes pick up with our `from`).
    pub ours: bool,
    /// Another agent whose contexts are continued on resume: a run's session is its context.
    pub context_sessions: bool,
    /// The idle bound.
    pub idle: Duration,
    /// The overall bound.
    pub total: Option<Duration>,
}

/// Reads `stream` into `sender` until the task ends, then finishes the run.
pub(crate) async fn drive(plan: Plan, mut stream: Stream, sender: RunSender) {
    let mut assembly = Assembly::new(plan.ours);
    assembly.context_sessions = plan.context_sessions;
    let cancel = sender.cancel_token().clone();
    let deadline = plan.total.map(|total| Instant::now() + total);
    // Asked to stop (cancelled, or past the overall bound), and whether `CancelTask` went out
    // (it waits for the task's id when the stop came first).
    let mut cancel_sent = false;
    let mut cancelled = false;
    let mut timed_out = false;
    let mut last_error = String::new();
    let mut backoff = FIRST_BACKOFF;
    let mut silent_since = Instant::now();
    // Once asked to stop, the agent has the idle bound to end the task; one that goes on
    // sending (ignoring `CancelTask`) is not waited for past it.
    let mut stop_by: Option<Instant> = None;
    loop {
        let stopping = cancelled || timed_out;
        let next = tokio::select! {
            () = cancel.cancelled(), if !stopping => {
                cancelled = true;
                stop_by = Some(Instant::now() + plan.idle);
                cancel_sent = cancel_remote(&plan, &assembly);
                continue;
            }
            () = sleep_until(deadline), if !stopping => {
                timed_out = true;
                stop_by = Some(Instant::now() + plan.idle);
                cancel_sent = cancel_remote(&plan, &assembly);
                continue;
            }
            () = sleep_until(stop_by), if stopping => {
                tracing::debug!("a2a: the agent did not end the task within the idle bound after CancelTask");
                return finish(&plan, &assembly, sender, timed_out);
            }
            next = stream.next(plan.idle) => next,
        };
        let stopping = cancelled || timed_out;
        match next {
            Next::Event(event) => {
                silent_since = Instant::now();
                backoff = FIRST_BACKOFF;
                for run_event in assembly.take(&event) {
                    sender.emit(run_event);
                }
                if stopping && !cancel_sent {
                    cancel_sent = cancel_remote(&plan, &assembly);
                }
                if assembly.ended() {
                    return finish(&plan, &assembly, sender, timed_out);
                }
            }
            Next::Error(error) => {
                let outcome = Outcome::failed(format!(
                    "the a2a agent at {} ended the task's stream with an error: {error}",
                    plan.peer.endpoint
                ));
                return sender.finish(outcome);
            }
            Next::Invalid(_) if stopping => return finish(&plan, &assembly, sender, timed_out),
            Next::Invalid(what) => {
                // Asking again would get the same: the run fails, saying what came.
                return give_up(
                    &plan,
                    &assembly,
                    sender,
                    &format!(
                        "the a2a agent at {} sent {what}: the run is stopped",
                        plan.peer.endpoint
                    ),
                );
            }
            Next::Idle if stopping => return finish(&plan, &assembly, sender, timed_out),
            Next::Idle => {
                return give_up(
                    &plan,
                    &assembly,
                    sender,
                    &format!(
                        "the a2a agent at {} sent nothing for {} ms (not even a keep-alive)",
                        plan.peer.endpoint,
                        plan.idle.as_millis()
                    ),
                );
            }
            Next::End | Next::Broken(_) if stopping => {
                return finish(&plan, &assembly, sender, timed_out);
            }
            Next::End | Next::Broken(_) if assembly.task_id().is_none() => {
                return sender.finish(Outcome::failed(format!(
                    "the a2a agent at {} closed the stream before it named the task",
                    plan.peer.endpoint
                )));
            }
            Next::End | Next::Broken(_) => {
                if let Next::Broken(message) = next {
                    last_error = message;
                }
                // Lost the stream: pick it up again, waiting a little longer after each
                // failure, for as long as the idle bound allows.
                loop {
                    if silent_since.elapsed() >= plan.idle {
                        return give_up(
                            &plan,
                            &assembly,
                            sender,
                            &format!(
                                "lost the stream of task {} at the a2a agent {} and could not \
                                 re-subscribe within {} ms (last: {})",
                                assembly.task_id().unwrap_or_default(),
                                plan.peer.endpoint,
                                plan.idle.as_millis(),
                                if last_error.is_empty() {
                                    "the stream ended"
                                } else {
                                    &last_error
                                }
                            ),
                        );
                    }
                    tokio::select! {
                        () = cancel.cancelled() => {
                            let _ = cancel_remote(&plan, &assembly);
                            return sender.finish(Outcome::cancelled());
                        }
                        () = tokio::time::sleep(backoff) => {}
                    }
                    backoff = backoff.saturating_mul(2).min(MAX_BACKOFF);
                    // An agent that takes the connection but never answers (stopped, say) is
                    // given what is left of the idle bound, no more.
                    let left = plan.idle.saturating_sub(silent_since.elapsed());
                    let attempt = tokio::time::timeout(left, resubscribe(&plan, &mut assembly));
                    match attempt.await.unwrap_or_else(|_| {
                        Resubscribed::Failed("SubscribeToTask: no answer".to_owned())
                    }) {
                        Resubscribed::Stream(again) => {
                            stream = *again;
                            break;
                        }
                        Resubscribed::Ended => {
                            return finish(&plan, &assembly, sender, timed_out);
                        }
                        Resubscribed::Refused(message) => {
                            return give_up(
                                &plan,
                                &assembly,
                                sender,
                                &format!(
                                    "re-subscribing to task {} at the a2a agent {}: {message}",
                                    assembly.task_id().unwrap_or_default(),
                                    plan.peer.endpoint
                                ),
                            );
                        }
                        Resubscribed::Failed(message) => last_error = message,
                    }
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Sends `CancelTask` for the remote task, without waiting (the stream says when it ended);
/// `false` when the task's id is not known yet.
fn cancel_remote(plan: &Plan, assembly: &Assembly) -> bool {
    let Some(task) = assembly.task_id() else {
        return false;
    };
    let peer = plan.peer.clone();
    let params = json!({"id": task});
    let bound = plan.idle;
    tokio::spawn(async move {
        match tokio::time::timeout(bound, peer.call(method::CANCEL_TASK, params)).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => tracing::debug!(%error, "a2a: CancelTask"),
            Err(_) => tracing::debug!("a2a: CancelTask: no answer"),
        }
    });
    true
}

enum Resubscribed {
    Stream(Box<Stream>),
    Ended,
    Failed(String),
    /// Refused for good (a redirect to another host, an answer past the bound).
    Refused(String),
}

/// `SubscribeToTask` (with our `from` for a `subagent serve`); a task that has ended meanwhile
/// is read whole with `GetTask`.
async fn resubscribe(plan: &Plan, assembly: &mut Assembly) -> Resubscribed {
    let task = assembly.task_id().unwrap_or_default().to_owned();
    let from = plan.ours.then_some(assembly.read);
    match plan
        .peer
        .open(method::SUBSCRIBE_TO_TASK, subscribe_params(&task, from))
        .await
    {
        Ok(stream) => return Resubscribed::Stream(Box::new(stream)),
        Err(CallError::Rpc(error)) if error.kind() == Some(Kind::UnsupportedOperation) => {}
        Err(CallError::Refused(message)) => return Resubscribed::Refused(message),
        Err(error) => return Resubscribed::Failed(error.to_string()),
    }
    // The task has ended: its final snapshot says how.
    match plan.peer.call(method::GET_TASK, json!({"id": task})).await {
        Ok(value) => match serde_json::from_value::<Task>(value) {
            Ok(snapshot) => {
                assembly.take(&StreamResponse::Task(snapshot));
                if assembly.ended() {
                    Resubscribed::Ended
                } else {
                    Resubscribed::Failed("the task is neither running nor ended".to_owned())
                }
            }
            Err(error) => Resubscribed::Failed(format!("GetTask: not a task: {error}")),
        },
        Err(error) => Resubscribed::Failed(error.to_string()),
    }
}

fn finish(plan: &Plan, assembly: &Assembly, sender: RunSender, timed_out: bool) {
    let mut outcome = if assembly.ended() {
        assembly.outcome(&plan.provider)
    } else {
        Outcome::cancelled()
    };
    if timed_out {
        outcome.status = StopReason::Failed;
        outcome.diagnostic = Some(format!(
            "the run took longer than its limit of {} ms: its remote task was cancelled",
            plan.total.unwrap_or_default().as_millis()
        ));
    } else if sender.is_cancelled() && outcome.status != StopReason::Completed {
        outcome.status = StopReason::Cancelled;
    }
    sender.finish(outcome);
}

fn give_up(plan: &Plan, assembly: &Assembly, sender: RunSender, why: &str) {
    let _ = cancel_remote(plan, assembly);
    sender.finish(Outcome::failed(why.to_owned()));
}
