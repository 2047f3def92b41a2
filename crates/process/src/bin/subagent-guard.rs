//! `subagent-guard`: the guardian of `subagent-process` as a binary of its own, for hosts that
//! cannot serve as their own guardian (see `subagent_process::guard`). Run only by
//! `ProcessSpec::spawn`, as `subagent-guard __subagent_guard <host pid> <leader|group> <program>
//! [args…]`.

use std::process::ExitCode;

fn main() -> ExitCode {
    subagent_process::guard::serve_if_requested().unwrap_or_else(|| {
        eprintln!(
            "subagent-guard is started by subagent-process, not by hand (it takes {} first)",
            subagent_process::guard::GUARD_ARG
        );
        ExitCode::from(2)
    })
}
