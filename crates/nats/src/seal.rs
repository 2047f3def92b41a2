//! What proves that an envelope on a run's events subject comes from a worker holding the run's
//! job, so that nothing else — a worker of another job, any client with the same credentials —
//! can end, complete or change the run.
//!
//! The submitter makes a random key for each job ([`new_key`], in [`Job::key`]); it travels
//! only in the job. The worker holding the job seals each envelope it publishes ([`Sealer`]):
//! the envelope names its run and its place in its attempt (`seq`), and an HMAC-SHA256 of its
//! exact bytes under the key goes in the [`SEAL_HEADER`] header. The submitter admits an
//! envelope ([`Fence::admit`]) only when its seal is the job's, it names the run, and it comes
//! after the last one admitted of its attempt (a replay of a sealed envelope is not admitted);
//! an older attempt's envelopes are superseded, as before. A worker that finds its job
//! redelivered takes the run's last envelope for a lost holder's stored outcome only when its
//! seal is the job's too.
//!
//! What it does not cover: a client that can read the jobs stream (a consumer of another row, a
//! direct get, a subscription to `subagents.jobs.>`) learns the keys and can forge; so can a
//! worker serving the row, which may take the job itself. NATS permissions can keep a worker to
//! its own consumers' pulls and the events, cancel and wake subjects (`docs/scale.md`).
//!
//! [`Job::key`]: crate::wire::Job::key

use std::sync::atomic::{AtomicU64, Ordering};

use ring::hmac;
use subagent_core::RunId;

pub use crate::wire::new_key;
use crate::wire::{Body, Envelope};

/// The header carrying an envelope's seal: the HMAC-SHA256 of the payload under the job's key,
/// in lowercase hex.
pub const SEAL_HEADER: &str = "Subagent-Seal";

fn hmac_key(key: &str) -> hmac::Key {
    hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes())
}

