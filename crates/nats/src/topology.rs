//! The streams, buckets and consumers, made on first use by whoever comes first (a worker or a
//! provider) with the same settings (`get_or_create`: an existing one is used as it is).

use std::time::Duration;

use async_nats::jetstream::{self, consumer, kv, stream};

use crate::config::Connection;
use crate::error::{Error, Result};
use crate::wire::{EVENTS_STREAM, JOBS_STREAM, ROWS_BUCKET, RUNS_BUCKET, consumer_name, row_jobs};

/// How long a job's message id is remembered (a retried publish inside it is stored once).
pub(crate) const DUPLICATE_WINDOW: Duration = Duration::from_secs(120);
/// How long an announcement stays in the rows bucket without being put again (it stops
/// counting long before: see [`crate::wire::Announcement`]); clears out lost workers' entries.
pub(crate) const ANNOUNCEMENTS_MAX_AGE: Duration = Duration::from_secs(24 * 3600);
/// How long a run's events stay replayable.
pub(crate) const EVENTS_MAX_AGE: Duration = Duration::from_secs(24 * 3600);

/// A connection with its JetStream context and the handles every side uses.
#[derive(Clone, Debug)]
pub(crate) struct Topology {
    /// The server's URL (for errors).
    pub url: String,
    /// The core connection.
    pub client: async_nats::Client,
    /// JetStream over it.
    pub js: jetstream::Context,
    /// The jobs stream.
    pub jobs: stream::Stream,
    /// The events stream.
    pub events: stream::Stream,
    /// The workers' announcements.
    pub rows: kv::Store,
    /// Run state (attempts, cancels).
    pub runs: kv::Store,
    /// Goes up each time the client connects again (see [`crate::config::Connection`]).
    pub connects: tokio::sync::watch::Receiver<u64>,
}

impl Topology {
    /// Makes (or finds) the streams and buckets over `client`.
    pub(crate) async fn ensure(url: &str, (client, connects): Connection) -> Result<Self> {
        let fail = |what: &str, error: &dyn std::fmt::Display| {
            Error::unreachable(url, format!("{what}: {error}"))
        };
        let js = jetstream::new(client.clone());
        let jobs = js
            .get_or_create_stream(stream::Config {
                name: JOBS_STREAM.to_owned(),
                subjects: vec!["subagents.jobs.>".to_owned()],
                retention: stream::RetentionPolicy::WorkQueue,
                storage: stream::StorageType::File,
                duplicate_window: DUPLICATE_WINDOW,
                ..Default::default()
            })
            .await
            .map_err(|e| {
                fail(
                    "the jobs stream (is JetStream enabled? nats-server -js)",
                    &e,
                )
            })?;
        let events = js
            .get_or_create_stream(stream::Config {
                name: EVENTS_STREAM.to_owned(),
                subjects: vec!["subagents.events.>".to_owned()],
                retention: stream::RetentionPolicy::Limits,
                storage: stream::StorageType::File,
                max_age: EVENTS_MAX_AGE,
                // One ordered consumer per followed run.
                max_consumers: -1,
                ..Default::default()
            })
            .await
            .map_err(|e| fail("the events stream", &e))?;
        let rows = bucket(&js, ROWS_BUCKET, ANNOUNCEMENTS_MAX_AGE)
            .await
            .map_err(|e| fail("the rows bucket", &e))?;
        let runs = bucket(&js, RUNS_BUCKET, EVENTS_MAX_AGE)
            .await
            .map_err(|e| fail("the runs bucket", &e))?;
        Ok(Self {
            url: url.to_owned(),
            client,
            js,
            jobs,
            events,
            rows,
            runs,
            connects,
        })
    }

    /// The durable pull consumer all workers serving `row` share: explicit acks, redelivery
    /// `ack_wait` after the last ack or progress ack, `attempts + 1` deliveries (the last one
    /// only buries the job: see the worker).
    pub(crate) async fn row_consumer(
        &self,
        row: &str,
        ack_wait: Duration,
        attempts: u32,
    ) -> Result<consumer::PullConsumer> {
        let name = consumer_name(row);
        self.jobs
            .get_or_create_consumer(
                &name,
                consumer::pull::Config {
                    durable_name: Some(name.clone()),
                    filter_subject: row_jobs(row),
                    ack_policy: consumer::AckPolicy::Explicit,
                    ack_wait,
                    max_deliver: i64::from(attempts) + 1,
                    max_ack_pending: 10_000,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| Error::unreachable(&self.url, format!("the consumer {name}: {e}")))
    }
}

async fn bucket(
    js: &jetstream::Context,
    name: &str,
    max_age: Duration,
) -> std::result::Result<kv::Store, String> {
    if let Ok(store) = js.get_key_value(name).await {
        return Ok(store);
    }
    js.create_key_value(kv::Config {
        bucket: name.to_owned(),
        history: 1,
        max_age,
        storage: stream::StorageType::File,
        ..Default::default()
    })
    .await
    .map_err(|e| e.to_string())
}
