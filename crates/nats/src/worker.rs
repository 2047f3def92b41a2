//! `subagent worker`'s engine: pulls jobs of the rows of its registry from the work queue, one
//! per free slot, runs each through the registry (its gates apply here), publishes the run's
//! events, keeps the job with progress acks, and acks once the outcome is stored.
//!
//! Decisions on the traps of the real server (`shared/reference/nats.md`):
//! - no prefetch: a slot is taken before a pull of one message, so a worker never holds a job
//!   it does not run;
//! - a stale worker (its job redelivered after it stopped answering) finds a newer attempt in
//!   the runs bucket at its next progress tick or at its end: it cancels its run and publishes
//!   and acks nothing; the submitter drops a lost attempt's late events anyway;
//! - a job that used up its deliveries: the consumer allows one delivery more than the
//!   attempts, and a worker that gets it publishes a failed outcome saying so and acks it,
//!   instead of leaving it in the queue forever;
//! - a cancel sent while no worker holds the job: the submitter stores a flag that a worker
//!   checks when it takes the job (and deletes the queued message when it can).

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::context::PublishAckFuture;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::{self, AckKind};
use futures::{FutureExt, StreamExt};
use subagent_core::CancellationToken;
use subagent_core::registry::Registry;
use subagent_core::time::now_ms;
use subagent_core::{Extensions, Outcome, RunEvent, RunId};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::config::{Auth, Tls, connect};
use crate::error::{Error, Result};
use crate::seal::{SEAL_HEADER, Sealer};
use crate::topology::Topology;
use crate::wire::{
    Announcement, Body, Job, announcement_key, attempt_key, cancel_key, cancel_subject,
    events_subject, wake_subject,
};

/// How a worker runs.
#[derive(Clone)]
pub struct WorkerConfig {
    /// The server's URL.
    pub url: String,
    /// Credentials.
    pub auth: Auth,
    /// TLS files.
    pub tls: Tls,
    /// The worker's name (in announcements and logs).
    pub name: String,
    /// Jobs run at once.
    pub concurrency: usize,
    /// How long a job held by a worker that stopped answering waits before it goes to another
    /// (the consumer's ack wait; progress acks go out every third of it).
    pub ack_wait: Duration,
    /// How many times a job is tried before it fails.
    pub attempts: u32,
    /// Where the runs work (the preset's project directory).
    pub cwd: PathBuf,
    /// After a stop, how long the runs going may take before they are handed back.
    pub drain: Duration,
    /// Handed to every run's parent context (the CLI's default model and secrets).
    pub extensions: Extensions,
    /// How often the worker puts its announcements again; each holds three times this long
    /// (a lost worker's rows are refused by providers built after that).
    pub announce_every: Duration,
}

impl std::fmt::Debug for WorkerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerConfig")
            .field("url", &self.url)
            .field("name", &self.name)
            .field("concurrency", &self.concurrency)
            .field("ack_wait", &self.ack_wait)
            .field("attempts", &self.attempts)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

impl WorkerConfig {
    /// Defaults: 1 slot, ack wait 30 s, 3 attempts, 30 s drain.
    pub fn new(url: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            url: url.into(),
            auth: Auth::None,
            tls: Tls::default(),
            name: format!("worker-{}", std::process::id()),
            concurrency: 1,
            ack_wait: Duration::from_secs(30),
            attempts: 3,
            cwd: cwd.into(),
            drain: Duration::from_secs(30),
            extensions: Extensions::new(),
            announce_every: Duration::from_secs(10),
        }
    }
}

