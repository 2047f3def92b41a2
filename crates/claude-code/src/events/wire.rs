//! The wire format of `claude -p --output-format stream-json --verbose` as serde types: one
//! [`Line`] per stdout line, its [`Event`] tagged by `type`, `system` events by `subtype`, content
//! blocks by their `type`. Only what [`super::StreamState`] reads is named.
//!
//! Tolerant, because claude adds event types, subtypes and fields between releases: an unknown
//! `type` is [`Event::Unknown`] (a line without one too), an unknown `subtype` or block type is
//! `Other`, unknown fields are ignored, and a named field that is missing or of another JSON type
//! reads as its default ([`subagent_core::lenient`]). Parsing a line fails only when it is not
//! JSON. Free-form content stays a [`Value`]: tool inputs, structured output.
//!
//! One thing serde reads beyond what the CLI prints: a tag that is an integer instead of a string
//! is taken as the index of a variant (`"type": 0` as the first); claude never prints one.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use subagent_core::Usage;
use subagent_core::lenient::{Lenient, Object, field, object, objects, present};

/// What a stdout line is.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// A JSON object: an event, known or not.
    Line(Box<Line>),
    /// JSON, but not an object: nothing to read.
    NotAnObject,
    /// Not JSON at all.
    NotJson,
}

/// Reads one stdout line (already trimmed).
pub(crate) fn parse(line: &str) -> Parsed {
    match serde_json::from_str::<Lenient<Line>>(line) {
        Ok(Lenient::Read(line)) => Parsed::Line(Box::new(line)),
        Ok(Lenient::Other(_)) => Parsed::NotAnObject,
        Err(_) => Parsed::NotJson,
    }
}

/// One JSON object claude printed.
#[derive(Debug, Deserialize)]
pub(crate) struct Line {
    /// Every event of a session carries its id.
    #[serde(default, deserialize_with = "field")]
    pub session_id: Option<String>,
    /// What the line says.
    #[serde(flatten, deserialize_with = "field")]
    pub event: Event,
}

/// A stream-json event, by `type`.
#[derive(Debug, Default, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Event {
    /// Session start, retries, nested-agent tasks…, by `subtype`.
    System(#[serde(deserialize_with = "object")] System),
    /// One content block of the model's answer (claude sends one event per block).
    Assistant(Message),
    /// Tool results (and the prompt, with some flags).
    User(Message),
    /// The end of the run.
    Result(Finished),
    /// A type this crate does not read (`stream_event`, `control_request`…), or no type.
    #[default]
    #[serde(other)]
    Unknown,
}

/// A `system` event, by `subtype`.
#[derive(Debug, Default, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub(crate) enum System {
    /// The session started.
    Init {
        /// The model claude uses (`claude-opus-4-8[1m]`).
        #[serde(default, deserialize_with = "field")]
        model: Option<String>,
    },
    /// claude retries the model request.
    ApiRetry {
        /// This attempt's number.
        #[serde(default, deserialize_with = "field")]
        attempt: u64,
        /// How many retries claude makes at most.
        #[serde(default, deserialize_with = "field")]
        max_retries: u64,
        /// Why (`authentication_failed`…).
        #[serde(default, deserialize_with = "field")]
        error: String,
    },
    /// A nested agent (or a background task) started.
    TaskStarted {
        /// The id of the tool call that started it.
        #[serde(default, deserialize_with = "field")]
        tool_use_id: String,
        /// Its description.
        #[serde(default, deserialize_with = "field")]
        description: String,
        /// Its agent type (`general-purpose`), for a nested agent.
        #[serde(default, deserialize_with = "field")]
        subagent_type: String,
        /// The task's id.
        #[serde(default, deserialize_with = "field")]
        task_id: String,
        /// `local_agent` (a nested agent), `local_bash` (a command in the background), …
        #[serde(default, deserialize_with = "field")]
        task_type: String,
    },
    /// A nested agent (or task) ended.
    TaskNotification {
        /// The task's id (as its `task_started` said it).
        #[serde(default, deserialize_with = "field")]
        task_id: String,
        /// `completed`, `failed`, `stopped`…
        #[serde(default, deserialize_with = "field")]
        status: String,
        /// What it did.
        #[serde(default, deserialize_with = "field")]
        summary: String,
    },
    /// A subtype this crate does not read (`status`, `task_progress`, `thinking_tokens`…).
    #[default]
    #[serde(other)]
    Other,
}

/// An `assistant` or `user` event.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Message {
    /// The API message.
    #[serde(default, deserialize_with = "object")]
    pub message: Body,
    /// Set when a nested agent said it: the id of the call that started the agent.
    #[serde(default, deserialize_with = "field")]
    pub parent_tool_use_id: Option<String>,
    /// There (whatever its value) on the synthetic message claude makes of a model error.
    #[serde(default, deserialize_with = "present")]
    pub error: Option<IgnoredAny>,
}

/// An API message; only its content blocks are read (a string content has none).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Body {
    /// The blocks.
    #[serde(default, deserialize_with = "objects")]
    pub content: Vec<Block>,
}

