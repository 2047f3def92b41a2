//! The wire format of `codex exec --json` as serde types: one JSON object per stdout line, its
//! [`Event`] tagged by `type` (`thread.started`, `item.completed`…), the `item` of `item.*` events
//! tagged by its own `type` ([`Item`]). Only what [`super::StreamState`] reads is named.
//!
//! Tolerant, because codex adds event and item types and fields between releases: a line or item
//! of a type this crate does not read (or of none) is read as its type's name ([`Parsed::Unknown`],
//! [`Kind::Unknown`]), unknown fields are ignored, and a named field that is missing or of
//! another JSON type reads as its default ([`subagent_core::lenient`]). Parsing fails only for a
//! line that is not a JSON object. Free-form content stays a [`Value`]: tool inputs (a command, a
//! patch's changes, a prompt, MCP arguments, a query) and tool results.
//!
//! One thing serde reads beyond what the CLI prints: a tag that is an integer instead of a string
//! is taken as the index of a variant (`"type": 0` as the first); codex never prints one.

use serde::Deserialize;
use serde_json::Value;
use subagent_core::Usage;
use subagent_core::lenient::{Lenient, field, object, objects, present};

/// What a stdout line is.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// An event this crate reads (boxed: an event is large, the other variants small).
    Event(Box<Event>),
    /// An object of another type: the type's name (empty when it has none).
    Unknown(String),
    /// Not a JSON object.
    Stray,
}

/// Reads one stdout line (already trimmed).
pub(crate) fn parse(line: &str) -> Parsed {
    match serde_json::from_str::<Lenient<Line>>(line) {
        Ok(Lenient::Read(Line {
            event: AnyEvent::Known(event),
        })) => Parsed::Event(event),
        Ok(Lenient::Read(Line {
            event: AnyEvent::Unknown(Unnamed { kind }),
        })) => Parsed::Unknown(kind),
        Ok(Lenient::Other(_)) | Err(_) => Parsed::Stray,
    }
}

/// A JSON object codex printed (flattened, so that only an object is one).
#[derive(Debug, Deserialize)]
struct Line {
    #[serde(flatten)]
    event: AnyEvent,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum AnyEvent {
    Known(Box<Event>),
    Unknown(Unnamed),
}

/// What an object of a type this crate does not read is called.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Unnamed {
    /// Its `type`.
    #[serde(rename = "type", default, deserialize_with = "field")]
    pub kind: String,
}

/// A `codex exec --json` event, by `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum Event {
    /// The session (thread) exists.
    #[serde(rename = "thread.started")]
    ThreadStarted {
        /// Its id (what `codex exec resume` takes).
        #[serde(default, deserialize_with = "field")]
        thread_id: Option<String>,
    },
    /// A turn started.
    #[serde(rename = "turn.started")]
    TurnStarted,
    /// A turn ended well.
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        /// Its tokens.
        #[serde(default, deserialize_with = "object")]
        usage: TokenCounts,
    },
    /// A turn failed.
    #[serde(rename = "turn.failed")]
    TurnFailed {
        /// Why.
        #[serde(default, deserialize_with = "object")]
        error: Failure,
    },
    /// An error, or a "Reconnecting..." notice while codex retries.
    #[serde(rename = "error")]
    Error {
        /// What happened.
        #[serde(default, deserialize_with = "field")]
        message: Option<String>,
    },
    /// An item started.
    #[serde(rename = "item.started")]
    ItemStarted(ItemEvent),
    /// An item changed.
    #[serde(rename = "item.updated")]
    ItemUpdated(ItemEvent),
    /// An item is done.
    #[serde(rename = "item.completed")]
    ItemCompleted(ItemEvent),
}

/// The body of an `item.*` event.
#[derive(Debug, Deserialize)]
pub(crate) struct ItemEvent {
    /// The item: `Some` whenever the field is there (one that is not an object is an unnamed
    /// item), `None` when it is missing.
    #[serde(default, deserialize_with = "present")]
    item: Option<Lenient<Item>>,
}

impl ItemEvent {
    /// The item, if the event has one.
    pub(crate) fn item(self) -> Option<Item> {
        self.item.map(Lenient::or_default)
    }
}

/// A turn's failure.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Failure {
    /// Why.
    #[serde(default, deserialize_with = "field")]
    pub message: Option<String>,
}