/// A worker: a registry and a connection.
pub struct Worker {
    topology: Topology,
    registry: Arc<Registry>,
    config: Arc<WorkerConfig>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// Connects, makes the streams if needed, and announces every row of `registry` with its
    /// capability table.
    pub async fn connect(registry: Arc<Registry>, config: WorkerConfig) -> Result<Self> {
        crate::config::check_url(&config.url)?;
        if config.concurrency == 0 || config.attempts == 0 {
            return Err(Error::config("concurrency and attempts must be above zero"));
        }
        if config.announce_every < Duration::from_millis(10)
            || config.announce_every > Duration::from_secs(3600)
        {
            return Err(Error::config(
                "announcements are refreshed every 10 ms to 1 h",
            ));
        }
        if config.ack_wait < Duration::from_millis(300) {
            return Err(Error::config("the ack wait must be at least 300 ms"));
        }
        let client = connect(
            &config.url,
            &config.auth,
            &config.tls,
            &config.name,
            Duration::from_secs(10),
        )
        .await?;
        let topology = Topology::ensure(&config.url, client).await?;
        let worker = Self {
            topology,
            registry,
            config: Arc::new(config),
        };
        worker.announce().await?;
        Ok(worker)
    }

    /// The rows served: the registry's providers.
    pub fn rows(&self) -> Vec<String> {
        self.registry.names()
    }

    async fn announce(&self) -> Result<()> {
        announce(&self.topology, &self.registry, &self.config).await
    }

    /// Pulls and runs jobs until `stop` resolves, then drains: pulls no more, lets the runs
    /// going end for up to the drain time, then cancels them and hands their jobs back to the
    /// queue (another worker takes them at once).
    pub async fn run(self, stop: impl Future<Output = ()> + Send) -> Result<()> {
        let slots = Arc::new(Semaphore::new(self.config.concurrency));
        let stopping = CancellationToken::new();
        let handing_back = CancellationToken::new();
        let mut pullers = JoinSet::new();
        let (jobs_tx, mut jobs_rx) = tokio::sync::mpsc::unbounded_channel();
        let mut consumers = Vec::new();
        for row in self.rows() {
            consumers.push((
                wake_subject(&row),
                self.topology
                    .row_consumer(&row, self.config.ack_wait, self.config.attempts)
                    .await?,
            ));
        }
        // Woken by the submitter once a job of one of our rows is stored (a redelivery or a
        // hand-back wakes nobody: the fallback poll finds those).
        let mut wake = Vec::new();
        for row in self.rows() {
            let subscriber = self
                .topology
                .client
                .subscribe(wake_subject(&row))
                .await
                .map_err(|e| {
                    Error::unreachable(
                        &self.config.url,
                        format!("subscribing to the jobs of {row:?}: {e}"),
                    )
                })?;
            wake.push(subscriber);
        }
        pullers.spawn(pull(
            consumers,
            futures::stream::select_all(wake),
            Arc::clone(&slots),
            stopping.clone(),
            jobs_tx.clone(),
        ));
        drop(jobs_tx);
        pullers.spawn(keep_announcing(
            self.topology.clone(),
            Arc::clone(&self.registry),
            Arc::clone(&self.config),
            stopping.clone(),
        ));
        tracing::info!(worker = %self.config.name, rows = %self.rows().join(", "), "nats worker ready");
        let mut running = JoinSet::new();
        let mut stop = std::pin::pin!(stop);
        loop {
            tokio::select! {
                () = &mut stop => break,
                job = jobs_rx.recv() => match job {
                    Some((message, permit)) => {
                        let context = JobContext {
                            topology: self.topology.clone(),
                            registry: Arc::clone(&self.registry),
                            config: Arc::clone(&self.config),
                            handing_back: handing_back.clone(),
                        };
                        running.spawn(async move {
                            context.handle(message).await;
                            drop(permit);
                        });
                    }
                    None => break,
                },
                Some(_) = running.join_next(), if !running.is_empty() => {}
            }
        }
        stopping.cancel();
        while pullers.join_next().await.is_some() {}
        // A job pulled while stopping is handed back at once.
        while let Ok((message, _permit)) = jobs_rx.try_recv() {
            let _ = message.double_ack_with(AckKind::Nak(None)).await;
        }
        tracing::info!(worker = %self.config.name, running = running.len(), "nats worker draining");
        let drained = tokio::time::timeout(self.config.drain, async {
            while running.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            handing_back.cancel();
            while running.join_next().await.is_some() {}
        }
        Ok(())
    }
}

/// Puts an announcement of every row of `registry` (see [`Announcement`]).
async fn announce(topology: &Topology, registry: &Registry, config: &WorkerConfig) -> Result<()> {
    let ttl = config.announce_every.saturating_mul(3);
    for row in registry.names() {
        let Some(provider) = registry.get(&row) else {
            continue;
        };
        let announcement = Announcement {
            row: row.clone(),
            worker: config.name.clone(),
            capabilities: provider.capabilities(),
            refreshed_ms: now_ms(),
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
        };
        let bytes =
            serde_json::to_vec(&announcement).map_err(|e| Error::unreachable(&config.url, e))?;
        topology
            .rows
            .put(announcement_key(&row, &config.name), bytes.into())
            .await
            .map_err(|e| Error::unreachable(&config.url, format!("announcing row {row:?}: {e}")))?;
    }
    Ok(())
}

/// Puts the announcements again every [`WorkerConfig::announce_every`] until `stopping`, then
/// deletes them (a stopping worker takes no more jobs).
async fn keep_announcing(
    topology: Topology,
    registry: Arc<Registry>,
    config: Arc<WorkerConfig>,
    stopping: CancellationToken,
) {
    let every = config.announce_every;
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            _ = ticker.tick() => {
                if let Err(error) = announce(&topology, &registry, &config).await {
                    tracing::warn!(%error, "nats: refreshing the announcements");
                }
            }
            () = stopping.cancelled() => break,
        }
    }
    for row in registry.names() {
        if let Err(error) = topology
            .rows
            .delete(announcement_key(&row, &config.name))
            .await
        {
            tracing::warn!(%error, row, "nats: withdrawing an announcement");
        }
    }
}

