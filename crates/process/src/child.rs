//! A running child: [`Process`], and how it ended: [`Exit`].

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use rustix::process::Pid;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::kill::{
    self, Known, Node, Signal, kill_leftovers, kill_tree, signal_group, signal_process,
};
use crate::lines::{Head, LineReader, Tail};
use crate::spec::{ProcessSpec, SignalTarget, StopPolicy};
use crate::vfork::ClonedChild;
use crate::{Error, Result};

/// How long `wait` waits for stderr's end after the child exited (only a descendant that escaped
/// the kill can hold it open).
const STDERR_DRAIN: Duration = Duration::from_millis(250);

/// How long `next_line` keeps waiting for stdout's end after the child exited and the rest of
/// its group was killed: what the child wrote is already in the pipe, so this only bounds a
/// descendant that escaped the group and holds stdout open.
const STDOUT_DRAIN: Duration = Duration::from_millis(250);

/// Further than any timer needs to look (a century): longer timeouts and grace periods (any
/// `Duration` may be configured, a model may ask the bash tool for any timeout) are clamped to it
/// instead of overflowing an `Instant`.
const FAR: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// `after` past `at`, at most [`FAR`].
fn later(at: Instant, after: Duration) -> Instant {
    at + after.min(FAR)
}

/// Why the owner stopped the child.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopCause {
    /// The cancellation token fired.
    Cancelled,
    /// The overall timeout passed.
    OverallTimeout,
    /// Stdout stayed silent for the idle timeout.
    IdleTimeout,
    /// A stdout line exceeded the bound.
    LineTooLong,
    /// Reading stdout failed.
    Io,
    /// The caller asked ([`Process::stop`]).
    Requested,
}

impl StopCause {
    /// A short description, for diagnostics.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled",
            Self::OverallTimeout => "overall timeout reached",
            Self::IdleTimeout => "no output for the idle timeout",
            Self::LineTooLong => "output line too long",
            Self::Io => "reading the output failed",
            Self::Requested => "stop requested",
        }
    }
}

/// How a child ended.
#[derive(Clone, Debug)]
pub struct Exit {
    /// The exit status.
    pub status: ExitStatus,
    /// Set when the owner stopped the child, with why.
    pub stopped: Option<StopCause>,
    /// Whether the grace period ran out and the tree was killed with SIGKILL.
    pub killed: bool,
    /// The end of stderr (lossy UTF-8), for diagnostics.
    pub stderr_tail: String,
}

impl Exit {
    /// The exit code, when the child exited (not killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// The signal that ended the child, if one did.
    pub fn signal(&self) -> Option<i32> {
        std::os::unix::process::ExitStatusExt::signal(&self.status)
    }

    /// Exit code 0 and not stopped by the owner.
    pub fn success(&self) -> bool {
        self.status.success() && self.stopped.is_none()
    }
}

/// How a child ended and what it wrote: [`Process::wait_with_output`].
#[derive(Clone, Debug)]
pub struct Captured {
    /// How it ended.
    pub exit: Exit,
    /// The first bytes of stdout, up to [`ProcessSpec::capture_output`], byte-exact.
    pub stdout: Vec<u8>,
    /// Whether stdout went on past them.
    pub stdout_truncated: bool,
    /// The first bytes of stderr, up to the same bound.
    pub stderr: Vec<u8>,
    /// Whether stderr went on past them.
    pub stderr_truncated: bool,
}

#[derive(Clone, Copy, Debug)]
enum Timer {
    Kill,
    Overall,
    Idle,
    /// The child exited and stdout stayed open past [`STDOUT_DRAIN`].
    Drained,
}

enum Wake {
    Line(Result<Option<Vec<u8>>>),
    Exited(std::io::Result<ExitStatus>),
    Cancelled,
    Timer(Timer),
}

enum WaitWake {
    Exited(std::io::Result<ExitStatus>),
    StdoutDone,
    Cancelled,
    Timer(Timer),
}

