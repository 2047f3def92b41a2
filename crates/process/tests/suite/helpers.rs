//! Shared helpers: waiting for a pid to die without sleeping, reading `/proc`.

use std::time::Duration;

use rustix::event::{PollFd, PollFlags, poll};
use rustix::process::{Pid, PidfdFlags, pidfd_open};

/// The guardian binary of this crate.
pub(super) const GUARD: &str = env!("CARGO_BIN_EXE_subagent-guard");

/// A spec for `program` in `cwd`, under this crate's guardian or under none.
pub(super) fn spec(
    guarded: bool,
    program: impl Into<std::path::PathBuf>,
    cwd: impl Into<std::path::PathBuf>,
) -> subagent_process::ProcessSpec {
    let spec = subagent_process::ProcessSpec::new(program, cwd);
    if guarded {
        spec.guard(Some(GUARD.into()))
    } else {
        spec.guard(None)
    }
}

/// A temp dir is not needed for most tests: run in `/tmp`, which exists and is absolute.
pub(super) const CWD: &str = "/tmp";

/// Whether `pid` is alive (exists and is not a zombie).
pub(super) fn alive(pid: i32) -> bool {
    u32::try_from(pid).is_ok_and(|pid| !subagent_test_support::procs::gone(pid))
}

/// Pids of live processes in process group `pgid`.
pub(super) fn group_members(pgid: i32) -> Vec<i32> {
    subagent_test_support::procs::all()
        .iter()
        .filter(|p| p.live() && p.pgid == pgid)
        .map(|p| i32::try_from(p.pid).unwrap())
        .collect()
}

/// A handle that resolves when a process ends (exits, zombie included), via a pidfd: no polling.
pub(super) struct Death(Option<rustix::fd::OwnedFd>);

impl Death {
    /// Opens a pidfd for `pid` (the process may already be gone).
    pub(super) fn watch(pid: i32) -> Self {
        Self(Pid::from_raw(pid).and_then(|pid| pidfd_open(pid, PidfdFlags::empty()).ok()))
    }

    /// Waits until the process ended; panics after `limit`.
    pub(super) async fn wait(self, limit: Duration) {
        let Some(fd) = self.0 else { return };
        let ready = tokio::task::spawn_blocking(move || {
            let timeout = rustix::event::Timespec {
                tv_sec: i64::try_from(limit.as_secs()).unwrap(),
                tv_nsec: i64::from(limit.subsec_nanos()),
            };
            let mut fds = [PollFd::new(&fd, PollFlags::IN)];
            poll(&mut fds, Some(&timeout)).unwrap()
        })
        .await
        .unwrap();
        assert_eq!(ready, 1, "process still alive after {limit:?}");
    }
}

/// A spec that runs this test binary again as the one helper test `name` (a test that does
/// nothing unless `var` is set in its environment, which this spec sets), with its output
/// uncaptured.
pub(super) fn helper_test(name: &str, var: &str) -> subagent_process::ProcessSpec {
    subagent_process::ProcessSpec::new(std::env::current_exe().unwrap(), CWD)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(var, "1")
        .overall_timeout(Some(Duration::from_secs(30)))
}

/// The pid a helper test run by `child` prints after `marker` (libtest prints "test <name> ... "
/// before the test's own output, on the same line).
pub(super) async fn printed_pid(child: &mut subagent_process::Process, marker: &str) -> i32 {
    loop {
        let line = child
            .next_line()
            .await
            .unwrap()
            .expect("the helper printed no pid");
        if let Some((_, pid)) = line.split_once(marker) {
            return pid.trim().parse::<i32>().unwrap();
        }
    }
}

/// Every line `child` prints on stdout, to its end.
pub(super) async fn lines(child: &mut subagent_process::Process) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(line) = child.next_line().await.unwrap() {
        out.push(line);
    }
    out
}