type Pulled = (jetstream::Message, tokio::sync::OwnedSemaphorePermit);

/// How long an idle worker waits for a wake-up before it looks at the queues again (a job
/// redelivered after its worker was lost wakes nobody).
const POLL: Duration = Duration::from_secs(1);

/// After a wake-up, how long the pull of one job of the woken row may wait on the server (the
/// consumer may see a stored job a moment after the submitter's wake-up; a job published
/// meanwhile goes to this pull at once).
const WAKE_PULL: Duration = Duration::from_millis(100);

/// The pull loop: for each free slot, one job (no prefetch: a worker never holds a job it does
/// not run). Woken by a submitter for a row, it asks that row with a pull of one message that
/// waits on the server up to [`WAKE_PULL`] (served the moment the consumer sees the job);
/// otherwise it asks every row without waiting (round robin); with nothing queued, the slot is
/// given back until a job for one of the rows is published or [`POLL`] passes. A pull waiting
/// on the server is read to its end even when the worker stops (a job it brings then is handed
/// back at once), so no request of a stopped worker is left to catch a job and sit on it for
/// the ack wait.
async fn pull(
    consumers: Vec<(String, jetstream::consumer::PullConsumer)>,
    mut wake: futures::stream::SelectAll<async_nats::Subscriber>,
    slots: Arc<Semaphore>,
    stopping: CancellationToken,
    jobs: tokio::sync::mpsc::UnboundedSender<Pulled>,
) {
    let mut next = 0;
    let mut woken: Option<usize> = None;
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&slots).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return,
            },
            () = stopping.cancelled() => return,
        };
        let mut found = match woken.take() {
            Some(row) => wait_one(&consumers[row].1).await,
            None => None,
        };
        if found.is_none() && !stopping.is_cancelled() {
            for offset in 0..consumers.len() {
                let row = (next + offset) % consumers.len();
                if let Some(message) = fetch_one(&consumers[row].1).await {
                    next = (row + 1) % consumers.len();
                    found = Some(message);
                    break;
                }
            }
        }
        if let Some(message) = found {
            if stopping.is_cancelled() {
                let _ = message.double_ack_with(AckKind::Nak(None)).await;
                return;
            }
            if jobs.send((message, permit)).is_err() {
                return;
            }
            continue;
        }
        drop(permit);
        // Wake-ups that came while the queues were asked are for jobs already taken, or for
        // one the consumer did not see yet: the newest is followed up with a waiting pull.
        let mut latest = None;
        while let Some(Some(message)) = wake.next().now_or_never() {
            latest = Some(message);
        }
        let message = match latest {
            Some(message) => Some(message),
            None => tokio::select! {
                message = wake.next() => message,
                () = tokio::time::sleep(POLL) => None,
                () = stopping.cancelled() => return,
            },
        };
        if let Some(message) = message {
            woken = consumers
                .iter()
                .position(|(subject, _)| *subject == message.subject.as_str());
        }
    }
}

