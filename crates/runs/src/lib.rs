//! `subagent-runs`: the record of every run of a user's `subagent` commands — `run`,
//! `delegate`, a served A2A task, an MCP call, an ACP session, a worker's job — and of each of
//! their children, teammates and background tasks, kept in the state dir as it happens, so that
//! any `subagent` process of the user can list them (`subagent ps`), follow one (`logs -f`),
//! stop one (`stop`) and show them live (`subagent ui`).
//!
//! The layout (`<state dir>/subagents/runs/`, every directory 0700, every file 0600):
//! - `live/<id>.json`: a running run's [`Record`], replaced whole (written aside, then renamed)
//!   once it has run half a second, when its counts change (at most once a second) and when it
//!   ends (a run that ends sooner has only its finished record);
//! - `done/<id>.json`: the record of a run that ended (written before the live one is removed);
//! - `events/<id>.jsonl`: its events, one JSON line each, appended as they come (bounded);
//! - `stop/<id>`: a request to stop it, which the process owning it acts on.
//!
//! Each run's files are written by the one process that owns it, so two `subagent` processes
//! (or a hundred children) never write one file. A process writes them on one thread of its own
//! (`writer`): a run only queues what is to be written, and the thread writes each batch (every
//! run's new events in one append, its newest record once); a crash loses what was queued and
//! not yet written, and a live record whose owner is gone reads as [`Status::Lost`]. A
//! top-level run's end waits until everything before it is written. `ps` reads
//! `live/` only; finished records are pruned by age and count ([`Keep`]).
//!
//! Deliberately not here: rendering (the CLI's `ps`, `logs`, and its page), running anything
//! (the [`Recorder`] relays runs others start).

mod record;
mod recorder;
mod store;
mod writer;

pub use record::{Owner, Record, Status};
pub use recorder::Recorder;
pub use store::{Keep, Lookup, Runs, tree};
