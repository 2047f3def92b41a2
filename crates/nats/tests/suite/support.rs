//! A worker-side provider for the tests (`echo`), a worker in this process, a provider.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use subagent_core::registry::Registry;
use subagent_core::{
    Capabilities, Outcome, Run, RunEvent, StartRequest, StopReason, SubagentProvider,
};
use subagent_nats::{Auth, NatsConfig, NatsProvider, Worker, WorkerConfig};
use tokio::sync::Notify;

/// Echoes the prompt as text and completes; a prompt with `WAIT` first waits for `release`
/// (or the cancel). Declares `persona` and `max_turns` only.
pub(super) struct Echo {
    pub release: Arc<Notify>,
    /// Notified each time a run starts waiting.
    pub waiting: Arc<Notify>,
}

impl Echo {
    pub(super) fn new() -> Self {
        Self {
            release: Arc::new(Notify::new()),
            waiting: Arc::new(Notify::new()),
        }
    }
}

pub(super) const ECHO_CAPS: Capabilities = {
    let mut caps = Capabilities::NONE;
    caps.persona = true;
    caps.max_turns = true;
    caps
};

#[async_trait]
impl SubagentProvider for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    fn capabilities(&self) -> Capabilities {
        ECHO_CAPS
    }

    async fn start(&self, request: StartRequest) -> subagent_core::Result<Run> {
        let (sender, run) = Run::channel("echo", &request);
        let prompt = request.prompt_text();
        let release = Arc::clone(&self.release);
        let waiting = Arc::clone(&self.waiting);
        tokio::spawn(async move {
            sender.emit(RunEvent::Text {
                text: format!("got: {prompt}"),
                parent_tool_use_id: None,
            });
            if prompt.contains("WAIT") {
                waiting.notify_one();
                tokio::select! {
                    () = release.notified() => {}
                    () = sender.cancel_token().cancelled() => {
                        sender.finish(Outcome::cancelled());
                        return;
                    }
                }
            }
            sender.finish(Outcome::completed(format!("done: {prompt}")));
        });
        Ok(run)
    }
}

/// A worker in this process serving `echo` (its ack wait 1 s, `attempts` tries); the task runs
/// until aborted or `stop` is notified.
pub(super) async fn worker(
    url: &str,
    echo: Echo,
    attempts: u32,
    stop: Arc<Notify>,
) -> tokio::task::JoinHandle<()> {
    worker_draining(url, echo, attempts, stop, Duration::from_secs(30)).await
}

/// [`worker`] whose runs get `drain` after a stop before their jobs are handed back.
pub(super) async fn worker_draining(
    url: &str,
    echo: Echo,
    attempts: u32,
    stop: Arc<Notify>,
    drain: Duration,
) -> tokio::task::JoinHandle<()> {
    worker_with(url, echo, stop, |config| {
        config.attempts = attempts;
        config.drain = drain;
    })
    .await
}

/// A worker serving `echo` (ack wait 1 s, two slots), its config changed by `configure`.
pub(super) async fn worker_with(
    url: &str,
    echo: Echo,
    stop: Arc<Notify>,
    configure: impl FnOnce(&mut WorkerConfig),
) -> tokio::task::JoinHandle<()> {
    let registry = Registry::new();
    registry.register(Arc::new(echo)).unwrap();
    let mut config = WorkerConfig::new(url, std::env::temp_dir());
    config.ack_wait = Duration::from_secs(1);
    config.concurrency = 2;
    configure(&mut config);
    let worker = Worker::connect(Arc::new(registry), config).await.unwrap();
    tokio::spawn(async move {
        worker
            .run(async move { stop.notified().await })
            .await
            .unwrap();
    })
}

/// A provider named `remote` for the `echo` row.
pub(super) async fn provider(url: &str) -> NatsProvider {
    NatsProvider::connect("remote", NatsConfig::new(url, "echo"), Auth::None)
        .await
        .unwrap()
}

/// A run's events and outcome.
pub(super) async fn collect(mut run: Run) -> (Vec<RunEvent>, Outcome) {
    let events = run.take_events().unwrap();
    tokio::time::timeout(Duration::from_secs(60), async {
        let events: Vec<RunEvent> = events.collect().await;
        (events, run.outcome().await)
    })
    .await
    .unwrap()
}

/// The texts among `events`.
pub(super) fn texts(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            RunEvent::Text { text, .. } => Some(text.clone()),
            RunEvent::Progress { message, .. } => Some(format!("progress: {message}")),
            _ => None,
        })
        .collect()
}

/// The status of the last `Finished`.
pub(super) fn finished(events: &[RunEvent]) -> Option<StopReason> {
    events.iter().rev().find_map(|event| match event {
        RunEvent::Finished { status } => Some(*status),
        _ => None,
    })
}

/// The events of `events` up to and including the first text: the worker holds the job then.
pub(super) async fn until_first_text(events: &mut subagent_core::RunEvents) -> Vec<RunEvent> {
    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        let text = matches!(event, RunEvent::Text { .. });
        seen.push(event);
        if text {
            break;
        }
    }
    seen
}

/// A lost holder of the next `echo` job: takes it (its first delivery) and never acks; the
/// jobs stream and the message held.
pub(super) async fn hold_a_job(
    js: &async_nats::jetstream::Context,
) -> (
    async_nats::jetstream::stream::Stream,
    async_nats::jetstream::Message,
) {
    use async_nats::jetstream::consumer;
    use subagent_nats::wire::{JOBS_STREAM, consumer_name, row_jobs};
    let jobs = js.get_stream(JOBS_STREAM).await.unwrap();
    let lost: consumer::PullConsumer = jobs
        .get_or_create_consumer(
            &consumer_name("echo"),
            consumer::pull::Config {
                durable_name: Some(consumer_name("echo")),
                filter_subject: row_jobs("echo"),
                ack_policy: consumer::AckPolicy::Explicit,
                ack_wait: Duration::from_secs(1),
                max_deliver: 4,
                max_ack_pending: 10_000,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let mut batch = lost.fetch().max_messages(1).messages().await.unwrap();
    let held = batch.next().await.unwrap().unwrap();
    assert_eq!(held.info().unwrap().delivered, 1);
    (jobs, held)
}

/// A second worker, released at once, takes the job over from the first (lost or stopped)
/// attempt: what was `seen` and the run's remaining events, and its outcome. The texts show
/// the first attempt's, the note that it was superseded, then the second's.
pub(super) async fn taken_over(
    url: &str,
    run: Run,
    events: subagent_core::RunEvents,
    mut seen: Vec<RunEvent>,
) -> (Vec<RunEvent>, Outcome) {
    let second = Echo::new();
    second.release.notify_one();
    let _second = worker(url, second, 3, Arc::new(Notify::new())).await;
    seen.extend(events.collect::<Vec<_>>().await);
    let outcome = run.outcome().await;
    assert_eq!(
        texts(&seen),
        vec![
            "got: WAIT job".to_owned(),
            "progress: attempt 1 was lost (its worker stopped answering): its events above are superseded; attempt 2 runs the task again from the start".to_owned(),
            "got: WAIT job".to_owned(),
        ]
    );
    (seen, outcome)
}

/// The job and event streams as a worker makes them (one started and stopped at once), and a
/// JetStream client of the server at `url`.
pub(super) async fn streams_made(url: &str) -> async_nats::jetstream::Context {
    let stop = Arc::new(Notify::new());
    let announcer = worker(url, Echo::new(), 3, Arc::clone(&stop)).await;
    stop.notify_one();
    announcer.await.unwrap();
    let client = async_nats::connect(url).await.unwrap();
    async_nats::jetstream::new(client)
}
