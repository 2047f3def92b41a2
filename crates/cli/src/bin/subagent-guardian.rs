//! `subagent-guardian`: the guardian of the child trees `subagent` starts (see
//! `subagent_process::guard`), as a small binary of its own. `subagent` runs every child under it
//! when it is installed in the same directory, and under a re-executed copy of itself otherwise;
//! it does nothing but guard (non-dumpable, like every guardian: its environment is its
//! program's, a key passed to a product CLI included).

use std::process::ExitCode;

fn main() -> ExitCode {
    subagent_process::guard::serve_if_requested().unwrap_or_else(|| {
        eprintln!(
            "subagent-guardian: started by `subagent` to guard one child tree, not by hand \
             (usage: subagent-guardian {} <host pid> <leader|group> <program> [args…])",
            subagent_process::guard::GUARD_ARG
        );
        ExitCode::from(2)
    })
}
