//! A provider, workers and a real server: a run and its events, the gate before publishing,
//! cancel (running and queued), a lost worker's job run again, the attempts limit, a server
//! restart, credentials.

use std::sync::Arc;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use subagent_core::registry::Registry;
use subagent_core::{ErrorCode, StartRequest, StopReason, SubagentProvider};
use subagent_nats::testing::NatsServer;
use subagent_nats::wire::{JOBS_STREAM, carried};
use subagent_nats::{Auth, Error, NatsConfig, NatsProvider};
use tokio::sync::Notify;

use super::support::{ECHO_CAPS, Echo, collect, finished, hold_a_job, provider, streams_made};
use super::support::{taken_over, texts, until_first_text, worker, worker_draining, worker_with};

fn request(prompt: &str) -> StartRequest {
    StartRequest::new(prompt, std::env::temp_dir())
}

/// Messages in the jobs stream (queued or held).
async fn queued(url: &str) -> u64 {
    let client = async_nats::connect(url).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let mut stream = js.get_stream(JOBS_STREAM).await.unwrap();
    stream.info().await.unwrap().state.messages
}

/// Waits until the jobs stream is empty: a worker acks a job once its outcome is stored, so
/// the submitter may see the outcome a moment before the ack (at most 30 s).
async fn drained(url: &str) {
    tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while queued(url).await > 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the job was never acked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_goes_through_a_worker_and_back() {
    let server = NatsServer::start().unwrap();
    let _worker = worker(&server.url(), Echo::new(), 3, Arc::new(Notify::new())).await;
    let remote = provider(&server.url()).await;
    assert_eq!(remote.capabilities(), carried(ECHO_CAPS));
    let registry = Registry::new();
    registry.register(Arc::new(remote)).unwrap();
    let run = registry.start("remote", request("hello")).await.unwrap();
    let (events, outcome) = collect(run).await;
    assert_eq!(texts(&events), vec!["got: hello".to_owned()]);
    assert_eq!(finished(&events), Some(StopReason::Completed));
    assert_eq!(
        (outcome.status, outcome.text),
        (StopReason::Completed, "done: hello".to_owned())
    );
    drained(&server.url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_needing_more_than_the_workers_announced_is_refused_before_publishing() {
    let server = NatsServer::start().unwrap();
    let stop = Arc::new(Notify::new());
    let _worker = worker(&server.url(), Echo::new(), 3, Arc::clone(&stop)).await;
    let registry = Registry::new();
    registry
        .register(Arc::new(provider(&server.url()).await))
        .unwrap();
    let wants_schema = StartRequest::builder("hello")
        .cwd(std::env::temp_dir())
        .output_schema(serde_json::json!({"type": "object"}))
        .build();
    let refused = registry.start("remote", wants_schema).await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::UnsupportedCapability);
    assert_eq!(queued(&server.url()).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_reaches_the_worker_running_the_job() {
    let server = NatsServer::start().unwrap();
    let echo = Echo::new();
    let waiting = Arc::clone(&echo.waiting);
    let _worker = worker(&server.url(), echo, 3, Arc::new(Notify::new())).await;
    let remote = provider(&server.url()).await;
    let run = remote.start(request("WAIT here")).await.unwrap();
    waiting.notified().await;
    run.cancel();
    let (events, outcome) = collect(run).await;
    assert_eq!(outcome.status, StopReason::Cancelled);
    assert_eq!(texts(&events), vec!["got: WAIT here".to_owned()]);
    drained(&server.url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_of_a_queued_job_takes_it_out_of_the_queue() {
    let server = NatsServer::start().unwrap();
    // A worker announces the row and stops: the job stays queued.
    let stop = Arc::new(Notify::new());
    let announcer = worker(&server.url(), Echo::new(), 3, Arc::clone(&stop)).await;
    let remote = provider(&server.url()).await;
    stop.notify_one();
    announcer.await.unwrap();
    let run = remote.start(request("hello")).await.unwrap();
    assert_eq!(queued(&server.url()).await, 1);
    run.cancel();
    let (_, outcome) = collect(run).await;
    assert_eq!(outcome.status, StopReason::Cancelled);
    assert_eq!(queued(&server.url()).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_workers_job_runs_again_on_another_and_the_lost_attempt_is_marked() {
    let server = NatsServer::start().unwrap();
    let first = Echo::new();
    let lost = worker(&server.url(), first, 3, Arc::new(Notify::new())).await;
    let remote = provider(&server.url()).await;
    let mut run = remote.start(request("WAIT job")).await.unwrap();
    // The first attempt's text has reached us: the worker holds the job and waits.
    let mut events = run.take_events().unwrap();
    let seen = until_first_text(&mut events).await;
    // The worker is gone without a word (its tasks dropped, nothing acked).
    lost.abort();
    let (_, outcome) = taken_over(&server.url(), run, events, seen).await;
    assert_eq!(
        (outcome.status, outcome.text),
        (StopReason::Completed, "done: WAIT job".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_attempts_a_job_fails_with_a_diagnostic() {
    let server = NatsServer::start().unwrap();
    let first = Echo::new();
    let waiting = Arc::clone(&first.waiting);
    let lost = worker(&server.url(), first, 1, Arc::new(Notify::new())).await;
    let remote = provider(&server.url()).await;
    let run = remote.start(request("WAIT job")).await.unwrap();
    waiting.notified().await;
    lost.abort();
    let _second = worker(&server.url(), Echo::new(), 1, Arc::new(Notify::new())).await;
    let (_, outcome) = collect(run).await;
    assert_eq!(outcome.status, StopReason::Failed);
    assert_eq!(
        outcome.diagnostic.as_deref(),
        Some(
            "the job was tried 1 times and no attempt finished: each time the worker holding it stopped answering for the ack wait (1000 ms)"
        )
    );
    drained(&server.url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restart_keeps_the_queued_jobs() {
    let mut server = NatsServer::start().unwrap();
    let stop = Arc::new(Notify::new());
    let announcer = worker(&server.url(), Echo::new(), 3, Arc::clone(&stop)).await;
    let remote = provider(&server.url()).await;
    stop.notify_one();
    announcer.await.unwrap();
    let run = remote.start(request("kept")).await.unwrap();
    server.restart().unwrap();
    assert_eq!(queued(&server.url()).await, 1);
    let _worker = worker(&server.url(), Echo::new(), 3, Arc::new(Notify::new())).await;
    let (events, outcome) = collect(run).await;
    assert_eq!(texts(&events), vec!["got: kept".to_owned()]);
    assert_eq!(outcome.text, "done: kept");
}

/// The refusal of connecting the row `remote` (kind `echo`) to `url` with the token `token`.
async fn connecting_with(url: &str, token: &str) -> Error {
    NatsProvider::connect(
        "remote",
        NatsConfig::new(url, "echo"),
        Auth::Token(token.to_owned()),
    )
    .await
    .unwrap_err()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_credential_or_a_row_nobody_serves_is_a_coded_error() {
    let server = NatsServer::start_with(&["--auth", "right-token-0123"]).unwrap();
    let wrong = connecting_with(&server.url(), "wrong-token-0123").await;
    assert!(matches!(wrong, Error::Unauthorized { .. }), "{wrong:?}");
    assert_eq!(
        subagent_core::Error::from(wrong).code(),
        ErrorCode::Unauthorized
    );
    let nobody = connecting_with(&server.url(), "right-token-0123").await;
    assert!(matches!(nobody, Error::NoWorker { .. }), "{nobody:?}");
    assert_eq!(
        subagent_core::Error::from(nobody).code(),
        ErrorCode::SpawnFailed
    );
}

/// A worker lost after it stored the outcome but before its ack reached the server: the job
/// comes back, and the next worker acks it without running it again (seen: two outcomes for
/// one run in the 300-job test).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_outcome_is_stored_is_not_run_again() {
    use subagent_core::{Outcome, RunId};
    use subagent_nats::seal::{SEAL_HEADER, Sealer};
    use subagent_nats::wire::{Body, Job, events_subject, job_subject};

    let server = NatsServer::start().unwrap();
    let js = streams_made(&server.url()).await;
    // The lost worker: takes the job, stores the outcome, never acks.
    let run = RunId::new();
    let job = Job::new(run, "echo", &request("hello"));
    js.publish(
        job_subject("echo", run),
        serde_json::to_vec(&job).unwrap().into(),
    )
    .await
    .unwrap()
    .await
    .unwrap();
    let (jobs, held) = hold_a_job(&js).await;
    // Sealed with the job's key, as the holder seals it.
    let (outcome, seal) = Sealer::new(run, 1, &job.key).seal(Body::Outcome {
        outcome: Outcome::completed("done: hello"),
    });
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(SEAL_HEADER, seal.as_str());
    js.publish_with_headers(events_subject(run), headers, outcome.into())
        .await
        .unwrap()
        .await
        .unwrap();
    drop(held);
    // The next worker gets it back after the ack wait and acks it without a run.
    let _worker = worker(&server.url(), Echo::new(), 3, Arc::new(Notify::new())).await;
    let mut info = jobs.clone();
    while info.info().await.unwrap().state.messages > 0 {
        tokio::task::yield_now().await;
    }
    let tally = subagent_nats::testing::tally(&server.url()).await.unwrap();
    assert_eq!(
        tally.get(&run.to_string()).cloned(),
        Some(subagent_nats::testing::Tally {
            workers: Vec::new(),
            outcomes: 1,
            attempts: 1
        })
    );
}

/// A stopped worker whose run outlasts the drain time hands the job back: another worker runs
/// it at once (no ack wait), the first attempt marked superseded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_worker_hands_back_what_it_still_holds() {
    let server = NatsServer::start().unwrap();
    let stop = Arc::new(Notify::new());
    let first = worker_draining(
        &server.url(),
        Echo::new(),
        3,
        Arc::clone(&stop),
        std::time::Duration::ZERO,
    )
    .await;
    let remote = provider(&server.url()).await;
    let mut run = remote.start(request("WAIT job")).await.unwrap();
    let mut events = run.take_events().unwrap();
    let seen = until_first_text(&mut events).await;
    stop.notify_one();
    first.await.unwrap();
    let (_, outcome) = taken_over(&server.url(), run, events, seen).await;
    assert_eq!(outcome.text, "done: WAIT job");
}

/// The server is killed and started again (same port, file store) while a worker runs a job:
/// the run's outcome still reaches the submitter, and the events stream holds it once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restart_while_a_job_runs_delivers_its_outcome_once() {
    let mut server = NatsServer::start().unwrap();
    let echo = Echo::new();
    let release = Arc::clone(&echo.release);
    let _worker = worker(&server.url(), echo, 3, Arc::new(Notify::new())).await;
    let remote = provider(&server.url()).await;
    let mut run = remote.start(request("WAIT job")).await.unwrap();
    let id = run.id().to_string();
    // The worker holds the job and its first event is stored.
    let mut events = run.take_events().unwrap();
    let mut seen = until_first_text(&mut events).await;
    server.restart().unwrap();
    release.notify_one();
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        seen.extend(events.collect::<Vec<_>>().await);
        run.outcome().await
    })
    .await
    .unwrap();
    assert_eq!(texts(&seen), vec!["got: WAIT job".to_owned()]);
    assert_eq!(
        (outcome.status, outcome.text),
        (StopReason::Completed, "done: WAIT job".to_owned())
    );
    // The job is acked once the outcome is stored (the submitter may see the outcome first;
    // after a `kill -9` the server may also hand the job out again, and the worker that gets
    // it acks it unrun): the queue empties, and the run has one outcome.
    drained(&server.url()).await;
    let tally = subagent_nats::testing::tally(&server.url()).await.unwrap();
    assert_eq!(tally.get(&id).map(|tally| tally.outcomes), Some(1));
}

/// A worker's announcement goes with it: withdrawn when it stops, run out when it is lost
/// (not refreshed for three times its refresh interval); a provider built then refuses the
/// row with a coded error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_whose_workers_are_gone_is_refused() {
    let server = NatsServer::start().unwrap();
    let nobody = |error: Error| {
        assert!(matches!(error, Error::NoWorker { .. }), "{error:?}");
        assert_eq!(
            subagent_core::Error::from(error).code(),
            ErrorCode::SpawnFailed
        );
    };
    // Stopped: withdrawn at once.
    let stop = Arc::new(Notify::new());
    let stopped = worker(&server.url(), Echo::new(), 3, Arc::clone(&stop)).await;
    provider(&server.url()).await;
    stop.notify_one();
    stopped.await.unwrap();
    let refused =
        NatsProvider::connect("remote", NatsConfig::new(server.url(), "echo"), Auth::None)
            .await
            .unwrap_err();
    nobody(refused);
    // Lost (its task and connection dropped, nothing withdrawn): refused once it ran out.
    let lost = worker_with(
        &server.url(),
        Echo::new(),
        Arc::new(Notify::new()),
        |config| {
            config.announce_every = std::time::Duration::from_millis(50);
        },
    )
    .await;
    provider(&server.url()).await;
    lost.abort();
    let refused = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            match NatsProvider::connect("remote", NatsConfig::new(server.url(), "echo"), Auth::None)
                .await
            {
                Ok(_) => tokio::task::yield_now().await,
                Err(error) => break error,
            }
        }
    })
    .await
    .unwrap();
    nobody(refused);
}

/// A server with TLS that verifies clients, its certificate from a private CA: a worker and a
/// provider given the CA and a client certificate run a job through it; without the CA, or
/// without a client certificate, building the row is refused with `UNAUTHORIZED`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_a_private_ca_and_client_certificates() {
    use subagent_nats::Tls;
    use subagent_nats::testing::TlsFiles;

    let files = TlsFiles::generate().unwrap();
    let args = files.server_args(true);
    let server =
        NatsServer::start_with(&args.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
    let tls = Tls {
        ca_file: Some(files.ca.clone()),
        cert_file: Some(files.cert.clone()),
        key_file: Some(files.key.clone()),
    };
    let worker_tls = tls.clone();
    let _worker = worker_with(
        &server.url(),
        Echo::new(),
        Arc::new(Notify::new()),
        |config| {
            config.tls = worker_tls;
        },
    )
    .await;
    let row = |tls: Tls| {
        let mut config = NatsConfig::new(server.url(), "echo");
        config.tls = tls;
        NatsProvider::connect("remote", config, Auth::None)
    };
    let remote = row(tls.clone()).await.unwrap();
    let (_, outcome) = collect(remote.start(request("hello")).await.unwrap()).await;
    assert_eq!(outcome.text, "done: hello");
    let untrusted = row(Tls::default()).await.unwrap_err();
    let anonymous = row(Tls {
        ca_file: Some(files.ca.clone()),
        ..Tls::default()
    })
    .await
    .unwrap_err();
    for refused in [untrusted, anonymous] {
        assert!(matches!(refused, Error::Tls { .. }), "{refused:?}");
        assert_eq!(
            subagent_core::Error::from(refused).code(),
            ErrorCode::Unauthorized
        );
    }
}
