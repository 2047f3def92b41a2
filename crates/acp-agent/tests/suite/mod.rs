//! The server driven over a pipe by the official SDK's client, its parent on a fake model
//! server.

mod errors;
mod permissions;
mod prompts;
mod support;
