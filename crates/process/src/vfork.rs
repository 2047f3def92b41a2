//! Starting every child: the host's (a program, or a guardian running one) and a guardian's
//! program, with the parent-death signal the child must ask for itself, without copying the
//! host.
//!
//! `std` starts a child with `posix_spawn` (a clone that shares the host's memory while the
//! host's thread waits, so nothing is copied) unless a `pre_exec` hook is set; then it forks,
//! and the kernel copies the host's page tables: ≈ 1.7 ms per spawn against 0.3 ms in a host
//! with a runtime and its clients in memory. The parent-death signal (`PR_SET_PDEATHSIG`) can
//! only be asked for by the child itself, between the clone and the exec, so [`spawn`] does
//! what `posix_spawn` does plus that one call (when the child gets a signal: a guardian asks
//! for its own): `clone(CLONE_VM | CLONE_VFORK)` onto a stack of its own (a guard page below
//! it), where the child makes system calls only (no allocation, no lock, nothing that touches
//! the memory it shares but one error code), then `execve`. The host's thread is suspended
//! until the exec or the child's exit, so every pointer the child reads stays valid.
//!
//! Signals: the host's thread blocks them all around the clone (a handler of the host run in
//! the child would run on the host's memory); the child resets every handled signal, and
//! SIGPIPE (which a Rust host ignores), to the default, then unblocks everything just before
//! the exec — the state `std` gives a child.
//!
//! The child is waited for through a pidfd ([`ClonedChild::wait`], on the runtime's reactor);
//! one dropped before it was reaped is reaped by a thread of its own (the owner kills the tree
//! first).

#![allow(unsafe_code)]

use std::ffi::{CString, OsStr, OsString, c_char, c_int, c_void};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};

use rustix::process::{Pid, PidfdFlags, WaitOptions};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// The child's stack (a guard page below it): it runs a handful of thin system-call wrappers.
const STACK_BYTES: usize = 64 * 1024;

/// The highest signal number the kernel knows (`_NSIG - 1` on Linux).
const LAST_SIGNAL: c_int = 64;

/// What the child may start.
pub(crate) struct Command<'a> {
    /// An absolute path.
    pub program: &'a Path,
    /// The arguments after `argv[0]` (which is the program).
    pub args: &'a [OsString],
    /// The whole environment.
    pub env: &'a [(OsString, OsString)],
    /// The working directory.
    pub cwd: &'a Path,
    /// A pipe for stdin (else `/dev/null`).
    pub stdin_piped: bool,
    /// Sent to the child when the host thread that spawned it dies (`None`: no such signal,
    /// e.g. for a guardian, which asks for its own).
    pub death_signal: Option<rustix::process::Signal>,
}

/// A started child and the host's ends of its pipes.
pub(crate) struct Spawned {
    pub child: ClonedChild,
    pub stdin: Option<OwnedFd>,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// Everything the child reads, prepared by the host: raw pointers into buffers the host keeps
/// alive (its thread is suspended until the exec).
struct ChildPlan {
    program: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
    /// Null: stay in the host's.
    cwd: *const c_char,
    /// The fds to become 0, 1 and 2 (all above 2, so no `dup2` clobbers another); `None`: the
    /// host's own.
    stdio: Option<[RawFd; 3]>,
    /// A process group of its own (`setpgid(0, 0)`), or the host's.
    own_group: bool,
    /// 0: none.
    death_signal: c_int,
    parent: libc::pid_t,
    /// The `errno` of the step that failed; 0 when the exec happened.
    error: AtomicI32,
}

fn c_string(bytes: &[u8]) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an argument, a variable or a path holds a NUL byte",
        )
    })
}

fn os(value: &OsStr) -> &[u8] {
    value.as_bytes()
}

/// `NAME=value` strings for `execve`.
fn environment<N: AsRef<OsStr>, V: AsRef<OsStr>>(
    pairs: impl IntoIterator<Item = (N, V)>,
) -> std::io::Result<Vec<CString>> {
    pairs
        .into_iter()
        .map(|(name, value)| {
            let mut pair = os(name.as_ref()).to_vec();
            pair.push(b'=');
            pair.extend_from_slice(os(value.as_ref()));
            c_string(&pair)
        })
        .collect()
}

