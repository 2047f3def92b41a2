//! The guardian: a tiny owner that sits between the host and every child tree, so that nothing
//! outlives the host even when the host dies by SIGKILL.
//!
//! A host cannot clean up after a SIGKILL, and the kernel's parent-death signal reaches only a
//! direct child (a CLI's tools, a shell's background jobs and anything that called `setsid` are
//! re-parented to init and live on). So [`crate::ProcessSpec::spawn`] can start the program
//! through a guardian, a re-executed copy of the host's own binary (or the `subagent-guard`
//! binary of this crate), as `GUARD __subagent_guard <host pid> <leader|group> <program> <args…>`:
//!
//! - it makes itself non-dumpable, so that no other process of the user reads its environment
//!   (its program's, keys a product CLI is passed included) or its memory;
//! - it makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`), so every orphan of its tree,
//!   `setsid` escapees included, is re-parented to it instead of to init;
//! - it asks for SIGUSR1 when its parent dies (`PR_SET_PDEATHSIG`) and double-checks with
//!   `getppid` (the signal also fires when the host *thread* that spawned it exits; it then
//!   falls back to watching its parent once a second);
//! - it runs the program as its own child, in its own process group (the guardian's), with the
//!   stdin, stdout, stderr, environment and working directory it was given;
//! - it forwards the polite stop signals it receives (SIGINT, SIGTERM, SIGHUP, SIGQUIT) to the
//!   program (`leader`) or to every other member of its process group (`group`: one signal to
//!   the group, whose echo back to the guardian is then ignored);
//! - when the program exits, or the host dies, it freezes (SIGSTOP) and kills (SIGKILL) every
//!   descendant it still has, reaps them, and exits as the program did (the same exit code, or
//!   the same terminating signal).
//!
//! Limits: a guardian that is itself SIGKILLed alone (never by us: our kills take the whole tree)
//! leaves the program to the host's own parent-death signal handling, as without a guardian. A
//! process that escapes through a double fork *and* a PID namespace, or that is ptraced away, is
//! out of reach; a cgroup would catch those and is not required.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustix::process::{Pid, Signal as RawSignal, WaitId, WaitIdOptions, WaitOptions};
use signal_hook::consts::signal::{SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1};
use signal_hook::iterator::Signals;

use crate::kill;

/// The first argument that makes a binary act as a guardian ([`serve_if_requested`]).
pub const GUARD_ARG: &str = "__subagent_guard";

/// The exit code of a guardian that could not start its program (as a shell reports it).
const CANNOT_RUN: u8 = 127;
/// The exit code of a guardian started with arguments it does not understand.
const BAD_USAGE: u8 = 125;

/// Who receives a polite signal the guardian forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Forward {
    /// The program only (it stops its own children).
    Leader,
    /// Every member of the guardian's process group but the guardian.
    Group,
}

impl Forward {
    pub(crate) fn as_arg(self) -> &'static str {
        match self {
            Self::Leader => "leader",
            Self::Group => "group",
        }
    }
}

/// The host's guardian binary, set by [`init`].
static HOST_GUARDIAN: OnceLock<PathBuf> = OnceLock::new();

/// Run this first in the `main` of a host binary (the `subagent` CLI does): when the process was
/// started as a guardian it does the guardian's whole job and returns the exit code to leave
/// with; otherwise it makes this binary the guardian of every child the process spawns through
/// [`crate::ProcessSpec`] (unless a spec says otherwise) and returns `None`.
///
/// This is the one process-wide setting of the crate, and a fact about the executable rather
/// than configuration: only a binary that calls this function can act as a guardian, and it is
/// re-executed through `/proc/self/exe`, so a binary replaced on disk mid-run still works.
pub fn init() -> Option<ExitCode> {
    if let Some(code) = serve_if_requested() {
        return Some(code);
    }
    let _ = HOST_GUARDIAN.set(PathBuf::from("/proc/self/exe"));
    None
}

/// [`init`], but the guardian is the binary `name` in this executable's directory when one is
/// installed there: a binary whose `main` only calls [`serve_if_requested`] (the CLI's
/// `subagent-guardian`) starts in a fraction of the time a large host takes to be re-executed
/// (its relocations and page faults: 0.8 MB against 47 MB, ≈ 2 ms less on every child). The
/// two must come from the same build (one package installs both); without the sibling this is
/// [`init`].
pub fn init_with_sibling(name: &str) -> Option<ExitCode> {
    if let Some(code) = serve_if_requested() {
        return Some(code);
    }
    let sibling = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
        .filter(|path| crate::spec::is_executable(path));
    let _ = HOST_GUARDIAN.set(sibling.unwrap_or_else(|| PathBuf::from("/proc/self/exe")));
    None
}

/// Makes `guardian` (a binary whose `main` starts with [`serve_if_requested`]) the guardian of
/// every child this process spawns through [`crate::ProcessSpec`] (unless a spec says
/// otherwise): for a library host that ships such a binary instead of serving as one. The first
/// call of this, [`init`] or [`init_with_sibling`] wins.
pub fn use_guardian(guardian: PathBuf) {
    let _ = HOST_GUARDIAN.set(guardian);
}

