//! `subagent-model`: talking to models.
//!
//! Owns:
//! - the [`Model`] trait: one call streams one assistant answer as [`ModelEvent`]s (text,
//!   thinking, tool call start / argument fragments / end with parsed input, usage, stop) and
//!   honours a `CancellationToken`; [`collect`] / [`complete`] drain a stream into a finished
//!   assistant [`subagent_session::Message`] (a stream that ends without its stop event is a
//!   [`Error::Protocol`], never a partial success);
//! - [`ModelRequest`], whose conversation ([`Messages`]: a persistent, `Arc`-shared list) and
//!   tools (`Arc<[ToolSpec]>`) are shared, so a turn or a fork copies no history;
//! - the clients: Anthropic Messages ([`AnthropicModel`], prompt-cache markers on the stable
//!   prefix), OpenAI Responses ([`ResponsesModel`]), OpenAI Chat Completions ([`ChatModel`]; also
//!   Ollama, vLLM, llama.cpp, LM Studio), each over reqwest with connect / first-byte / idle /
//!   overall timeouts (keep-alives move no timer: every stream ends) and retries (429, 5xx,
//!   connect failures) only before the first streamed byte; numbers and sizes a server sends
//!   (`retry-after`, token counts, error bodies, events) are bounded, never a panic; one answer
//!   is bounded in bytes ([`ModelConfig::max_answer_bytes`], [`limit_answer`]): past it the
//!   stream stops with [`Error::AnswerTooLarge`] (`ANSWER_TOO_LARGE`);
//! - the incremental SSE parser ([`sse`]); one client ([`HttpModel`]) and one SSE decoder
//!   ([`SseDecoder`]) over a [`Protocol`], which says only what differs: path, auth, request
//!   body, what one event means;
//! - [`ModelConfig`] (serde + JSON Schema, embedded in presets) and [`build`];
//! - the reasoning [`Effort`] of a request (each protocol's own setting, sent only by a model
//!   that [supports it](Model::supports_effort)) and model aliases ([`ModelAliases`]: a
//!   preset's table, then Claude Code's `haiku`/`sonnet`/`opus` on an Anthropic model);
//! - scenario files ([`scenario`]) and the offline [`ScriptedModel`] that replays them. The fake
//!   HTTP servers of `subagent-test-support` use the same scenario code.
//!
//! Deliberately not here: the agent loop, tools, turn limits, retries of whole turns, structured
//! output validation (all in `runtime`), and `core`'s error type (this crate depends only on
//! `session`; [`Error::code`] is this layer's [`ErrorCode`], rendered as `core`'s code where one
//! fits).

mod aliases;
mod answer;
pub mod anthropic;
mod body;
pub mod chat;
mod clients;
mod collect;
mod config;
#[cfg(test)]
mod decoder_props;
mod error;
mod http;
mod messages;
mod protocol;
pub mod responses;
pub mod scenario;
mod scripted;
pub mod sse;
mod types;

pub use aliases::{CLAUDE_ALIASES, INHERIT, ModelAliases};
pub use answer::limit_answer;
pub use anthropic::AnthropicModel;
pub use body::{BodyWriter, PIECE, RequestBody};
pub use chat::ChatModel;
pub use clients::{build, build_with_env};
pub use collect::{ModelResponse, ResponseBuilder, collect, complete};
pub use config::{ApiKey, DEFAULT_MAX_ANSWER_BYTES, ModelConfig, ModelKind, RetryConfig, Timeouts};
pub use error::{Error, ErrorCode, MAX_SERVER_MESSAGE, Result, TimeoutKind};
pub use http::{AuthStyle, Decoder, MAX_RETRY_AFTER, parse_retry_after};
pub use messages::{Conversation, MAX_CHAIN, Messages, RevIter};
pub use protocol::{HttpModel, Protocol, SseDecoder};
pub use responses::ResponsesModel;
pub use scenario::{Gate, Gates, Scenarios};
pub use scripted::ScriptedModel;
pub use types::{Effort, Model, ModelEvent, ModelRequest, ModelStream, ToolSpec, Usage};