/// `fd`, or a duplicate of it numbered 3 or higher (close-on-exec), so that moving the child's
/// pipes onto 0, 1 and 2 never overwrites one of them (a host started with a closed stdin gets
/// fd 0 from its next `pipe`).
fn above_stdio(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        Ok(fd)
    } else {
        // `try_clone` duplicates with F_DUPFD_CLOEXEC from 3.
        fd.try_clone()
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = std::io::pipe()?;
    Ok((
        above_stdio(OwnedFd::from(read))?,
        above_stdio(OwnedFd::from(write))?,
    ))
}

/// Starts the child. An error means no child is left behind (one that could not exec was
/// reaped); its kind is the failed step's `errno` (`NotFound`, `PermissionDenied`…).
pub(crate) fn spawn(command: &Command<'_>) -> std::io::Result<Spawned> {
    let env = environment(command.env.iter().map(|(name, value)| (name, value)))?;
    let cwd = c_string(os(command.cwd.as_os_str()))?;
    let (child_stdin, host_stdin) = if command.stdin_piped {
        let (read, write) = pipe()?;
        (read, Some(write))
    } else {
        let null = std::fs::File::open("/dev/null")?;
        (above_stdio(OwnedFd::from(null))?, None)
    };
    let (host_stdout, child_stdout) = pipe()?;
    let (host_stderr, child_stderr) = pipe()?;
    let pid = clone_exec(&Exec {
        program: command.program.as_os_str(),
        args: command.args,
        env: &env,
        cwd: Some(&cwd),
        stdio: Some([
            child_stdin.as_raw_fd(),
            child_stdout.as_raw_fd(),
            child_stderr.as_raw_fd(),
        ]),
        own_group: true,
        death_signal: command.death_signal,
    })?;
    drop((child_stdin, child_stdout, child_stderr));
    let child = match ClonedChild::new(pid) {
        Ok(child) => child,
        Err(error) => {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
            return Err(error);
        }
    };
    Ok(Spawned {
        child,
        stdin: host_stdin,
        stdout: host_stdout,
        stderr: host_stderr,
    })
}

/// Starts `program` with `args` as a child that shares everything else with this process (its
/// stdio, environment, working directory and process group), with `death_signal` for when this
/// process dies: the guardian's program. Its caller reaps it.
pub(crate) fn spawn_inheriting(
    program: &OsStr,
    args: &[OsString],
    death_signal: rustix::process::Signal,
) -> std::io::Result<Pid> {
    let env = environment(std::env::vars_os())?;
    clone_exec(&Exec {
        program,
        args,
        env: &env,
        cwd: None,
        stdio: None,
        own_group: false,
        death_signal: Some(death_signal),
    })
}

/// What [`clone_exec`] runs.
struct Exec<'a> {
    program: &'a OsStr,
    args: &'a [OsString],
    /// `NAME=value` pairs: the whole environment.
    env: &'a [CString],
    cwd: Option<&'a CString>,
    stdio: Option<[RawFd; 3]>,
    own_group: bool,
    death_signal: Option<rustix::process::Signal>,
}