/// A child just started (by [`crate::vfork::spawn`]), before the owner takes it: its handle,
/// pid and pipes on the runtime's reactor.
pub(crate) struct Started {
    pub child: ClonedChild,
    pub pid: Pid,
    pub stdin: Option<ChildStdin>,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

impl Started {
    /// Puts the pipes of a child [`crate::vfork::spawn`] started onto the runtime's reactor
    /// (the child is killed, and reaped, should that fail).
    pub(crate) fn cloned(spawned: crate::vfork::Spawned) -> std::io::Result<Self> {
        let crate::vfork::Spawned {
            child,
            stdin,
            stdout,
            stderr,
        } = spawned;
        let pipes = (|| {
            Ok::<_, std::io::Error>((
                stdin
                    .map(|fd| ChildStdin::from_std(std::process::ChildStdin::from(fd)))
                    .transpose()?,
                ChildStdout::from_std(std::process::ChildStdout::from(stdout))?,
                ChildStderr::from_std(std::process::ChildStderr::from(stderr))?,
            ))
        })();
        match pipes {
            Ok((stdin, stdout, stderr)) => Ok(Self {
                pid: child.pid(),
                child,
                stdin,
                stdout,
                stderr,
            }),
            Err(error) => {
                kill::kill_tree(child.pid(), &Known::default());
                Err(error)
            }
        }
    }
}

/// A running child process, owned: its process group dies with it (on [`Process::wait`] after
/// it exits, or at once on drop), and it is always reaped.
#[derive(Debug)]
pub struct Process {
    child: ClonedChild,
    pid: Pid,
    program: PathBuf,
    stdout: LineReader<BufReader<ChildStdout>>,
    stdin: Option<ChildStdin>,
    tail: Tail,
    stderr_head: Head,
    capture_bytes: usize,
    tail_task: Option<JoinHandle<()>>,
    cancel: CancellationToken,
    stop: StopPolicy,
    deadline: Option<Instant>,
    idle: Option<Duration>,
    last_output: Instant,
    stopping: Option<(StopCause, Instant)>,
    killed: bool,
    reaped: bool,
    /// When `next_line` saw the child exit (stdout may still be held by a descendant).
    exited_at: Option<Instant>,
    known: Known,
    /// The child is a guardian ([`crate::guard`]) that runs the program and forwards the polite
    /// signal to the policy's target itself.
    guarded: bool,
}

impl Process {
    pub(crate) fn start(
        started: Started,
        program: PathBuf,
        guarded: bool,
        spec: &ProcessSpec,
    ) -> Result<Self> {
        let Started {
            child,
            pid,
            stdin,
            stdout,
            stderr,
        } = started;
        let tail = Tail::new(spec.stderr_tail_bytes);
        let stderr_head = Head::new(spec.capture_bytes);
        let tail_task = tokio::spawn(tail.clone().fill_from(stderr, stderr_head.clone()));
        let now = Instant::now();
        Ok(Self {
            stdin,
            child,
            pid,
            program,
            stdout: LineReader::new(BufReader::new(stdout), spec.max_line_bytes),
            tail,
            stderr_head,
            capture_bytes: spec.capture_bytes,
            tail_task: Some(tail_task),
            cancel: spec.cancel.clone(),
            stop: spec.stop,
            deadline: spec.overall_timeout.map(|timeout| later(now, timeout)),
            idle: spec.idle_timeout,
            last_output: now,
            stopping: None,
            killed: false,
            reaped: false,
            exited_at: None,
            known: Known::default(),
            guarded,
        })
    }

    /// The child's pid, which is also its process group id (under a guardian, the guardian's).
    pub fn pid(&self) -> u32 {
        self.pid.as_raw_pid().unsigned_abs()
    }

    /// The child's pid as the kernel's type.
    pub(crate) fn pid_raw(&self) -> i32 {
        self.pid.as_raw_pid()
    }

    /// Whether the child is a guardian running the program.
    pub(crate) fn is_guarded(&self) -> bool {
        self.guarded
    }

    /// The program that runs.
    pub fn program(&self) -> &std::path::Path {
        &self.program
    }

    /// The next stdout line (lossy UTF-8, without the newline), `None` at the end of stdout.
    ///
    /// Meanwhile it watches the cancellation token and the timeouts: when one fires the polite
    /// signal goes out and lines keep coming (a CLI may report its interruption) until the
    /// child closes stdout or the grace period ends, when the whole tree is killed. It also
    /// watches the child itself: once it exited, what is left of its process group is killed
    /// and the lines already written are still returned, but a descendant that escaped the group
    /// and holds stdout open does not keep the end of stdout away. Cancel-safe.
    pub async fn next_line(&mut self) -> Result<Option<String>> {
        loop {
            if self.stdout.is_done() {
                return Ok(None);
            }
            let timer = self.next_timer();
            let running = self.exited_at.is_none();
            let wake = tokio::select! {
                biased;
                line = self.stdout.next_line() => Wake::Line(line),
                status = self.child.wait(), if running => Wake::Exited(status),
                () = self.cancel.cancelled(), if running && self.stopping.is_none() => {
                    Wake::Cancelled
                }
                () = sleep_until(timer) => Wake::Timer(timer.map_or(Timer::Kill, |(_, t)| t)),
            };
            match wake {
                Wake::Line(Ok(Some(bytes))) => {
                    self.last_output = Instant::now();
                    return Ok(Some(lossy(bytes)));
                }
                Wake::Line(Ok(None)) => return Ok(None),
                Wake::Line(Err(err)) => {
                    self.begin_stop(match err {
                        Error::LineTooLong { .. } => StopCause::LineTooLong,
                        _ => StopCause::Io,
                    });
                    return Err(err);
                }
                Wake::Exited(status) => self.on_exit(status),
                Wake::Cancelled => self.begin_stop(StopCause::Cancelled),
                Wake::Timer(Timer::Drained) => {
                    tracing::debug!(pid = self.pid(), "stdout still open after exit");
                    return Ok(self.stdout.abandon().map(lossy));
                }
                Wake::Timer(timer) => self.on_timer(timer),
            }
        }
    }

