mod conformance;
mod delegation;
mod depth;
mod fanout;
mod structured;
mod support;
