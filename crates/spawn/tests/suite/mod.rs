mod conformance;
mod delegation;
mod depth;
mod fanout;
mod nesting;
mod structured;
mod support;
mod tasks;
