//! `subagent-nats`: past one machine. The `nats` provider kind ([`NatsFactory`],
//! [`NatsProvider`], config [`NatsConfig`]) sends a row's runs through a NATS JetStream work
//! queue to `subagent worker`s ([`Worker`]), which run them through their own registry and
//! publish each run's events to a replayable stream.
//!
//! Topology ([`wire`] has the names): a work-queue stream of jobs, one subject per row and run
//! (`subagents.jobs.<row>.<run id>`, the run id also the message id: a retried publish is
//! stored once), one durable pull consumer per row shared by every worker serving it (explicit
//! acks, progress acks every third of the ack wait, one delivery more than the attempts); a
//! limits stream of events (`subagents.events.<run id>`, each tagged with its attempt, kept a
//! day); a key-value bucket where each worker announces each row it serves with its capability
//! table (refreshed while it runs, deleted when it stops, dead once not refreshed for three
//! intervals; a provider freezes its table from a live one when built, so a request needing
//! more is refused before anything is published); a bucket of run state (the newest attempt, a
//! cancel flag); a core request on `subagents.cancel.<run id>` that the worker holding the run
//! answers; a core message on `subagents.wake.<row>` that wakes idle workers once a job is
//! stored.
//!
//! Crash safety: a worker that stops answering loses its job after the ack wait; another worker
//! runs it again under the same run id, and the submitter marks the lost attempt's events as
//! superseded and drops its late ones; past the attempts the run fails with a diagnostic.
//!
//! Forged events: a run's envelopes are sealed ([`seal`]) with a key its submitter made for the
//! job; the submitter passes on only the run's own worker's, so another client publishing on
//! the run's subject (another job's outcome, a newer attempt, a replay) cannot end or change
//! it, and a worker runs a job only under the subject it was sent on.
//!
//! Credentials: a token or a user and password from environment variables, TLS with a private
//! CA and client certificates ([`Tls`]). Deliberately not here: starting a server (`testing`
//! does, for tests), NKey/JWT credentials (async-nats's `nkeys` feature, off), moving the
//! submitter's files or conversation to the worker (a run works in the worker's directory).

mod config;
mod error;
mod follow;
pub mod forger;
mod provider;
pub mod seal;
pub mod testing;
mod topology;
pub mod wire;
mod worker;

pub use config::{Auth, Credentials, NatsConfig, Timeouts, Tls};
pub use error::{Error, Result};
pub use provider::{CARRIED, KIND, NatsFactory, NatsProvider};
pub use worker::{Worker, WorkerConfig};
