//! `subagent-session`: the conversation as plain data and files.
//!
//! Owns:
//! - the reasoning [`Effort`] a model is asked for (shared by the seam and the model clients);
//! - the conversation data model ([`ContentBlock`], [`Message`], [`Role`]) and the session
//!   events a run records ([`SessionEvent`]: `turn_start`, `message`, `turn_end`);
//! - the append-only [`EventLog`] (`seq == index`) whose clones and forks share their history in
//!   O(1): forking a log of 1,000,000 events costs what forking one of 10 costs;
//! - fork seeds: [`EventLog::completed_turn_prefix`] and the repair of dangling tool calls
//!   ([`repair_dangling_tool_calls`]);
//! - transcript files: JSONL, appended and flushed at each turn end, loaded back with torn-line
//!   recovery, one locked writer at a time ([`TranscriptWriter`], [`load_transcript`]);
//! - reading a file someone else named (a preset, a scenario, an agent definition, a schema, a
//!   file a model asked for): bounded by the bytes actually read and refusing anything that is
//!   not a regular file ([`read_user_file`]), the one helper every crate that reads such files
//!   uses;
//! - the environment as every crate reads it ([`env`](mod@env)): the real one plus the secrets a host
//!   moved out of its environment block (`subagent_process::withdraw`), kept in one
//!   process-wide store; and the configured [`Secrets`] (the key variables a configuration
//!   names, their values, their redaction), which a provider's build context carries and a
//!   child's environment withholds (`subagent_process`).
//!
//! Deliberately not here: anything that talks to a model, runs a tool or spawns a process. This
//! crate depends on no other crate of the workspace.

#![deny(missing_docs)]

mod content;
mod effort;
pub mod env;
mod event;
mod log;
pub mod private;
mod repair;
mod secrets;
mod transcript;
mod usage;
mod user_file;

pub use content::{ContentBlock, Message, Role, ToolResultContent};
pub use effort::Effort;
pub use event::{SessionEvent, StopReason};
pub use log::{EventLog, Iter};
pub use repair::{FORKED_TOOL_RESULT, dangling_tool_calls, repair_dangling_tool_calls};
pub use secrets::{MIN_SECRET_VALUE_LEN, Secrets};
#[doc(hidden)]
pub use transcript::parse_transcript;
pub use transcript::{
    LoadedTranscript, MAX_TRANSCRIPT_BYTES, TranscriptWarning, TranscriptWriter, load_transcript,
};
pub use usage::Usage;
pub use user_file::{open_user_file, read_bounded, read_user_file, read_user_text, too_large};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a transcript file failed. Returned by [`TranscriptWriter`] and
    /// [`load_transcript`]; retrying helps only if the cause (disk full, permissions) is fixed.
    #[error("transcript {path}: {source}")]
    Io {
        /// The transcript file.
        path: std::path::PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A complete (newline-terminated) line of a transcript is not a valid event, or its `seq`
    /// does not match its position. Returned by [`load_transcript`]; the file is corrupt beyond a
    /// torn last line, so retrying does not help.
    #[error("transcript {path}:{line}: {message}")]
    Corrupt {
        /// The transcript file.
        path: std::path::PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// Another writer holds the transcript (an advisory lock on the file, in this process or
    /// another one). Returned by [`TranscriptWriter::create_locked`] and
    /// [`TranscriptWriter::open_locked`] before anything is read or changed; retrying after that
    /// writer is done helps.
    #[error("transcript {path} is being written by another writer")]
    Locked {
        /// The transcript file.
        path: std::path::PathBuf,
    },
    /// An event could not be serialized (a `serde_json::Value` with a non-finite number, say).
    /// Returned by [`TranscriptWriter::append`]; retrying does not help.
    #[error("cannot serialize event: {0}")]
    Serialize(#[from] serde_json::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
