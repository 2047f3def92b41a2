//! `subagent-a2a`: the A2A (Agent2Agent) 1.0 wire format, as the official SDKs speak it
//! (`shared/reference/a2a.md`): the data model in protobuf JSON ([`types`]: messages, parts,
//! tasks, status and artifact updates, stream events), the method params and results
//! ([`requests`]), the agent card ([`card`]), the JSON-RPC binding with A2A's error codes
//! ([`rpc`]), SSE framing and decoding ([`sse`]), and our extension ([`ext`]) that carries what
//! plain A2A has no place for (request fields, capability tables, run events, outcomes).
//!
//! Writers emit what both SDKs accept (string enums, `ROLE_USER`, no 0.3 `kind`/`final`);
//! readers are lenient (unknown fields ignored, another SDK's printed defaults read as absent,
//! numbers in data parts that arrive as doubles turned back by [`integral_numbers`], 0.3-style
//! cards read through [`card::AgentCard::interfaces`]).
//!
//! It is also the `a2a` provider kind ([`A2aFactory`], [`A2aProvider`], config [`A2aConfig`]):
//! a preset row that delegates to an A2A agent by URL, a `subagent serve` of another machine or
//! any A2A 1.0 agent. The provider reads the agent's card once, when it is built, and freezes
//! its capability table from it: a `subagent serve`'s card carries each skill's table in our
//! extension (the provider declares its skill's, cut to what the wire carries: [`CARRIED`]);
//! any other agent gets [`PLAIN`] (nothing optional). A run sends one streaming message
//! (`SendStreamingMessage`; our request fields in its metadata for a `subagent serve`), passes
//! the remote run's events on (a `subagent serve` sends them whole; another agent's artifact
//! text becomes `Text`, its status messages `Progress`), cancels the remote task on cancel
//! (`CancelTask`), re-subscribes with backoff when the stream is lost (`SubscribeToTask`; a
//! `subagent serve` resumes from the events already read, our `from`, so nothing is lost or
//! doubled; another agent sends a snapshot, and what streamed meanwhile is only in it), and
//! fails the run when the agent sends nothing (not even a keep-alive) for the idle timeout. A
//! `subagent serve`'s refusals come back as the same error with the same stable code;
//! `resume` continues the finished remote task (a message naming it).
//!
//! Deliberately not here: the server (`subagent-server` serves these types), the HTTP+JSON and
//! gRPC bindings, push notifications, agents that do not stream.

pub mod card;
mod client;
mod config;
mod error;
mod events;
pub mod ext;
mod lenient;
mod provider;
pub mod requests;
pub mod rpc;
mod run;
pub mod sse;
pub mod time;
pub mod types;

pub use client::Token;
pub use config::{A2aConfig, Limits, Timeouts};
pub use error::{Error, Result};
/// The a2a provider's reading of a remote task's stream, public only for the fuzz targets
/// (`fuzz/`): not part of the crate's API.
#[doc(hidden)]
pub use events::Assembly;
pub use ext::EXTENSION_URI;
pub use lenient::{integral_numbers, u32_of};
pub use provider::{A2aFactory, A2aProvider, CARRIED, KIND, PLAIN};
/// What building an a2a provider checks of a card, and where a token may follow a request:
/// public only for the fuzz targets (`fuzz/`), not part of the crate's API.
#[doc(hidden)]
pub use {client::same_host, provider::endpoint_of};
