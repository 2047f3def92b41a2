//! `subagent-runs`: the record of every run of a user's `subagent` commands — `run`,
//! `delegate`, a served A2A task, an MCP call, an ACP session, a worker's job — and of each of
//! their children, teammates and background tasks, kept in the state dir as it happens, so that
//! any `subagent` process of the user can list them (`subagent ps`), follow one (`logs -f`),
//! stop one (`stop`) and show them live (`subagent ui`).
//!
//! The layout (`<state dir>/subagents/runs/`, every directory 0700, every file 0600):
//! - `live/<id>.json`: a running run's [`Record`], replaced whole (written aside, then renamed)
//!   when it starts, when its counts change (at most once a second) and when it ends;
//! - `done/<id>.json`: the record of a run that ended (written before the live one is removed);
//! - `events/<id>.jsonl`: its events, one JSON line each, appended as they come (bounded);
//! - `stop/<id>`: a request to stop it, which the process owning it acts on.
//!
//! Each run's files are written by the one process that owns it, so two `subagent` processes
//! (or a hundred children) never write one file; a crash loses at most the event being
//! written, and a live record whose owner is gone reads as [`Status::Lost`]. `ps` reads
//! `live/` only; finished records are pruned by age and count ([`Keep`]).
//!
//! Deliberately not here: rendering (the CLI's `ps`, `logs`, and its page), running anything
//! (the [`Recorder`] relays runs others start).

mod record;
mod recorder;
mod store;

pub use record::{Owner, Record, Status};
pub use recorder::Recorder;
pub use store::{Keep, Lookup, Runs, tree};
