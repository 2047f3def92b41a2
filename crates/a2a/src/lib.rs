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
//! Deliberately not here: no HTTP client or server and no async runtime: `subagent-server`
//! serves these types; the `a2a` provider kind (issue 14, part 2) will send them.

pub mod card;
pub mod ext;
mod lenient;
pub mod requests;
pub mod rpc;
pub mod sse;
pub mod time;
pub mod types;

pub use ext::EXTENSION_URI;
pub use lenient::{integral_numbers, u32_of};
