//! Waiting for what a child started to end by itself: [`Process::settle`].

use std::time::Duration;

use std::os::fd::OwnedFd;
use std::time::Instant;

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, PidfdFlags};

use crate::child::Process;

impl Process {
    /// Waits, at most `timeout`, until every process the program started has exited — the
    /// program itself (and its guardian) aside — and says whether they all did. For a program
    /// whose own children finish writing after it answered, before the program is stopped:
    /// claude-agent-acp ends its `claude` when a session closes, and `claude` writes its session
    /// transcript on the way out; stopping the tree at once lost it. Processes started after
    /// this call are not waited for; the kernel says when each exits (a pidfd per process,
    /// waited on in one `poll` on a blocking thread).
    pub async fn settle(&self, timeout: Duration) -> bool {
        // Under a guardian the program is the guardian's child: what it started is one level
        // further down.
        let skip = if self.is_guarded() { 2 } else { 1 };
        let pids = descendants(self.pid_raw(), skip);
        if pids.is_empty() {
            return true;
        }
        tokio::task::spawn_blocking(move || all_exit(&pids, timeout))
            .await
            .unwrap_or(false)
    }
}

/// The processes under `root` at least `skip` levels down, from `/proc/<pid>/task/*/children`
/// (empty where the kernel does not offer those files).
fn descendants(root: i32, skip: usize) -> Vec<i32> {
    let mut found = Vec::new();
    let mut level = vec![root];
    let mut depth = 0;
    while !level.is_empty() {
        let mut next = Vec::new();
        for pid in level {
            next.extend(children(pid));
        }
        depth += 1;
        if depth >= skip {
            found.extend(next.iter().copied());
        }
        level = next;
    }
    found
}

/// The children of `pid`, every thread's.
fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|child| child.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// Whether every process of `pids` exited within `timeout` (one that is gone already, or cannot
/// be watched, counts as exited): a pidfd for each, polled until each is readable.
fn all_exit(pids: &[i32], timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let mut left: Vec<OwnedFd> = pids
        .iter()
        .filter_map(|pid| Pid::from_raw(*pid))
        .filter_map(|pid| rustix::process::pidfd_open(pid, PidfdFlags::empty()).ok())
        .collect();
    while !left.is_empty() {
        let Some(remaining) = deadline.checked_duration_since(Instant::now()) else {
            return false;
        };
        let Ok(remaining) = Timespec::try_from(remaining) else {
            return false;
        };
        let mut polls: Vec<PollFd<'_>> = left
            .iter()
            .map(|fd| PollFd::new(fd, PollFlags::IN))
            .collect();
        match poll(&mut polls, Some(&remaining)) {
            Ok(0) => return false,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return false,
        }
        let exited: Vec<bool> = polls.iter().map(|p| !p.revents().is_empty()).collect();
        drop(polls);
        left = left
            .into_iter()
            .zip(exited)
            .filter_map(|(fd, exited)| (!exited).then_some(fd))
            .collect();
    }
    true
}
