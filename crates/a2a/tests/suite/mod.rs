//! The wire types against the literal JSON the official SDKs put on the wire
//! (`shared/reference/a2a.md`).

mod card;
mod hostile;
mod rpc;
mod sse;
mod wire;