    /// The child exited while stdout was read: it is reaped (`wait` reports the same status
    /// later), and what is left of its tree dies as it would in `wait`.
    fn on_exit(&mut self, status: std::io::Result<ExitStatus>) {
        self.exited_at = Some(Instant::now());
        if status.is_ok() {
            self.reaped = true;
            self.kill_leftovers();
        }
    }

    /// After the leader was reaped: the rest of its group dies; during a stop, so do the
    /// descendants recorded when it began (also those that left the group), which the grace
    /// period's kill would have reached.
    fn kill_leftovers(&self) {
        if self.stopping.is_some() {
            kill_leftovers(self.pid, &self.known);
        } else {
            signal_group(self.pid, rustix::process::Signal::KILL);
        }
    }

    /// Writes `line` and a newline to the child's stdin (needs [`crate::StdinMode::Piped`]).
    pub async fn write_line(&mut self, line: &str) -> Result<()> {
        let stdin = self.stdin.as_mut().ok_or_else(|| {
            Error::Io(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the child's stdin is not an open pipe",
            ))
        })?;
        stdin.write_all(line.as_bytes()).await?;
        stdin.write_all(b"\n").await?;
        stdin.flush().await?;
        Ok(())
    }

    /// Takes the stdin pipe (for callers that write on their own task).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// Closes stdin (the child sees its end).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Starts the stop now: the polite signal, then SIGKILL to the tree after the grace period
    /// (enforced while `next_line` or `wait` runs).
    pub fn stop(&mut self) {
        self.begin_stop(StopCause::Requested);
    }

    /// Kills the whole tree with SIGKILL now.
    pub fn kill(&mut self) {
        if self.stopping.is_none() {
            self.stopping = Some((StopCause::Requested, Instant::now()));
        }
        self.kill_now();
    }

    /// Sends `signal` to the child only (not its group), now, outside any stop policy. Under a
    /// guardian it goes to the guardian, which forwards SIGINT, SIGTERM and SIGHUP to the stop
    /// policy's target; SIGKILL kills the guardian, and with it the program.
    pub fn signal(&self, signal: Signal) {
        if !self.reaped {
            signal_process(self.pid, signal.raw());
        }
    }

    /// The stderr tail so far.
    pub fn stderr_tail(&self) -> String {
        self.tail.text()
    }

    /// Waits for the child to exit (reading and discarding any stdout left, still enforcing the
    /// cancellation token, the timeouts and the grace period), reaps it, kills what is left of
    /// its process group, and reports how it ended.
    pub async fn wait(self) -> Result<Exit> {
        self.finish(None).await
    }

    /// Like [`Process::wait`], but keeps the first bytes of stdout and stderr (up to
    /// [`ProcessSpec::capture_output`], each) byte-exact instead of discarding stdout: for a
    /// child whose output is a blob, not lines. Stdout lines already read with
    /// [`Process::next_line`] are not in it.
    pub async fn wait_with_output(self) -> Result<Captured> {
        let stdout = Head::new(self.capture_bytes);
        let stderr = self.stderr_head.clone();
        let exit = self.finish(Some(&stdout)).await?;
        let (stdout, stdout_truncated) = stdout.take();
        let (stderr, stderr_truncated) = stderr.take();
        Ok(Captured {
            exit,
            stdout,
            stdout_truncated,
            stderr,
            stderr_truncated,
        })
    }