/// Something a turn made: a message, a reasoning summary, a tool call…
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Item {
    /// `item_N`, the same in the item's `started` and `completed` events.
    #[serde(default, deserialize_with = "field")]
    pub id: String,
    /// `in_progress`, `completed`, `failed`.
    #[serde(default, deserialize_with = "field")]
    pub status: Option<String>,
    /// What it is.
    #[serde(flatten)]
    pub kind: Kind,
}

/// An item's kind, known or not.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Kind {
    /// One this crate reads (boxed: a kind is large, an unknown one small).
    Known(Box<ItemKind>),
    /// Another one.
    Unknown(Unnamed),
}

impl Default for Kind {
    fn default() -> Self {
        Self::Unknown(Unnamed::default())
    }
}

/// The item kinds this crate reads, by `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ItemKind {
    /// The agent's answer.
    AgentMessage {
        /// Its text.
        #[serde(default, deserialize_with = "field")]
        text: String,
    },
    /// A reasoning summary.
    Reasoning {
        /// Its text.
        #[serde(default, deserialize_with = "field")]
        text: String,
    },
    /// A warning (e.g. "Model metadata for `m` not found").
    Error {
        /// Its text.
        #[serde(default, deserialize_with = "field")]
        message: Option<String>,
    },
    /// A shell command.
    CommandExecution {
        /// The command (`/bin/bash -lc '…'`).
        #[serde(default)]
        command: Value,
        /// Its stdout and stderr.
        #[serde(default, deserialize_with = "field")]
        aggregated_output: String,
        /// Its exit code, once it ended.
        #[serde(default, deserialize_with = "field")]
        exit_code: Option<i64>,
    },
    /// A patch.
    FileChange {
        /// The files it changes (`[{path, kind}]`).
        #[serde(default)]
        changes: Value,
    },
    /// A nested agent call (`spawn_agent`…).
    CollabToolCall {
        /// The tool.
        #[serde(default, deserialize_with = "field")]
        tool: Option<String>,
        /// The nested agent's prompt.
        #[serde(default)]
        prompt: Value,
        /// The nested agents' thread ids.
        #[serde(default)]
        receiver_thread_ids: Value,
    },
    /// An MCP tool call.
    McpToolCall {
        /// The server.
        #[serde(default, deserialize_with = "field")]
        server: Option<String>,
        /// The tool.
        #[serde(default, deserialize_with = "field")]
        tool: Option<String>,
        /// The arguments.
        #[serde(default)]
        arguments: Value,
        /// The answer, and the error: see [`Answer`].
        #[serde(flatten)]
        answer: Answer,
    },
    /// A web search.
    WebSearch {
        /// The query.
        #[serde(default)]
        query: Value,
        /// The answer, and the error: see [`Answer`].
        #[serde(flatten)]
        answer: Answer,
    },
}

/// What an MCP call or a web search answered. Each is `Some` whenever the field is there, even
/// as `null`.
#[derive(Debug, Deserialize)]
pub(crate) struct Answer {
    /// The result.
    #[serde(default, deserialize_with = "present")]
    pub result: Option<Value>,
    /// The error.
    #[serde(default, deserialize_with = "present")]
    pub error: Option<Value>,
}

/// One file of a patch.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Change {
    /// The path.
    #[serde(default, deserialize_with = "field")]
    pub path: Option<String>,
    /// `add`, `delete`, `update`.
    #[serde(default, deserialize_with = "field")]
    pub kind: Option<String>,
}

impl Change {
    /// The files of a patch's `changes` (a list of objects; anything else has none).
    pub(crate) fn all(changes: &Value) -> Vec<Self> {
        objects(changes).unwrap_or_default()
    }
}

/// Codex's `usage` object.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub(crate) struct TokenCounts {
    #[serde(default, deserialize_with = "field")]
    input_tokens: u64,
    #[serde(default, deserialize_with = "field")]
    cached_input_tokens: u64,
    #[serde(default, deserialize_with = "field")]
    cache_write_input_tokens: u64,
    #[serde(default, deserialize_with = "field")]
    output_tokens: u64,
}

impl From<TokenCounts> for Usage {
    fn from(counts: TokenCounts) -> Self {
        Self {
            // Codex's `input_tokens` includes the cached part; ours counts uncached input only.
            input_tokens: counts
                .input_tokens
                .saturating_sub(counts.cached_input_tokens),
            output_tokens: counts.output_tokens,
            cache_read_tokens: counts.cached_input_tokens,
            cache_write_tokens: counts.cache_write_input_tokens,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests;
