mod probe;
mod verdicts;