/// A content block of an API message, by `type`.
#[derive(Debug, Default, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Block {
    /// Text.
    Text {
        /// The text.
        #[serde(default, deserialize_with = "field")]
        text: String,
    },
    /// Reasoning.
    Thinking {
        /// The text.
        #[serde(default, deserialize_with = "field")]
        thinking: String,
    },
    /// A tool call.
    ToolUse {
        /// The call's id.
        #[serde(default, deserialize_with = "field")]
        id: String,
        /// The tool.
        #[serde(default, deserialize_with = "field")]
        name: String,
        /// The arguments, as the model gave them.
        #[serde(default)]
        input: Value,
    },
    /// A tool's answer.
    ToolResult {
        /// The call's id.
        #[serde(default, deserialize_with = "field")]
        tool_use_id: String,
        /// What the tool said.
        #[serde(default)]
        content: Content,
        /// Whether it is an error.
        #[serde(default, deserialize_with = "field")]
        is_error: bool,
    },
    /// A type this crate does not read (`image`, `redacted_thinking`…), or no type.
    #[default]
    #[serde(other)]
    Other,
}

/// A tool result's content or a result's error: a string, text blocks, or anything else.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Content {
    /// Plain text.
    Text(String),
    /// Content blocks (an element that is not an object is passed over).
    Blocks(Vec<Lenient<Object<ContentBlock>>>),
    /// Any other JSON value (`null` when missing).
    Other(Value),
}

impl Default for Content {
    fn default() -> Self {
        Self::Other(Value::Null)
    }
}

impl Content {
    /// The text: blocks other than text as `[type]` on their own line, `null` as nothing, other
    /// values as JSON.
    pub(crate) fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Blocks(blocks) => blocks
                .iter()
                .filter_map(|block| match block {
                    Lenient::Read(Object(block)) => block.text(),
                    Lenient::Other(_) => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Self::Other(Value::Null) => String::new(),
            Self::Other(other) => other.to_string(),
        }
    }
}

/// A block inside a tool result. Not a tagged enum: blocks other than text are shown by their
/// type's name, so the name is kept whatever it is.
#[derive(Debug, Deserialize)]
pub(crate) struct ContentBlock {
    /// `text`, `image`…
    #[serde(rename = "type", default, deserialize_with = "field")]
    kind: Option<String>,
    /// The text of a `text` block.
    #[serde(default, deserialize_with = "field")]
    text: Option<String>,
}

impl ContentBlock {
    fn text(&self) -> Option<String> {
        match self.kind.as_deref()? {
            "text" => self.text.clone(),
            other => Some(format!("[{other}]")),
        }
    }
}

/// The `result` event.
#[derive(Debug, Deserialize)]
pub(crate) struct Finished {
    /// `success`, `error_max_turns`, `error_during_execution`…
    #[serde(default, deserialize_with = "field")]
    pub subtype: String,
    /// Whether claude counts the run as failed.
    #[serde(default, deserialize_with = "field")]
    pub is_error: bool,
    /// The final text.
    #[serde(default, deserialize_with = "field")]
    pub result: Option<String>,
    /// The validated `StructuredOutput` input (`null` when there is none).
    #[serde(default)]
    pub structured_output: Option<Value>,
    /// The API's stop reason of the last answer.
    #[serde(default, deserialize_with = "field")]
    pub stop_reason: Option<String>,
    /// Why the loop ended.
    #[serde(default, deserialize_with = "field")]
    pub terminal_reason: Option<String>,
    /// Error texts.
    #[serde(default, deserialize_with = "field")]
    pub errors: Vec<Content>,
    /// The HTTP status of a model error.
    #[serde(default, deserialize_with = "field")]
    pub api_error_status: Option<u64>,
    /// Tokens.
    #[serde(default, deserialize_with = "object")]
    pub usage: TokenCounts,
    /// Tool calls the permission policy refused.
    #[serde(default, deserialize_with = "objects")]
    pub permission_denials: Vec<Denial>,
}

/// One refused tool call.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Denial {
    /// The tool.
    #[serde(default, deserialize_with = "field")]
    pub tool_name: Option<String>,
}

/// Claude's `usage` object.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub(crate) struct TokenCounts {
    #[serde(default, deserialize_with = "field")]
    input_tokens: u64,
    #[serde(default, deserialize_with = "field")]
    output_tokens: u64,
    #[serde(default, deserialize_with = "field")]
    cache_read_input_tokens: u64,
    #[serde(default, deserialize_with = "field")]
    cache_creation_input_tokens: u64,
}

impl From<TokenCounts> for Usage {
    /// Ours (`tool_uses` and the duration are filled elsewhere).
    fn from(counts: TokenCounts) -> Self {
        Self {
            input_tokens: counts.input_tokens,
            output_tokens: counts.output_tokens,
            cache_read_tokens: counts.cache_read_input_tokens,
            cache_write_tokens: counts.cache_creation_input_tokens,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests;