/// The seal of `payload` under `key`.
pub fn seal(key: &str, payload: &[u8]) -> String {
    let tag = hmac::sign(&hmac_key(key), payload);
    tag.as_ref()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Whether `seal` is `payload`'s under `key` (compared in constant time).
pub fn verify(key: &str, payload: &[u8], seal: &str) -> bool {
    let Some(tag) = unhex(seal) else {
        return false;
    };
    hmac::verify(&hmac_key(key), payload, &tag).is_ok()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) || text.len() > 128 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

/// Seals the envelopes one attempt of a job publishes, numbering them from 1.
#[derive(Debug)]
pub struct Sealer {
    run: RunId,
    attempt: u32,
    key: String,
    seq: AtomicU64,
}

impl Sealer {
    /// For attempt `attempt` of the run `run`, whose job's key is `key`.
    pub fn new(run: RunId, attempt: u32, key: &str) -> Self {
        Self {
            run,
            attempt,
            key: key.to_owned(),
            seq: AtomicU64::new(0),
        }
    }

    /// The next envelope of the attempt: its payload and its seal.
    pub fn seal(&self, body: Body) -> (Vec<u8>, String) {
        let envelope = Envelope {
            attempt: self.attempt,
            run: Some(self.run),
            seq: self.seq.fetch_add(1, Ordering::Relaxed) + 1,
            body,
        };
        // An envelope of our own types always serializes.
        let payload = serde_json::to_vec(&envelope).unwrap_or_default();
        let seal = seal(&self.key, &payload);
        (payload, seal)
    }

    /// Whether `payload`, sealed `seal`, is an outcome of this run sealed with this job's key
    /// (of any attempt): a lost holder's stored outcome, not a forgery.
    pub fn is_sealed_outcome(&self, payload: &[u8], seal: Option<&str>) -> bool {
        seal.is_some_and(|seal| verify(&self.key, payload, seal))
            && serde_json::from_slice::<Envelope>(payload).is_ok_and(|envelope| {
                envelope.run == Some(self.run) && matches!(envelope.body, Body::Outcome { .. })
            })
    }
}

/// What [`Fence::admit`] made of an envelope.
#[derive(Debug, PartialEq)]
pub enum Admission {
    /// The run's own: pass it on. `lost`: the attempt it replaces, when it is the first of a
    /// newer attempt.
    Admitted {
        /// The envelope.
        envelope: Box<Envelope>,
        /// The attempt before it, now superseded.
        lost: Option<u32>,
    },
    /// Sealed, but of an attempt older than the newest: a lost holder's late envelope.
    Superseded,
    /// Not the run's worker's (no seal, another seal, another run, a replay, unreadable): why.
    Refused(String),
}

/// The submitter's side: admits only the envelopes of the worker holding the run's job.
#[derive(Debug)]
pub struct Fence {
    run: RunId,
    key: String,
    attempt: u32,
    seq: u64,
}

impl Fence {
    /// The fence of the run `run`, whose job's key is `key`.
    pub fn new(run: RunId, key: &str) -> Self {
        Self {
            run,
            key: key.to_owned(),
            attempt: 0,
            seq: 0,
        }
    }

    /// The newest attempt admitted (0 before the first).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Reads one message of the run's events subject: `payload`, and its [`SEAL_HEADER`].
    pub fn admit(&mut self, payload: &[u8], seal: Option<&str>) -> Admission {
        let Some(seal) = seal else {
            return Admission::Refused("an envelope without a seal".to_owned());
        };
        if !verify(&self.key, payload, seal) {
            return Admission::Refused("an envelope sealed without the job's key".to_owned());
        }
        let envelope: Envelope = match serde_json::from_slice(payload) {
            Ok(envelope) => envelope,
            Err(error) => {
                return Admission::Refused(format!("an envelope that does not read: {error}"));
            }
        };
        if envelope.run != Some(self.run) {
            return Admission::Refused(format!(
                "an envelope of another run ({})",
                envelope
                    .run
                    .map_or_else(|| "none".to_owned(), |run| run.to_string())
            ));
        }
        if envelope.attempt < self.attempt {
            return Admission::Superseded;
        }
        let mut lost = None;
        if envelope.attempt > self.attempt {
            lost = (self.attempt > 0).then_some(self.attempt);
            self.attempt = envelope.attempt;
            self.seq = 0;
        }
        if envelope.seq <= self.seq {
            return Admission::Refused(format!(
                "envelope {} of attempt {} again (a replay)",
                envelope.seq, envelope.attempt
            ));
        }
        self.seq = envelope.seq;
        Admission::Admitted {
            envelope: Box::new(envelope),
            lost,
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use subagent_core::{Outcome, RunEvent};

    use super::*;

    fn text(text: &str) -> Body {
        Body::Event {
            event: RunEvent::Text {
                text: text.to_owned(),
                parent_tool_use_id: None,
            },
        }
    }

    fn admitted(admission: &Admission) -> bool {
        matches!(admission, Admission::Admitted { .. })
    }

    #[test]
    fn only_the_jobs_sealed_envelopes_are_admitted_once_each_in_order() {
        let run = RunId::new();
        let key = new_key();
        assert_eq!(key.len(), 64);
        let mut fence = Fence::new(run, &key);
        let first = Sealer::new(run, 1, &key);
        let (taken, taken_seal) = first.seal(Body::Taken {
            worker: "w".to_owned(),
        });
        let (said, said_seal) = first.seal(text("hi"));
        assert!(admitted(&fence.admit(&taken, Some(&taken_seal))));
        assert!(admitted(&fence.admit(&said, Some(&said_seal))));
        // A replay of a sealed envelope, an unsealed one, one sealed with another key, one of
        // another run sealed with this key.
        assert!(!admitted(&fence.admit(&said, Some(&said_seal))));
        assert!(!admitted(&fence.admit(&said, None)));
        let (_, other_seal) = Sealer::new(run, 1, &new_key()).seal(text("hi"));
        let (forged, _) = Sealer::new(run, 1, "x").seal(text("hi"));
        assert!(!admitted(&fence.admit(&forged, Some(&other_seal))));
        let (elsewhere, elsewhere_seal) = Sealer::new(RunId::new(), 1, &key).seal(text("x"));
        assert!(!admitted(&fence.admit(&elsewhere, Some(&elsewhere_seal))));
        assert!(!admitted(&fence.admit(&said, Some("zz"))));
        // A newer attempt supersedes the older one; the older one's late envelopes are dropped.
        let second = Sealer::new(run, 2, &key);
        let (again, again_seal) = second.seal(Body::Taken {
            worker: "v".to_owned(),
        });
        match fence.admit(&again, Some(&again_seal)) {
            Admission::Admitted { lost, .. } => assert_eq!(lost, Some(1)),
            other => panic!("{other:?}"),
        }
        let (late, late_seal) = first.seal(Body::Outcome {
            outcome: Outcome::completed("late"),
        });
        assert_eq!(fence.admit(&late, Some(&late_seal)), Admission::Superseded);
        assert_eq!(fence.attempt(), 2);
        // The worker's check of a stored outcome: sealed with the job's key, of this run.
        assert!(first.is_sealed_outcome(&late, Some(&late_seal)));
        assert!(!first.is_sealed_outcome(&late, None));
        assert!(!first.is_sealed_outcome(&said, Some(&said_seal)));
    }
}
