//! `subagent`: the command-line front of `subagents` (the library's [`subagent_cli::main_with`]
//! with no extra provider kinds).

use std::process::ExitCode;

fn main() -> ExitCode {
    // First, before anything else: started as the guardian of a child tree? Then that is the
    // whole job. Otherwise every child this process starts runs under a re-executed copy of
    // this binary, so that nothing outlives `subagent`, even when it is killed with SIGKILL.
    if let Some(code) = subagent_process::guard::init() {
        return code;
    }
    subagent_cli::main_with(Vec::new())
}