/// One job of `consumer`: a pull that waits on the server up to [`WAKE_PULL`], read to its end
/// whatever happens meanwhile (the caller hands back what it brings once the worker stops).
async fn wait_one(consumer: &jetstream::consumer::PullConsumer) -> Option<jetstream::Message> {
    let mut batch = match consumer
        .batch()
        .max_messages(1)
        .expires(WAKE_PULL)
        .messages()
        .await
    {
        Ok(batch) => batch,
        Err(error) => {
            tracing::warn!(%error, "nats: asking for a job");
            return None;
        }
    };
    match batch.next().await {
        Some(Ok(message)) => Some(message),
        Some(Err(error)) => {
            tracing::debug!(%error, "nats: no job");
            None
        }
        None => None,
    }
}

/// One job of `consumer` if one is queued now.
async fn fetch_one(consumer: &jetstream::consumer::PullConsumer) -> Option<jetstream::Message> {
    let mut batch = match consumer.fetch().max_messages(1).messages().await {
        Ok(batch) => batch,
        Err(error) => {
            tracing::warn!(%error, "nats: asking for a job");
            return None;
        }
    };
    match batch.next().await {
        Some(Ok(message)) => Some(message),
        Some(Err(error)) => {
            tracing::debug!(%error, "nats: no job");
            None
        }
        None => None,
    }
}

/// Waits for the acks of envelopes sent (a lost one is logged: the run's outcome is what the
/// submitter needs, and it is stored apart).
async fn settle(run: RunId, pending: &mut Vec<PublishAckFuture>) {
    for ack in pending.drain(..) {
        if let Err(error) = ack.await {
            tracing::warn!(%run, %error, "nats: a run event was not stored");
        }
    }
}

/// What a job's task needs.
struct JobContext {
    topology: Topology,
    registry: Arc<Registry>,
    config: Arc<WorkerConfig>,
    handing_back: CancellationToken,
}

/// How a job's run ended on this worker.
enum End {
    /// With an outcome to store.
    Outcome(Box<Outcome>),
    /// A newer attempt holds the job: store and ack nothing.
    Superseded,
    /// The worker is stopping: the job goes back to the queue.
    HandBack,
}

impl JobContext {
    /// Publishes an envelope of the run, sealed, without waiting for the server's ack (one
    /// connection keeps them in order); the ack is awaited by [`settle`] before the job's ack.
    async fn send(&self, run: RunId, sealer: &Sealer, body: Body) -> Option<PublishAckFuture> {
        let (payload, seal) = sealer.seal(body);
        match self
            .topology
            .js
            .send_publish(
                events_subject(run),
                PublishMessage::build()
                    .payload(payload.into())
                    .header(SEAL_HEADER, seal.as_str()),
            )
            .await
        {
            Ok(ack) => Some(ack),
            Err(error) => {
                tracing::warn!(%run, %error, "nats: publishing a run event");
                None
            }
        }
    }

