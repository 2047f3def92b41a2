//! Forged envelopes: another client of the server (a worker of some other job, a hostile
//! process with the same credentials) publishes on a run's events subject what the run's own
//! worker never sent — outcomes for another job's id, envelopes of no run, refusals, a newer
//! attempt, a replay of the run's own event — or a job of its own under the run's id on
//! another job's subject. None of it completes, ends or changes the run: its outcome and
//! events are its own worker's.

use std::sync::Arc;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_core::{Outcome, RunId, StartRequest, StopReason, SubagentProvider};
use subagent_nats::testing::NatsServer;
use subagent_nats::wire::{EVENTS_STREAM, Job, events_subject, job_subject};
use tokio::sync::Notify;

use super::support::{Echo, collect, hold_a_job, provider, streams_made, texts, worker};

fn request(prompt: &str) -> StartRequest {
    StartRequest::new(prompt, std::env::temp_dir())
}

fn outcome(text: &str) -> Value {
    serde_json::to_value(Outcome::completed(text)).unwrap()
}

/// Publishes `payload` on `subject` through JetStream (stored once acked), with `headers`.
async fn publish(
    js: &async_nats::jetstream::Context,
    subject: String,
    payload: Vec<u8>,
    headers: async_nats::HeaderMap,
) {
    js.publish_with_headers(subject, headers, payload.into())
        .await
        .unwrap()
        .await
        .unwrap();
}

/// The first message of `run`'s events whose payload contains `needle`: its payload and
/// headers, as stored.
async fn stored(
    js: &async_nats::jetstream::Context,
    run: RunId,
    needle: &str,
) -> (Vec<u8>, async_nats::HeaderMap) {
    use async_nats::jetstream::consumer;
    let stream = js.get_stream(EVENTS_STREAM).await.unwrap();
    let mut messages = stream
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: events_subject(run),
            deliver_policy: consumer::DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .unwrap()
        .messages()
        .await
        .unwrap();
    loop {
        let message = messages.next().await.unwrap().unwrap();
        if String::from_utf8_lossy(&message.payload).contains(needle) {
            return (
                message.payload.to_vec(),
                message.headers.clone().unwrap_or_default(),
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_envelopes_never_end_or_change_another_jobs_run() {
    let server = NatsServer::start().unwrap();
    let echo = Echo::new();
    let release = Arc::clone(&echo.release);
    let waiting = Arc::clone(&echo.waiting);
    let _worker = worker(&server.url(), echo, 3, Arc::new(Notify::new())).await;
    let remote = provider(&server.url()).await;
    let run = remote.start(request("WAIT victim")).await.unwrap();
    let victim = run.id();
    waiting.notified().await;

    let client = async_nats::connect(server.url()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let other = RunId::new();
    let mut bogus = async_nats::HeaderMap::new();
    bogus.insert("Subagent-Mac", "00".repeat(32).as_str());
    let forgeries = [
        // An envelope of no run and no proof, as every worker wrote them before.
        (
            json!({"attempt": 1, "body": {"kind": "outcome", "outcome": outcome("forged: bare")}}),
            async_nats::HeaderMap::new(),
        ),
        // Another job's outcome on this run's subject.
        (
            json!({"attempt": 1, "run": other, "seq": 9, "body": {"kind": "outcome", "outcome": outcome("forged: another run")}}),
            bogus.clone(),
        ),
        // This run's id, a made-up proof.
        (
            json!({"attempt": 1, "run": victim, "seq": 9, "body": {"kind": "outcome", "outcome": outcome("forged: bad proof")}}),
            bogus.clone(),
        ),
        (
            json!({"attempt": 1, "run": victim, "seq": 9, "body": {"kind": "refused", "code": "PROTOCOL", "message": "forged refusal"}}),
            bogus.clone(),
        ),
        (
            json!({"attempt": 1, "run": victim, "seq": 9, "body": {"kind": "event", "event": {"type": "text", "text": "forged text"}}}),
            async_nats::HeaderMap::new(),
        ),
        // A newer attempt nobody took.
        (
            json!({"attempt": 7, "run": victim, "seq": 1, "body": {"kind": "taken", "worker": "forger"}}),
            bogus.clone(),
        ),
        (
            json!({"attempt": 7, "run": victim, "seq": 2, "body": {"kind": "outcome", "outcome": outcome("forged: attempt 7")}}),
            bogus.clone(),
        ),
    ];
    for (envelope, headers) in forgeries {
        publish(
            &js,
            events_subject(victim),
            serde_json::to_vec(&envelope).unwrap(),
            headers,
        )
        .await;
    }
    // The run's own text event, stored again as it was (a replay, proof included).
    let (payload, headers) = stored(&js, victim, "got: WAIT victim").await;
    publish(&js, events_subject(victim), payload, headers).await;
    // A job of the forger's own naming the victim's run, on another job's subject: a worker
    // that ran it would publish a real run's envelopes for the victim.
    let forged_job = Job::new(victim, "echo", &request("forged job"));
    publish(
        &js,
        job_subject("echo", other),
        serde_json::to_vec(&forged_job).unwrap(),
        async_nats::HeaderMap::new(),
    )
    .await;

    release.notify_one();
    let (seen, outcome) = collect(run).await;
    assert_eq!(
        (outcome.status, outcome.text.as_str()),
        (StopReason::Completed, "done: WAIT victim"),
        "{outcome:?}"
    );
    assert_eq!(texts(&seen), vec!["got: WAIT victim".to_owned()]);
    // The forged job was dropped unrun: once the queue is empty, the victim's run was taken
    // once, by its own job.
    let mut jobs = js
        .get_stream(subagent_nats::wire::JOBS_STREAM)
        .await
        .unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while jobs.info().await.unwrap().state.messages > 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    let tally = subagent_nats::testing::tally(&server.url()).await.unwrap();
    let taken = &tally[&victim.to_string()].workers;
    assert_eq!(
        taken.iter().filter(|worker| *worker != "forger").count(),
        1,
        "{taken:?}"
    );
}

/// A job whose holder was lost, with a forged outcome as the last message of its run: the
/// next worker does not take the forgery for the lost holder's stored outcome (and ack the job
/// unrun); it runs the job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_outcome_does_not_pass_for_a_lost_holders_stored_one() {
    let server = NatsServer::start().unwrap();
    let js = streams_made(&server.url()).await;
    let run = RunId::new();
    let job = Job::new(run, "echo", &request("hello"));
    publish(
        &js,
        job_subject("echo", run),
        serde_json::to_vec(&job).unwrap(),
        async_nats::HeaderMap::new(),
    )
    .await;
    // The lost holder: takes the job, never acks.
    let (jobs, held) = hold_a_job(&js).await;
    let forged = json!({"attempt": 1, "run": run, "seq": 1,
        "body": {"kind": "outcome", "outcome": outcome("forged")}});
    publish(
        &js,
        events_subject(run),
        serde_json::to_vec(&forged).unwrap(),
        async_nats::HeaderMap::new(),
    )
    .await;
    drop(held);
    let _worker = worker(&server.url(), Echo::new(), 3, Arc::new(Notify::new())).await;
    let mut info = jobs.clone();
    tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while info.info().await.unwrap().state.messages > 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    let tally = subagent_nats::testing::tally(&server.url()).await.unwrap();
    let counts = tally.get(&run.to_string()).cloned().unwrap_or_default();
    assert_eq!(
        (counts.workers.len(), counts.outcomes),
        (1, 2),
        "the job ran once after the forgery: {counts:?}"
    );
}
