//! `subagent-process`: the one owner of child processes.
//!
//! Owns starting a product's CLI and making sure it goes away: [`ProcessSpec`] says what to run
//! (program and argv, never a shell; an explicit absolute working directory, never the process
//! cwd by accident; stdin `/dev/null` unless a pipe is asked for), with an environment scrubbed
//! of other products' keys and tokens ([`is_scrubbed`]: the names in [`SCRUBBED_NAMES`], the
//! prefixes in [`SCRUBBED_PREFIXES`], the suffixes in [`SCRUBBED_SUFFIXES`]) unless passed
//! explicitly, plus the configured variables (or, with [`Scrub::ModelKeys`], of the model
//! products' keys only: for commands run in the user's own project on the user's behalf).
//! Whatever the policy, [`ProcessSpec::withhold`] also withholds the configured [`Secrets`] (the
//! variables a configuration names as holding keys, and any variable holding one of their
//! values), and [`Secrets::redact`] takes those values out of a child's output.
//! [`ProcessSpec::spawn`] puts the child in its own
//! process group and arms the Linux parent-death signal. [`Process`] reads stdout as bounded
//! lines (a line over the bound is [`Error::LineTooLong`], never an out-of-memory), keeps the
//! tail of stderr for diagnostics, and enforces the cancellation token, the overall and the
//! idle-output timeouts: the polite signal of the [`StopPolicy`] (SIGINT for Claude Code, SIGTERM
//! for codex), a grace period, then SIGKILL to the whole tree (the process group and every
//! descendant found under the child in `/proc`, also those that left the group). A child whose
//! output is a blob rather than lines (a shell command) is read with
//! [`Process::wait_with_output`]: the first bytes of stdout and stderr up to
//! [`ProcessSpec::capture_output`], byte-exact, with the same timeouts and stop. A dropped
//! [`Process`] kills its tree at once; the child is always reaped.
//!
//! Deliberately not here: what the output means (each provider parses its CLI's stream), the
//! seam's error codes (providers map [`Error`] to `SPAWN_FAILED` and friends), and anything
//! product-specific beyond the stop signal, which is configuration.
//!
//! Nothing outlives the host, even a host killed with SIGKILL, when the child runs under a
//! [`guard`]ian: a re-executed copy of the host's binary (after [`guard::init`]) or this crate's
//! `subagent-guard` ([`ProcessSpec::guard`]) that sits between the host and the program as a
//! child subreaper, adopts every orphan of the program's tree (`setsid` escapees included), and
//! kills all of it when the program exits or the host dies.
//!
//! A host's own environment block is no place for secrets either, since a child can read it
//! (`/proc/<host pid>/environ`): [`withdraw`] starts the host again without them, keeps their
//! values in `subagent_session::env` (the base of every child's environment) and makes the host
//! non-dumpable; a guardian makes itself non-dumpable too.
//!
//! Limits: the parent-death signal reaches the direct child only (the kernel clears it on fork),
//! and it fires when the *thread* that spawned the child exits, so spawn from an async runtime's
//! worker thread. A descendant that left the process group is only found while its ancestors
//! are alive, which is why the kill walks the tree before anything dies.
//!
//! ```no_run
//! # async fn demo() -> subagent_process::Result<()> {
//! use std::time::Duration;
//! use subagent_process::{ProcessSpec, Signal, SignalTarget, StopPolicy};
//!
//! let mut child = ProcessSpec::new("claude", "/path/to/project")
//!     .args(["-p", "say hi", "--output-format", "stream-json", "--verbose"])
//!     .env("ANTHROPIC_API_KEY", "dummy")
//!     .stop_policy(StopPolicy::new(Signal::Interrupt).target(SignalTarget::Leader))
//!     .idle_timeout(Some(Duration::from_secs(600)))
//!     .spawn()?;
//! while let Some(line) = child.next_line().await? {
//!     println!("{line}");
//! }
//! let exit = child.wait().await?;
//! println!("{:?} {:?} {}", exit.code(), exit.stopped, exit.stderr_tail);
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

pub mod admission;
mod child;
mod env;
mod error;
pub mod guard;
mod kill;
mod lines;
mod settle;
mod spawn;
mod spec;
mod vfork;
pub mod withdraw;

pub use child::{Captured, Exit, Process, StopCause};
pub use env::{
    MIN_SECRET_VALUE_LEN, MODEL_KEY_NAMES, MODEL_KEY_PREFIXES, SCRUBBED_NAMES, SCRUBBED_PREFIXES,
    SCRUBBED_SUFFIXES, Scrub, Secrets, child_env, child_env_with, child_env_withholding,
    is_credential_name, is_model_key, is_scrubbed,
};
pub use error::{Blame, Error, Result};
pub use kill::Signal;
pub use spec::{
    DEFAULT_GRACE, DEFAULT_MAX_LINE_BYTES, DEFAULT_STDERR_TAIL_BYTES, ProcessSpec, SignalTarget,
    StdinMode, StopPolicy,
};
pub use tokio_util::sync::CancellationToken;
