//! One module per concern.

mod builtins;
mod capability;
mod catalog;
mod parse;
mod reload;
mod resolve;
mod support;
