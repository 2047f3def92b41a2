//! A forger for tests (this crate's and the chaos harness's): a client of the server with the
//! same rights as any worker, which forges envelopes for every run it sees start and jobs
//! under their ids. What it publishes never reaches a run (see [`crate::seal`]); its texts
//! carry [`FORGED`], so a run that passed one on is easy to tell.
//!
//! It learns runs the way any client can: from the events subjects (`subagents.events.>`,
//! a worker's `taken`). It does not read the jobs (whoever does learns their keys).

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_nats::HeaderMap;
use futures::StreamExt;
use subagent_core::{Outcome, RunEvent, RunId, StartRequest};

use crate::seal::SEAL_HEADER;
use crate::wire::{Body, Envelope, Job, events_subject, job_subject};

/// In every text the forger publishes.
pub const FORGED: &str = "FORGED-BY-THE-FORGER";

/// The kinds of forgery, one per run and kind at most (see [`Forger::start`]).
pub const KINDS: [&str; 8] = [
    "an outcome of no run and no seal",
    "another run's outcome",
    "an outcome with a made-up seal",
    "a refusal with a made-up seal",
    "a text event without a seal",
    "a newer attempt, taken and ended",
    "a replay of the run's own sealed envelope",
    "a job of its own under the run's id, on another job's subject",
];

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A running forger; stops when dropped.
#[derive(Debug)]
pub struct Forger {
    task: tokio::task::JoinHandle<()>,
    published: Arc<AtomicU64>,
    runs: Arc<AtomicU64>,
}

impl Drop for Forger {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn io(error: &dyn std::fmt::Display) -> std::io::Error {
    std::io::Error::other(error.to_string())
}

fn bogus_seal() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(SEAL_HEADER, "ab".repeat(32).as_str());
    headers
}

fn forged_outcome(what: &str) -> Body {
    Body::Outcome {
        outcome: Outcome::completed(format!("{FORGED}: {what}")),
    }
}

fn envelope(attempt: u32, run: Option<RunId>, seq: u64, body: Body) -> Vec<u8> {
    serde_json::to_vec(&Envelope {
        attempt,
        run,
        seq,
        body,
    })
    .unwrap_or_default()
}

impl Forger {
    /// Connects to the server at `url` and, for each run it sees taken by a worker, publishes
    /// `per_run` of the [`KINDS`] (a replay of the `taken` always among them), chosen by a
    /// generator seeded with `seed`; a forged job names the row `row`. Call inside a tokio
    /// runtime.
    pub async fn start(url: &str, row: &str, seed: u64, per_run: usize) -> std::io::Result<Self> {
        let client = async_nats::connect(url).await.map_err(|e| io(&e))?;
        let mut seen = client
            .subscribe("subagents.events.>")
            .await
            .map_err(|e| io(&e))?;
        let js = async_nats::jetstream::new(client);
        let published = Arc::new(AtomicU64::new(0));
        let runs = Arc::new(AtomicU64::new(0));
        let (count, counted) = (Arc::clone(&published), Arc::clone(&runs));
        let row = row.to_owned();
        let task = tokio::spawn(async move {
            let mut rng = Rng(seed);
            let mut answered = HashSet::new();
            while let Some(message) = seen.next().await {
                let Ok(taken) = serde_json::from_slice::<Envelope>(&message.payload) else {
                    continue;
                };
                let (Body::Taken { worker }, Some(run)) = (&taken.body, taken.run) else {
                    continue;
                };
                if worker == "forger" || !answered.insert(message.payload.to_vec()) {
                    continue;
                }
                counted.fetch_add(1, Ordering::Relaxed);
                let mut kinds: Vec<usize> = (0..KINDS.len()).filter(|kind| *kind != 6).collect();
                for at in (1..kinds.len()).rev() {
                    let other = usize::try_from(rng.next() % (at as u64 + 1)).unwrap_or(0);
                    kinds.swap(at, other);
                }
                kinds.truncate(per_run.saturating_sub(1));
                kinds.push(6);
                for kind in kinds {
                    let headers = message.headers.clone().unwrap_or_default();
                    let (subject, payload, headers) = match kind {
                        0 => (
                            events_subject(run),
                            envelope(1, None, 0, forged_outcome("bare")),
                            HeaderMap::new(),
                        ),
                        1 => (
                            events_subject(run),
                            envelope(
                                taken.attempt,
                                Some(RunId::new()),
                                99,
                                forged_outcome("another run"),
                            ),
                            bogus_seal(),
                        ),
                        2 => (
                            events_subject(run),
                            envelope(taken.attempt, Some(run), 99, forged_outcome("made-up seal")),
                            bogus_seal(),
                        ),
                        3 => (
                            events_subject(run),
                            envelope(
                                taken.attempt,
                                Some(run),
                                99,
                                Body::Refused {
                                    code: subagent_core::ErrorCode::Protocol,
                                    message: FORGED.to_owned(),
                                },
                            ),
                            bogus_seal(),
                        ),
                        4 => (
                            events_subject(run),
                            envelope(
                                taken.attempt,
                                Some(run),
                                99,
                                Body::Event {
                                    event: RunEvent::Text {
                                        text: FORGED.to_owned(),
                                        parent_tool_use_id: None,
                                    },
                                },
                            ),
                            HeaderMap::new(),
                        ),
                        5 => {
                            let attempt = taken.attempt + 5;
                            let taken = envelope(
                                attempt,
                                Some(run),
                                1,
                                Body::Taken {
                                    worker: "forger".to_owned(),
                                },
                            );
                            let _ = js
                                .publish_with_headers(
                                    events_subject(run),
                                    bogus_seal(),
                                    taken.into(),
                                )
                                .await;
                            (
                                events_subject(run),
                                envelope(attempt, Some(run), 2, forged_outcome("newer attempt")),
                                bogus_seal(),
                            )
                        }
                        6 => (events_subject(run), message.payload.to_vec(), headers),
                        _ => {
                            let job = Job::new(
                                run,
                                &row,
                                &StartRequest::new(FORGED, std::env::temp_dir()),
                            );
                            (
                                job_subject(&row, RunId::new()),
                                serde_json::to_vec(&job).unwrap_or_default(),
                                HeaderMap::new(),
                            )
                        }
                    };
                    match js
                        .publish_with_headers(subject, headers, payload.into())
                        .await
                    {
                        Ok(ack) => {
                            if ack.await.is_ok() {
                                count.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        Err(error) => tracing::debug!(%error, "forger: publishing"),
                    }
                }
            }
        });
        Ok(Self {
            task,
            published,
            runs,
        })
    }

    /// Forgeries stored by the server so far.
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Relaxed)
    }

    /// Runs it forged for so far.
    pub fn runs(&self) -> u64 {
        self.runs.load(Ordering::Relaxed)
    }
}
