//! `subagent-runs`: the record of every run of a user's `subagent` commands — `run`,
//! `delegate`, a served A2A task, an MCP call, an ACP session, a worker's job — and of each of
//! their children, teammates and background tasks, kept in the state dir as it happens, so that
//! any `subagent` process of the user can list them (`subagent ps`), follow one (`logs -f`),
//! stop one (`stop`) and show them live (`subagent ui`).
//!
//! The layout (`<state dir>/subagents/runs/`, every directory 0700, every file 0600):
//! - `live/<id>.json`: a running run's [`Record`], replaced whole (written aside, then renamed)
//!   once it has run half a second, when its counts change (at most once a second), and
//!   removed when it ends (a run that ends sooner never has one);
//! - `done/<journal>.jsonl`: the records of the runs of one journal that ended, a line each;
//! - `events/<journal>.jsonl`: their events, a line each (`{"run":"<id>","event":…}`), bounded
//!   per run;
//! - `stop/<id>`: a request to stop a run, which the process owning it acts on.
//!
//! A journal (`<pid>-<start ticks>-<n>`) belongs to one process: every file but `stop/` has one
//! writer, so two `subagent` processes (or a thousand children) never write one file. A process
//! writes on one thread of its own (`writer`): a run's caller only queues what it takes of the
//! run (a [`subagent_core::RunObserver`]: no task, channel or file per run), and the thread
//! writes each batch as one append per file; a crash loses what was queued and not yet written,
//! and a live record whose owner is gone reads as [`Status::Lost`]. A top-level run's end waits
//! until everything before it is written. `ps` reads `live/` only; finished runs are pruned by
//! age and count ([`Keep`]) a journal at a time, by the next process to start recording and by
//! a long-lived one as its journals fill.
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