    /// Publishes the run's outcome and waits until the server has stored it: a publish that
    /// gets no ack (the server restarting, say) is sent again under the same message id, so it
    /// is stored once, until the ack wait has passed or a newer attempt holds the job. False
    /// when it was not stored: the job is then left unacked (it comes back after the ack wait).
    async fn store_outcome(
        &self,
        run: RunId,
        attempt: u32,
        sealer: &Sealer,
        outcome: Outcome,
    ) -> bool {
        let (payload, seal) = sealer.seal(Body::Outcome { outcome });
        let payload = bytes::Bytes::from(payload);
        let deadline = tokio::time::Instant::now() + self.config.ack_wait;
        loop {
            let sent = self
                .topology
                .js
                .send_publish(
                    events_subject(run),
                    PublishMessage::build()
                        .payload(payload.clone())
                        .header(SEAL_HEADER, seal.as_str())
                        .message_id(format!("{run}.{attempt}.outcome")),
                )
                .await;
            let error = match sent {
                Ok(ack) => match ack.await {
                    Ok(_) => return true,
                    Err(error) => error.to_string(),
                },
                Err(error) => error.to_string(),
            };
            tracing::warn!(%run, %error, "nats: storing the outcome; trying again");
            if tokio::time::Instant::now() >= deadline || self.newest_attempt(run).await > attempt {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Whether the run's last event is its outcome (published just before the job's ack),
    /// sealed with the job's key: a forged one is no reason to leave the job unrun.
    async fn has_outcome(&self, run: RunId, sealer: &Sealer) -> bool {
        match self
            .topology
            .events
            .get_last_raw_message_by_subject(&events_subject(run))
            .await
        {
            Ok(message) => sealer.is_sealed_outcome(
                &message.payload,
                message.headers.get(SEAL_HEADER).map(|value| value.as_str()),
            ),
            Err(_) => false,
        }
    }

    /// The newest attempt of `run` as the runs bucket says.
    async fn newest_attempt(&self, run: RunId) -> u32 {
        match self.topology.runs.get(attempt_key(run)).await {
            Ok(Some(bytes)) => std::str::from_utf8(&bytes)
                .ok()
                .and_then(|text| text.parse().ok())
                .unwrap_or(0),
            _ => 0,
        }
    }

    async fn handle(self, message: jetstream::Message) {
        let attempt = message
            .info()
            .map(|info| u32::try_from(info.delivered).unwrap_or(u32::MAX))
            .unwrap_or(1);
        let job: Job = match serde_json::from_slice(&message.payload) {
            Ok(job) => job,
            Err(error) => {
                tracing::warn!(%error, "nats: a job that does not read; dropped");
                let _ = message.ack_with(AckKind::Term).await;
                return;
            }
        };
        if !job.matches_subject(message.subject.as_str()) {
            // Published on another job's subject (or naming another row): it would run, and
            // publish, under a run id it was not sent for.
            tracing::warn!(subject = %message.subject, run = %job.run_id, row = job.row, "nats: a job whose subject names another run or row; dropped");
            let _ = message.ack_with(AckKind::Term).await;
            return;
        }
        let id = job.run_id;
        let sealer = Sealer::new(id, attempt, &job.key);
        if attempt > 1 && self.has_outcome(id, &sealer).await {
            // The last holder stored the outcome and was lost before its ack reached the
            // server: the run is over, nothing runs twice.
            let _ = message.double_ack().await;
            return;
        }
        if attempt > self.config.attempts {
            let outcome = Outcome::failed(format!(
                "the job was tried {} times and no attempt finished: each time the worker holding it stopped answering for the ack wait ({} ms)",
                self.config.attempts,
                self.config.ack_wait.as_millis()
            ));
            if self.store_outcome(id, attempt, &sealer, outcome).await {
                let _ = message.double_ack().await;
            }
            return;
        }
        // The attempt is recorded, the cancel subject listened on and the cancel flag read at
        // once (the flag is set before a cancel request is sent, so one of the two sees it).
        let (recorded, subscribed, flag) = tokio::join!(
            self.topology
                .runs
                .put(attempt_key(id), attempt.to_string().into()),
            self.topology.client.subscribe(cancel_subject(id)),
            self.topology.runs.get(cancel_key(id)),
        );
        if let Err(error) = recorded {
            tracing::warn!(run = %id, %error, "nats: recording the attempt");
        }
        let mut cancels = match subscribed {
            Ok(subscriber) => Some(subscriber),
            Err(error) => {
                tracing::warn!(run = %id, %error, "nats: listening for a cancel");
                None
            }
        };
        if let Ok(Some(_)) = flag {
            if self
                .store_outcome(id, attempt, &sealer, Outcome::cancelled())
                .await
            {
                let _ = message.double_ack().await;
            }
            return;
        }
        let mut pending = Vec::new();
        pending.extend(
            self.send(
                id,
                &sealer,
                Body::Taken {
                    worker: self.config.name.clone(),
                },
            )
            .await,
        );
        let mut request = job.request(self.config.cwd.clone());
        request.parent.extensions = self.config.extensions.clone();
        let mut run = match self.registry.start(&job.row, request).await {
            Ok(run) => run,
            Err(error) => {
                let body = Body::Refused {
                    code: error.code(),
                    message: error.to_string(),
                };
                pending.extend(self.send(id, &sealer, body).await);
                settle(id, &mut pending).await;
                let _ = message.double_ack().await;
                return;
            }
        };
        let cancel = run.cancel_token();
        let mut events = run.take_events();
        let tick = (self.config.ack_wait / 3).max(Duration::from_millis(100));
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + tick, tick);
        let mut superseded = false;
        let mut handed_back = false;
        loop {
            tokio::select! {
                event = async {
                    match events.as_mut() {
                        Some(events) => events.next().await,
                        None => None,
                    }
                } => match event {
                    Some(event) => {
                        if !matches!(event, RunEvent::Started { .. } | RunEvent::Finished { .. }) {
                            pending.extend(self.send(id, &sealer, Body::Event { event }).await);
                        }
                    }
                    None => break,
                },
                request = async {
                    match cancels.as_mut() {
                        Some(cancels) => cancels.next().await,
                        None => std::future::pending().await,
                    }
                } => {
                    if let Some(request) = request {
                        if let Some(reply) = request.reply {
                            let _ = self.topology.client.publish(reply, "cancelling".into()).await;
                        }
                        cancel.cancel();
                    }
                }
                _ = ticker.tick() => {
                    settle(id, &mut pending).await;
                    if self.newest_attempt(id).await > attempt {
                        tracing::warn!(run = %id, attempt, "nats: a newer attempt holds the job; stopping this one");
                        superseded = true;
                        cancel.cancel();
                    } else if let Err(error) = message.ack_with(AckKind::Progress).await {
                        tracing::warn!(run = %id, %error, "nats: progress ack");
                    }
                }
                () = self.handing_back.cancelled(), if !handed_back => {
                    handed_back = true;
                    cancel.cancel();
                }
            }
        }
        let outcome = run.outcome().await;
        let end = if superseded || self.newest_attempt(id).await > attempt {
            End::Superseded
        } else if handed_back && !outcome.is_completed() {
            End::HandBack
        } else {
            End::Outcome(Box::new(outcome))
        };
        drop(cancels);
        match end {
            End::Outcome(outcome) => {
                let stored = self.store_outcome(id, attempt, &sealer, *outcome).await;
                settle(id, &mut pending).await;
                if stored && let Err(error) = message.double_ack().await {
                    tracing::warn!(run = %id, %error, "nats: acking the job");
                }
            }
            End::Superseded => settle(id, &mut pending).await,
            End::HandBack => {
                settle(id, &mut pending).await;
                let _ = message.double_ack_with(AckKind::Nak(None)).await;
            }
        }
    }
}
