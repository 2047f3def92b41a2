mod free;
mod probe;
mod verdicts;