/// The guardian set by [`init`], if any.
pub(crate) fn host_guardian() -> Option<PathBuf> {
    HOST_GUARDIAN.get().cloned()
}

/// Run this first in the `main` of a binary that may serve as a guardian (the `subagent` CLI
/// does): when the process was started as a guardian (its first argument is [`GUARD_ARG`]) it
/// does the guardian's whole job and returns the exit code to leave with; otherwise it returns
/// `None` at once and the binary goes on as usual.
pub fn serve_if_requested() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(GUARD_ARG.as_ref()) {
        return None;
    }
    Some(serve(args.collect()))
}

/// The guardian's job, from the arguments after [`GUARD_ARG`].
fn serve(args: Vec<OsString>) -> ExitCode {
    // Its environment is its program's, keys passed to a product CLI included: no other process
    // of the user reads it, nor the guardian's memory. Its program is dumpable again.
    if let Err(error) = crate::withdraw::not_dumpable() {
        eprintln!("subagent guard: cannot make the guardian non-dumpable: {error}");
        return ExitCode::from(CANNOT_RUN);
    }
    let Some(invocation) = Invocation::parse(args) else {
        eprintln!(
            "subagent guard: usage: {GUARD_ARG} <parent pid> <leader|group> <program> [args…]"
        );
        return ExitCode::from(BAD_USAGE);
    };
    match invocation.run() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("subagent guard: {error}");
            ExitCode::from(CANNOT_RUN)
        }
    }
}

struct Invocation {
    parent: Pid,
    forward: Forward,
    program: OsString,
    args: Vec<OsString>,
}

impl Invocation {
    fn parse(args: Vec<OsString>) -> Option<Self> {
        let mut args = args.into_iter();
        let parent = args
            .next()?
            .to_str()
            .and_then(|raw| raw.parse::<i32>().ok())
            .filter(|raw| *raw > 0)
            .and_then(Pid::from_raw)?;
        let forward = match args.next()?.to_str()? {
            "leader" => Forward::Leader,
            "group" => Forward::Group,
            _ => return None,
        };
        let program = args.next()?;
        Some(Self {
            parent,
            forward,
            program,
            args: args.collect(),
        })
    }

    fn run(self) -> std::io::Result<ExitCode> {
        // Handlers first: from here on no signal of the set can kill us before we clean up.
        let mut signals = Signals::new([SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1])?;
        rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
        rustix::process::set_parent_process_death_signal(Some(RawSignal::USR1))?;
        if rustix::process::getppid() != Some(self.parent) {
            return Err(std::io::Error::other(
                "the host exited before the program started",
            ));
        }
        // The program inherits our stdio, environment, cwd and process group; our signal
        // handlers are reset in it before the exec, and SIGPIPE too, so it sees the signals as
        // usual. Should we be killed alone, the program goes with us (parent-death SIGKILL). It
        // is started the host's way (`crate::vfork`), not by a fork of this process; every
        // child, the program and adopted orphans alike, is reaped below with waitpid(-1).
        let program = crate::vfork::spawn_inheriting(&self.program, &self.args, RawSignal::KILL)
            .map_err(|error| {
                std::io::Error::new(
                    error.kind(),
                    format!("cannot run {}: {error}", self.program.to_string_lossy()),
                )
            })?;
        let watching = AtomicBool::new(false);
        // The signals this guardian sent its own group, still to come back to it.
        let mut echoes = Echoes::default();
        let status = 'wait: {
            for signal in signals.forever() {
                match signal {
                    SIGCHLD => {
                        if let Some(status) = reap(program) {
                            break 'wait status;
                        }
                    }
                    SIGUSR1 if self.host_alive() => {
                        // The host thread that spawned us exited, not the host: from now on the
                        // kernel will not tell us, so look once a second.
                        if !watching.swap(true, Ordering::Relaxed) {
                            let parent = self.parent;
                            std::thread::spawn(move || watch_parent(parent));
                        }
                    }
                    _ if !self.host_alive() => {
                        // The host is gone (killed, perhaps by SIGKILL): nobody else will clean up.
                        kill_descendants();
                    }
                    polite if echoes.arrived(polite) => {}
                    polite => {
                        if self.forward(program, polite) {
                            echoes.expect(polite);
                        }
                    }
                }
            }
            // The iterator ends only when the handle is closed, which nothing does.
            Status::Code(CANNOT_RUN)
        };
        // The program ended: whatever it left behind dies with it, and is reaped. As a child
        // subreaper the guardian is an ancestor of everything its program started, so with no
        // child left (the common end) there is nothing to look for, and no `/proc` snapshot of
        // the whole machine is read (≈ 0.7 ms at 70 processes, on every child's way out).
        if has_children() {
            kill_descendants();
        }
        reap_all();
        Ok(status.exit())
    }

    fn host_alive(&self) -> bool {
        rustix::process::getppid() == Some(self.parent)
    }

    /// Forwards a polite signal; says whether it went to the guardian's own group, and so to
    /// the guardian too (the echo to ignore).
    fn forward(&self, program: Pid, raw: i32) -> bool {
        let Some(signal) = RawSignal::from_named_raw(raw) else {
            return false;
        };
        match self.forward {
            Forward::Leader => {
                kill::signal_process(program, signal);
                false
            }
            Forward::Group => {
                let me = rustix::process::getpid();
                if rustix::process::getpgrp() == me {
                    // One `kill` for the group, instead of finding its members in a `/proc`
                    // snapshot of the whole machine (≈ 0.7 ms at 70 processes, on every stop).
                    rustix::process::kill_process_group(me, signal).is_ok()
                } else {
                    // Not the leader of a group of our own (not how a host starts us): only
                    // the members of the group we would lead, as the snapshot shows them.
                    for member in kill::group_members(me) {
                        if member != me {
                            kill::signal_process(member, signal);
                        }
                    }
                    false
                }
            }
        }
    }
}

