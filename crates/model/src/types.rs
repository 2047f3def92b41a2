//! The request, the streamed events and the `Model` trait.

use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;
pub use subagent_session::Effort;
use subagent_session::StopReason;
use tokio_util::sync::CancellationToken;

use crate::error::Result;
use crate::messages::Messages;

/// A tool the model may call. The order of a request's tools is kept as given, and
/// serialization is byte-stable: the same request always yields the same bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What the model reads about it.
    pub description: String,
    /// The JSON Schema of its input (an object schema).
    pub input_schema: Value,
}

/// One call of a model.
///
/// The conversation, the tools and the system prompt are shared, not owned: building a request
/// for turn *n* (or for a fork's first turn) copies no message and no schema, and cloning a
/// request is O(1) whatever the history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The model id sent to the server.
    pub model: String,
    /// The system prompt.
    pub system: Option<Arc<str>>,
    /// The conversation so far (ends with a user message), shared.
    pub messages: Messages,
    /// The tools, in the order the model sees them, shared.
    pub tools: Arc<[ToolSpec]>,
    /// The output token limit.
    pub max_tokens: u32,
    /// An object JSON Schema the final answer must follow. Sent natively by the OpenAI clients
    /// (`text.format` / `response_format`); the Anthropic client does not send it (see
    /// [`Model::supports_output_schema`]), the runtime then uses a capture tool or validation.
    pub output_schema: Option<Value>,
    /// How hard the model should reason: an Anthropic `thinking` budget (on top of
    /// `max_tokens`), OpenAI's `reasoning.effort` or `reasoning_effort`. Sent only by a model
    /// that [supports it](Model::supports_effort); `None`: the server's default.
    pub effort: Option<Effort>,
}

impl ModelRequest {
    /// A request with no system prompt, tools or output schema.
    pub fn new(model: impl Into<String>, messages: impl Into<Messages>) -> Self {
        Self {
            model: model.into(),
            system: None,
            messages: messages.into(),
            tools: Arc::from([]),
            max_tokens: 4096,
            output_schema: None,
            effort: None,
        }
    }
}

/// Token counts of one call: the one `Usage` type, shared with the seam (a call leaves
/// `tool_uses` and `duration_ms` at 0).
pub use subagent_session::Usage;

/// One event of a streamed answer. A well-formed stream ends with exactly one
/// [`ModelEvent::Stop`]; tool call events of one call share its `index`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ModelEvent {
    /// A piece of the answer's text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of visible reasoning.
    ThinkingDelta {
        /// The text.
        text: String,
    },
    /// The signature of the current thinking block (Anthropic), to be sent back unchanged.
    ThinkingSignature {
        /// The signature.
        signature: String,
    },
    /// A tool call begins.
    ToolCallStart {
        /// Position of the call in this answer (0-based, unique per answer).
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A fragment of a tool call's JSON arguments.
    ToolCallDelta {
        /// The call's index.
        index: usize,
        /// The fragment (not valid JSON on its own).
        fragment: String,
    },
    /// A tool call is complete; `input` is the parsed arguments.
    ToolCallEnd {
        /// The call's index.
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The parsed arguments (`{}` when the model sent none).
        input: Value,
    },
    /// Token counts (sent once, before `Stop`, when the server reports them).
    Usage {
        /// The counts.
        usage: Usage,
    },
    /// The answer is complete.
    Stop {
        /// Why it ended: `Completed` (including "stopped to call tools"), `MaxTokens`, or
        /// `Refused`.
        reason: StopReason,
    },
}

/// The stream of a model call.
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent>> + Send>>;

/// A model: one call streams one assistant answer.
#[async_trait]
pub trait Model: Send + Sync {
    /// A short description for logs and diagnostics, e.g. `anthropic:claude-sonnet-5`. Never
    /// contains secrets.
    fn describe(&self) -> String;

    /// Whether `ModelRequest::output_schema` is sent to the server natively.
    fn supports_output_schema(&self) -> bool {
        false
    }

    /// Whether [`ModelRequest::effort`] is sent to the server (a model that cannot honour it
    /// drops it, and a provider on it does not offer `effort`).
    fn supports_effort(&self) -> bool {
        false
    }

    /// Starts one call. Errors before the answer starts (auth, rate limits after retries,
    /// first-byte timeout) are returned here; errors during the answer arrive in the stream,
    /// which then ends. Cancelling `cancel` ends the stream with [`crate::Error::Cancelled`] and
    /// closes the connection.
    async fn stream(&self, request: ModelRequest, cancel: CancellationToken)
    -> Result<ModelStream>;
}
