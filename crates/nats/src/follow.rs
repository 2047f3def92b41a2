//! The submitter's side of a run: reads the run's events from the events stream (every
//! attempt's, in order), passes the current attempt's on, drops a lost attempt's late ones,
//! and cancels through the worker holding the job (or takes the job out of the queue).

use std::time::Duration;

use async_nats::jetstream::consumer::{self, pull::Ordered};
use futures::StreamExt;
use subagent_core::{Outcome, RunEvent, RunId, RunSender};
use tokio::time::Instant;

use crate::seal::{Admission, Fence, SEAL_HEADER};
use crate::topology::Topology;
use crate::wire::{Body, cancel_key, cancel_subject, events_subject};

/// An ordered consumer of the run's events from the stream sequence `after` + 1 (0: from the
/// first), and its name.
pub(crate) async fn open_events(
    topology: &Topology,
    run: RunId,
    after: u64,
) -> Result<(String, Ordered), String> {
    let deliver_policy = if after == 0 {
        consumer::DeliverPolicy::All
    } else {
        consumer::DeliverPolicy::ByStartSequence {
            start_sequence: after + 1,
        }
    };
    let consumer = topology
        .events
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: events_subject(run),
            deliver_policy,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    let name = consumer.cached_info().name.clone();
    let events = consumer.messages().await.map_err(|e| e.to_string())?;
    Ok((name, events))
}

/// After the client connected again, a consumer of the run's events from the one after the
/// last read (the server may have been restarted and lost the ordered consumer, which lives in
/// its memory; the client's own recovery waits for missed heartbeats, 15 s and more). Tried
/// a few times: the server may still be recovering its streams.
async fn reopen_events(plan: &Plan, after: u64) -> Option<(String, Ordered)> {
    for _ in 0..20 {
        match open_events(&plan.topology, plan.id, after).await {
            Ok(opened) => return Some(opened),
            Err(error) => {
                tracing::debug!(run = %plan.id, %error, "nats: following the run's events again");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    None
}

/// What [`follow`] needs.
pub(crate) struct Plan {
    pub topology: Topology,
    pub id: RunId,
    /// The run's ordered consumer on the events stream, deleted at the end.
    pub consumer: String,
    pub job_subject: String,
    /// The job's key: only envelopes sealed with it are the run's.
    pub key: String,
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
    let mut consumer = plan.consumer.clone();
    follow_to_end(plan, events, sender, &mut consumer).await;
    if let Err(error) = topology.events.delete_consumer(&consumer).await {
        tracing::debug!(%error, consumer, "nats: deleting a run's consumer");
    }
}

async fn follow_to_end(plan: Plan, mut events: Ordered, sender: RunSender, name: &mut String) {
    let mut connects = plan.topology.connects.clone();
    connects.borrow_and_update();
    let mut last = 0_u64;
    let token = sender.cancel_token().clone();
    let mut fence = Fence::new(plan.id, &plan.key);
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
                if let Ok(info) = message.info() {
                    last = info.stream_sequence;
                }
                let seal = message
                    .headers
                    .as_ref()
                    .and_then(|headers| headers.get(SEAL_HEADER))
                    .map(|value| value.as_str());
                let envelope = match fence.admit(&message.payload, seal) {
                    Admission::Admitted { envelope, lost } => {
                        if let Some(lost) = lost {
                            sender.emit(RunEvent::progress(format!(
                                    "attempt {lost} was lost (its worker stopped answering): its events above are superseded; attempt {} runs the task again from the start",
                                    envelope.attempt
                                )));
                        }
                        envelope
                    }
                    // A lost attempt's worker is still going: its events are superseded.
                    Admission::Superseded => continue,
                    Admission::Refused(why) => {
                        tracing::warn!(run = %plan.id, why, "nats: an envelope on the run's subject that its worker did not send; dropped");
                        continue;
                    }
                };
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
            Ok(()) = connects.changed() => {
                if let Some((reopened, stream)) = reopen_events(&plan, last).await {
                    let _ = plan.topology.events.delete_consumer(name).await;
                    *name = reopened;
                    events = stream;
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
