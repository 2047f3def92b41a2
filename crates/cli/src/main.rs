//! `subagent`: the command-line front of `subagents` (the library's [`subagent_cli::main_with`]
//! with no extra provider kinds).

use std::process::ExitCode;

/// mimalloc instead of the system allocator: a run allocates and frees from many tasks on
/// every worker at once (each delegation's child, its events, its messages), where glibc's
/// malloc spent about a third of a 10,000-child fan-out consolidating and unlinking chunks.
/// The benchmarks of the user's path use the same allocator (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // First, before anything else: started as the guardian of a child tree? Then that is the
    // whole job. Otherwise every child this process starts runs under a re-executed copy of
    // this binary, so that nothing outlives `subagent`, even when it is killed with SIGKILL.
    // The guardian is the small `subagent-guardian` installed beside this binary when there is
    // one (it starts ≈ 2 ms sooner than a copy of this one), else this binary itself.
    if let Some(code) = subagent_process::guard::init_with_sibling("subagent-guardian") {
        return code;
    }
    // Then, still before any thread: no secret stays in this process's environment block, which
    // every descendant (a model's command) can read in `/proc/<pid>/environ`. When one is there,
    // this starts the binary again without it (same pid, same argv), its value handed over in a
    // pipe and kept in `subagent_session::env`, and the process is made non-dumpable.
    if let Err(error) = subagent_process::withdraw::withdraw() {
        eprintln!("warning: {error}");
    }
    subagent_cli::main_with(Vec::new())
}