/// The clone and the exec: the child's pid once it has exec'd, or the failed step's `errno`
/// (the child that could not exec is reaped).
fn clone_exec(exec: &Exec<'_>) -> std::io::Result<Pid> {
    let program = c_string(os(exec.program))?;
    let mut args = vec![program.clone()];
    for arg in exec.args {
        args.push(c_string(os(arg))?);
    }
    let argv: Vec<*const c_char> = args
        .iter()
        .map(|arg| arg.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp: Vec<*const c_char> = exec
        .env
        .iter()
        .map(|pair| pair.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let plan = ChildPlan {
        program: program.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: exec.cwd.map_or(std::ptr::null(), |cwd| cwd.as_ptr()),
        stdio: exec.stdio,
        own_group: exec.own_group,
        death_signal: exec.death_signal.map_or(0, rustix::process::Signal::as_raw),
        parent: rustix::process::getpid().as_raw_pid(),
        error: AtomicI32::new(0),
    };
    let stack = ChildStack::new()?;

    // SAFETY: zeroed memory is a valid `sigset_t` (a plain bit array), filled or replaced below.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as for `all`.
    let mut before: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `all` is a valid set owned by this frame.
    unsafe { libc::sigfillset(&raw mut all) };
    // SAFETY: both pointers are to sets owned by this frame; only this thread's mask changes.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &raw const all, &raw mut before) };
    // SAFETY: the child runs `child_main` on `stack` (mapped here, used by nothing else, a guard
    // page below it) with a pointer to `plan`, whose pointers point into `program`, `argv`,
    // `envp`, the cwd and their strings, all alive until after `clone` returns: with CLONE_VFORK
    // this thread is suspended until the child has exec'd or exited, so the child never sees
    // them freed. `child_main` is `extern "C"` and never unwinds.
    let pid = unsafe {
        libc::clone(
            child_main,
            stack.top(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&raw const plan).cast_mut().cast::<c_void>(),
        )
    };
    let clone_error = std::io::Error::last_os_error();
    // SAFETY: `before` is the mask saved above; the old mask is not asked for.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &raw const before, std::ptr::null_mut()) };
    if pid < 0 {
        return Err(clone_error);
    }
    drop(stack);
    let pid = Pid::from_raw(pid).ok_or_else(|| std::io::Error::other("clone gave no pid"))?;
    let error = plan.error.load(Ordering::Acquire);
    if error != 0 {
        // The child exited (code 127) without exec'ing: reap it, report its step's error.
        let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
        return Err(std::io::Error::from_raw_os_error(error));
    }
    Ok(pid)
}

/// The child, between the clone and the exec: system calls only. Never returns (it execs or
/// exits 127 with the failed step's `errno` in the plan).
extern "C" fn child_main(plan: *mut c_void) -> c_int {
    // SAFETY: `plan` is the host's `ChildPlan`, alive and unmoved while the host's thread waits
    // for this child (CLONE_VFORK, see `clone_exec`); it is only read, but for its atomic `error`.
    let plan = unsafe { &*plan.cast::<ChildPlan>() };
    // Every signal is blocked (the host blocked them before the clone): reset the handled ones,
    // and SIGPIPE, before anything can be delivered.
    // SAFETY: zeroed memory is a valid `sigaction` (no flags, an empty mask); the handler is set
    // next.
    let mut default: libc::sigaction = unsafe { std::mem::zeroed() };
    default.sa_sigaction = libc::SIG_DFL;
    for signal in 1..=LAST_SIGNAL {
        // SAFETY: as for `default`; filled by the kernel below.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: reads the disposition into `old`, a valid local; an unknown signal fails.
        if unsafe { libc::sigaction(signal, std::ptr::null(), &raw mut old) } != 0 {
            continue;
        }
        let handled = old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN;
        if handled || signal == libc::SIGPIPE {
            // SAFETY: sets the default disposition from a valid local; this child's table is its
            // own (CLONE_VM without CLONE_SIGHAND).
            unsafe { libc::sigaction(signal, &raw const default, std::ptr::null_mut()) };
        }
    }
    if plan.death_signal != 0 {
        let signal =
            libc::c_ulong::try_from(plan.death_signal).unwrap_or(libc::SIGKILL as libc::c_ulong);
        // SAFETY: `PR_SET_PDEATHSIG` takes a signal number; the other arguments are unused.
        if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) } != 0 {
            fail(plan, errno());
        }
        // The host may have died before the prctl: then nobody would send the signal.
        // SAFETY: no arguments, no memory.
        if unsafe { libc::getppid() } != plan.parent {
            fail(plan, libc::ESRCH);
        }
    }
    // SAFETY: no memory is passed; this child becomes the leader of a new group.
    if plan.own_group && unsafe { libc::setpgid(0, 0) } != 0 {
        fail(plan, errno());
    }
    if let Some(stdio) = plan.stdio {
        for (target, fd) in (0..).zip(stdio) {
            // SAFETY: file descriptors only; `fd` is open in the host (it waits) and so here.
            if unsafe { libc::dup2(fd, target) } < 0 {
                fail(plan, errno());
            }
        }
    }
    // SAFETY: `cwd` is null or a NUL-terminated string the host keeps alive.
    if !plan.cwd.is_null() && unsafe { libc::chdir(plan.cwd) } != 0 {
        fail(plan, errno());
    }
    // SAFETY: zeroed memory is a valid `sigset_t`, emptied next.
    let mut none: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `none` is a valid local set.
    unsafe { libc::sigemptyset(&raw mut none) };
    // SAFETY: unblocks every signal from a valid local set; the old mask is not asked for.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, &raw const none, std::ptr::null_mut()) };
    // SAFETY: the program, argv and envp are NUL-terminated strings and null-terminated arrays
    // the host keeps alive; on success nothing after this runs.
    unsafe { libc::execve(plan.program, plan.argv, plan.envp) };
    fail(plan, errno())
}