    async fn finish(mut self, capture: Option<&Head>) -> Result<Exit> {
        self.close_stdin();
        let status = loop {
            let timer = self.next_timer();
            let wake = tokio::select! {
                biased;
                status = self.child.wait() => WaitWake::Exited(status),
                () = drain(&mut self.stdout, capture), if !self.stdout.is_done() => {
                    WaitWake::StdoutDone
                }
                () = self.cancel.cancelled(), if self.stopping.is_none() => WaitWake::Cancelled,
                () = sleep_until(timer) => WaitWake::Timer(timer.map_or(Timer::Kill, |(_, t)| t)),
            };
            match wake {
                WaitWake::Exited(status) => break status?,
                WaitWake::StdoutDone => {}
                WaitWake::Cancelled => self.begin_stop(StopCause::Cancelled),
                WaitWake::Timer(timer) => self.on_timer(timer),
            }
        };
        self.reaped = true;
        // The leader is gone; whatever stayed in its group goes with it.
        self.kill_leftovers();
        // What the child wrote just before it exited may still sit in the pipe. Only a
        // descendant that escaped the kill can hold stdout open, so the wait is bounded.
        if capture.is_some()
            && !self.stdout.is_done()
            && tokio::time::timeout(STDERR_DRAIN, drain(&mut self.stdout, capture))
                .await
                .is_err()
        {
            tracing::debug!(pid = self.pid(), "stdout still open after exit");
        }
        if let Some(task) = self.tail_task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(STDERR_DRAIN, task).await.is_err() {
                tracing::debug!(pid = self.pid(), "stderr still open after exit");
                abort.abort();
            }
        }
        tracing::debug!(pid = self.pid(), ?status, "exited");
        Ok(Exit {
            status,
            stopped: self.stopping.map(|(cause, _)| cause),
            killed: self.killed,
            stderr_tail: self.tail.text(),
        })
    }

    fn next_timer(&self) -> Option<(Instant, Timer)> {
        if let Some(exited) = self.exited_at {
            return Some((exited + STDOUT_DRAIN, Timer::Drained));
        }
        match self.stopping {
            Some((_, kill_at)) if !self.killed => Some((kill_at, Timer::Kill)),
            Some(_) => None,
            None => {
                let overall = self.deadline.map(|at| (at, Timer::Overall));
                let idle = self
                    .idle
                    .map(|idle| (later(self.last_output, idle), Timer::Idle));
                match (overall, idle) {
                    (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
                    (a, b) => a.or(b),
                }
            }
        }
    }

    fn on_timer(&mut self, timer: Timer) {
        match timer {
            Timer::Kill => self.kill_now(),
            Timer::Drained => {}
            Timer::Overall => self.begin_stop(StopCause::OverallTimeout),
            Timer::Idle => self.begin_stop(StopCause::IdleTimeout),
        }
    }

    fn begin_stop(&mut self, cause: StopCause) {
        if self.stopping.is_some() || self.reaped {
            return;
        }
        let walked = kill::walk(self.pid_raw());
        self.begin_stop_walked(cause, walked);
    }

    /// [`Process::stop`] with the tree a [`crate::kill::walk`] found just now, instead of a
    /// walk of its own.
    pub(crate) fn stop_walked(&mut self, walked: Option<Vec<Node>>) {
        self.begin_stop_walked(StopCause::Requested, walked);
    }

    /// Begins the stop; `walked` is the tree as a walk found it just before.
    fn begin_stop_walked(&mut self, cause: StopCause, walked: Option<Vec<Node>>) {
        if self.stopping.is_some() || self.reaped {
            return;
        }
        tracing::debug!(pid = self.pid(), cause = cause.describe(), "stopping");
        self.stopping = Some((cause, later(Instant::now(), self.stop.grace)));
        // Remember the tree while the child still holds it: the polite signal may kill the
        // child and orphan a descendant that left the group.
        self.known.record(self.pid_raw(), walked);
        let signal = self.stop.signal.raw();
        match self.stop.target {
            // The guardian forwards it to the policy's target (a signal to the whole group would
            // reach the program twice).
            _ if self.guarded => signal_process(self.pid, signal),
            SignalTarget::Group => signal_group(self.pid, signal),
            SignalTarget::Leader => signal_process(self.pid, signal),
        }
        if self.stop.grace.is_zero() {
            self.kill_now();
        }
    }

    fn kill_now(&mut self) {
        if self.killed || self.reaped {
            return;
        }
        tracing::debug!(pid = self.pid(), "killing the tree");
        self.killed = true;
        kill_tree(self.pid, &self.known);
    }
}

/// `bytes` as text, invalid UTF-8 replaced; valid text (the usual case) is not copied.
fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned())
}

/// Reads the rest of stdout into `capture`, or discards it.
async fn drain(stdout: &mut LineReader<BufReader<ChildStdout>>, capture: Option<&Head>) {
    match capture {
        Some(head) => stdout.read_into(head).await,
        None => stdout.discard().await,
    }
}

async fn sleep_until(timer: Option<(Instant, Timer)>) {
    match timer {
        Some((at, _)) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(task) = self.tail_task.take() {
            task.abort();
        }
        if !self.reaped {
            // Killed now, reaped by tokio's orphan reaper.
            kill_tree(self.pid, &self.known);
        }
    }
}
