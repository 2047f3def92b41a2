mod free;
mod probe;
mod support;
mod verdicts;