/// The polite signals the guardian sent to its own group and has yet to receive itself. A
/// signal that arrives while its echo is due is taken for the echo: the group had it already.
#[derive(Debug, Default)]
struct Echoes(u64);

impl Echoes {
    fn bit(signal: i32) -> u64 {
        u32::try_from(signal)
            .ok()
            .and_then(|signal| 1_u64.checked_shl(signal))
            .unwrap_or(0)
    }

    fn expect(&mut self, signal: i32) {
        self.0 |= Self::bit(signal);
    }

    /// Whether `signal` is the echo of one this guardian sent (which is then no longer due).
    fn arrived(&mut self, signal: i32) -> bool {
        let bit = Self::bit(signal);
        let due = self.0 & bit != 0;
        self.0 &= !bit;
        due
    }
}

/// How the program ended.
#[derive(Clone, Copy, Debug)]
enum Status {
    Code(u8),
    Signal(i32),
}

impl Status {
    /// Leaves as the program did: its exit code, or death by the same signal.
    fn exit(self) -> ExitCode {
        match self {
            Self::Code(code) => ExitCode::from(code),
            Self::Signal(signal) => {
                // Resets the handler to the default action and raises the signal; for a signal
                // whose default is not to terminate, fall through to the shell's convention.
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                ExitCode::from(u8::try_from(128 + signal.clamp(0, 127)).unwrap_or(u8::MAX))
            }
        }
    }
}

/// Reaps every child that has ended (adopted orphans included) without blocking; the program's
/// status once the program itself was reaped.
fn reap(program: Pid) -> Option<Status> {
    loop {
        match rustix::process::wait(WaitOptions::NOHANG) {
            Ok(Some((pid, status))) => {
                if pid == program {
                    let status = match (status.exit_status(), status.terminating_signal()) {
                        (Some(code), _) => Status::Code(u8::try_from(code & 0xff).unwrap_or(0)),
                        (None, Some(signal)) => Status::Signal(signal),
                        (None, None) => Status::Code(CANNOT_RUN),
                    };
                    return Some(status);
                }
            }
            // Nothing more has ended (or we have no children left).
            Ok(None) | Err(_) => return None,
        }
    }
}

/// Whether this process has a child, live or ended and not yet reaped (and so, being a child
/// subreaper, any descendant at all).
fn has_children() -> bool {
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    loop {
        match rustix::process::waitid(WaitId::All, options) {
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::CHILD) => return false,
            // A child, or an error that says nothing: look.
            Ok(_) | Err(_) => return true,
        }
    }
}

/// Reaps every remaining child, blocking until there is none (they were all sent SIGKILL).
fn reap_all() {
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some(_)) => {}
            Err(rustix::io::Errno::INTR) => {}
            Ok(None) | Err(_) => return,
        }
    }
}

/// Freezes and kills every descendant of this process (not this process).
fn kill_descendants() {
    kill::kill_descendants(rustix::process::getpid());
}

/// Polls the parent once a second; when it changed, the host is gone: SIGUSR1 to ourselves puts
/// the main loop on the cleanup path.
fn watch_parent(parent: Pid) {
    loop {
        std::thread::sleep(Duration::from_secs(1));
        if rustix::process::getppid() != Some(parent) {
            kill::signal_process(rustix::process::getpid(), RawSignal::USR1);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_its_invocation() {
        let parsed = Invocation::parse(
            ["42", "leader", "claude", "-p", "hi"]
                .into_iter()
                .map(OsString::from)
                .collect(),
        )
        .map(|inv| (inv.parent.as_raw_pid(), inv.forward, inv.program, inv.args));
        assert_eq!(
            parsed,
            Some((
                42,
                Forward::Leader,
                OsString::from("claude"),
                vec![OsString::from("-p"), OsString::from("hi")]
            ))
        );
    }

    #[test]
    fn refuses_a_bad_invocation() {
        for args in [
            vec![],
            vec!["x", "leader", "p"],
            vec!["42", "sideways", "p"],
            vec!["42", "group"],
            vec!["-1", "group", "p"],
        ] {
            let args = args.into_iter().map(OsString::from).collect();
            assert!(Invocation::parse(args).is_none());
        }
    }
}