/// This thread's `errno`.
fn errno() -> c_int {
    // SAFETY: `__errno_location` gives this thread's own errno slot, valid as long as it runs.
    unsafe { *libc::__errno_location() }
}

/// Ends the child: the failed step's `errno` into the plan for the host, then exit 127.
fn fail(plan: &ChildPlan, errno: c_int) -> ! {
    plan.error.store(
        if errno == 0 { libc::EIO } else { errno },
        Ordering::Release,
    );
    // SAFETY: `_exit` ends the child at once, running none of the host's exit handlers (it
    // shares the host's memory).
    unsafe { libc::_exit(127) }
}

/// The child's stack: [`STACK_BYTES`] mapped for it alone, with an inaccessible guard page
/// below (the stack grows down), so running past its end faults instead of writing over
/// whatever the host's allocator put there. Unmapped when dropped, after the clone returned.
struct ChildStack {
    base: *mut c_void,
    len: usize,
}

impl ChildStack {
    fn new() -> std::io::Result<Self> {
        // SAFETY: no memory is passed.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let len = STACK_BYTES + page;
        // SAFETY: a new private anonymous mapping where the kernel chooses; nothing existing is
        // touched.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let stack = Self { base, len };
        // SAFETY: the lowest page of the mapping made above, which nothing uses yet.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// The top of the stack (its highest address, page-aligned, so 16-byte aligned).
    fn top(&self) -> *mut c_void {
        self.base
            .cast::<u8>()
            .wrapping_add(self.len)
            .cast::<c_void>()
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: the whole mapping made in `new`, unused once the clone has returned (the child
        // exec'd or exited by then: CLONE_VFORK).
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// A child started by [`spawn`]: waited for through its pidfd, always reaped.
#[derive(Debug)]
pub(crate) struct ClonedChild {
    pid: Pid,
    pidfd: AsyncFd<OwnedFd>,
    status: Option<ExitStatus>,
}

impl ClonedChild {
    fn new(pid: Pid) -> std::io::Result<Self> {
        let pidfd = rustix::process::pidfd_open(pid, PidfdFlags::NONBLOCK)?;
        // SAFETY: the `OwnedFd` is open, and owned by the `AsyncFd` until it is dropped, so its
        // number names the same pidfd all that time.
        let pidfd = unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) }?;
        Ok(Self {
            pid,
            pidfd,
            status: None,
        })
    }

    /// The child's pid.
    pub(crate) fn pid(&self) -> Pid {
        self.pid
    }

    /// Waits for the child to exit and reaps it (cancel-safe: the status is kept once reaped).
    pub(crate) async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.status {
                return Ok(status);
            }
            let mut ready = self.pidfd.readable().await?;
            match rustix::process::waitpid(Some(self.pid), WaitOptions::NOHANG) {
                Ok(Some((_, status))) => {
                    self.status = Some(ExitStatus::from_raw(status.as_raw()));
                }
                Ok(None) => ready.clear_ready(),
                Err(rustix::io::Errno::INTR) => {}
                Err(error) => return Err(error.into()),
            }
        }
    }
}

impl Drop for ClonedChild {
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        // Not reaped yet: its owner killed it (or it is exiting); a thread waits for it so it
        // does not stay a zombie.
        let pid = self.pid;
        let spawned = std::thread::Builder::new()
            .name("subagent-reap".to_owned())
            .spawn(move || {
                while let Err(rustix::io::Errno::INTR) =
                    rustix::process::waitpid(Some(pid), WaitOptions::empty())
                {}
            });
        if let Err(error) = spawned {
            tracing::debug!(pid = pid.as_raw_pid(), %error, "cannot start a reaper thread");
        }
    }
}
