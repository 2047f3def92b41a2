//! The submitter's side of a run: reads the run's events from the events stream (every
//! attempt's, in order), passes the current attempt's on, drops a lost attempt's late ones,
//! and cancels through the worker holding the job (or takes the job out of the queue).

use std::time::Duration;

use async_nats::jetstream::consumer::pull::Ordered;
use futures::StreamExt;
use subagent_core::{Outcome, RunEvent, RunId, RunSender};
use tokio::time::Instant;

use crate::topology::Topology;
use crate::wire::{Body, Envelope, cancel_key, cancel_subject};

/// What [`follow`] needs.
pub(crate) struct Plan {
    pub topology: Topology,
    pub id: RunId,
    /// The run's ordered consumer on the events stream, deleted at the end.
    pub consumer: String,
    pub job_subject: String,
    pub cancel_grace: Duration,
    pub total: Option<Duration>,
}

/// How a cancel went.
enum Cancelled {
    /// The job was still queued and is gone: nobody will run it.
    Dequeued,
    /// A worker holds it (or will see the flag when it takes it): wait for its outcome.
    Told,
}

/// Asks the run to stop: the flag first (a worker taking the job later sees it), then the
/// worker holding it; if none does, the queued job is deleted.
async fn cancel(plan: &Plan) -> Cancelled {
    let topology = &plan.topology;
    if let Err(error) = topology.runs.put(cancel_key(plan.id), "1".into()).await {
        tracing::warn!(run = %plan.id, %error, "nats: could not store the cancel flag");
    }
    match topology
        .client
        .request(cancel_subject(plan.id), bytes::Bytes::new())
        .await
    {
        Ok(_) => Cancelled::Told,
        Err(error) => {
            tracing::debug!(run = %plan.id, %error, "nats: no worker holds the run; taking it out of the queue");
            let queued = topology
                .jobs
                .get_last_raw_message_by_subject(&plan.job_subject)
                .await;
            match queued {
                Ok(message) => match topology.jobs.delete_message(message.sequence).await {
                    Ok(true) => Cancelled::Dequeued,
                    _ => Cancelled::Told,
                },
                Err(_) => Cancelled::Told,
            }
        }
    }
}

/// Follows the run to its end and finishes `sender`, then deletes the run's consumer (the
/// server would keep it until it has been inactive a while, and its consumers are limited).
pub(crate) async fn follow(plan: Plan, events: Ordered, sender: RunSender) {
    let topology = plan.topology.clone();
    let consumer = plan.consumer.clone();
    follow_to_end(plan, events, sender).await;
    if let Err(error) = topology.events.delete_consumer(&consumer).await {
        tracing::debug!(%error, consumer, "nats: deleting a run's consumer");
    }
}

async fn follow_to_end(plan: Plan, mut events: Ordered, sender: RunSender) {
    let token = sender.cancel_token().clone();
    let mut attempt = 0_u32;
    let mut cancel_deadline: Option<Instant> = None;
    let mut failure: Option<String> = None;
    let total = plan.total.map(|total| Instant::now() + total);
    let far = || Instant::now() + Duration::from_secs(365 * 24 * 3600);
    loop {
        tokio::select! {
            message = events.next() => {
                let message = match message {
                    Some(Ok(message)) => message,
                    Some(Err(error)) => {
                        tracing::warn!(run = %plan.id, %error, "nats: reading the run's events");
                        continue;
                    }
                    None => {
                        sender.finish(Outcome::failed("the nats events stream of the run ended before its outcome"));
                        return;
                    }
                };
                let envelope: Envelope = match serde_json::from_slice(&message.payload) {
                    Ok(envelope) => envelope,
                    Err(error) => {
                        tracing::warn!(run = %plan.id, %error, "nats: an event that does not read; skipped");
                        continue;
                    }
                };
                if envelope.attempt < attempt {
                    // A lost attempt's worker is still going: its events are superseded.
                    continue;
                }
                if envelope.attempt > attempt {
                    if attempt > 0 {
                        sender.emit(RunEvent::Progress {
                            message: format!(
                                "attempt {attempt} was lost (its worker stopped answering): its events above are superseded; attempt {} runs the task again from the start",
                                envelope.attempt
                            ),
                        });
                    }
                    attempt = envelope.attempt;
                }
                match envelope.body {
                    Body::Taken { .. } => {}
                    Body::Event { event } => {
                        if !matches!(event, RunEvent::Started { .. } | RunEvent::Finished { .. }) {
                            sender.emit(event);
                        }
                    }
                    Body::Refused { code, message } => {
                        let code = serde_json::to_value(code)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default();
                        sender.finish(Outcome::failed(format!("the worker refused the run: {code}: {message}")));
                        return;
                    }
                    Body::Outcome { outcome } => {
                        let outcome = match (&failure, token.is_cancelled()) {
                            (Some(why), _) if !outcome.is_completed() => Outcome::failed(why.clone()),
                            _ => outcome,
                        };
                        sender.finish(outcome);
                        return;
                    }
                }
            }
            () = token.cancelled(), if cancel_deadline.is_none() => {
                if let Cancelled::Dequeued = cancel(&plan).await {
                    sender.finish(Outcome::cancelled());
                    return;
                }
                cancel_deadline = Some(Instant::now() + plan.cancel_grace);
            }
            () = tokio::time::sleep_until(total.unwrap_or_else(far)), if total.is_some() && cancel_deadline.is_none() => {
                failure = Some(format!(
                    "the run took longer than the row's timeouts.total_ms ({} ms) and was cancelled",
                    plan.total.unwrap_or_default().as_millis()
                ));
                if let Cancelled::Dequeued = cancel(&plan).await {
                    sender.finish(Outcome::failed(failure.unwrap_or_default()));
                    return;
                }
                cancel_deadline = Some(Instant::now() + plan.cancel_grace);
            }
            () = tokio::time::sleep_until(cancel_deadline.unwrap_or_else(far)), if cancel_deadline.is_some() => {
                let outcome = match failure {
                    Some(why) => Outcome::failed(why),
                    None => Outcome::cancelled(),
                };
                sender.finish(outcome);
                return;
            }
        }
    }
}
