//! One module per concern.

mod builtins;
mod capability;
mod catalog;
mod inline;
mod memory;
mod parse;
mod reload;
mod resolve;
mod skills;
mod support;
