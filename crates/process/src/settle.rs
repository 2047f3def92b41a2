//! Waiting for what a child started to end by itself: [`Process::settle`].

use std::time::Duration;

use std::os::fd::OwnedFd;
use std::time::Instant;

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, PidfdFlags};

use crate::child::Process;
use crate::kill::{Node, walk};

impl Process {
    /// Waits, at most `timeout`, until every process the program started has exited — the
    /// program itself (and its guardian) aside — and says whether they all did. For a program
    /// whose own children finish writing after it answered, before the program is stopped:
    /// claude-agent-acp ends its `claude` when a session closes, and `claude` writes its session
    /// transcript on the way out; stopping the tree at once lost it. Processes started after
    /// this call are not waited for; the kernel says when each exits (a pidfd per process,
    /// waited on in one `poll` on a blocking thread).
    pub async fn settle(&self, timeout: Duration) -> bool {
        let waiting = self.started_by_program(walk(self.pid_raw()).as_deref());
        waiting.is_empty() || wait_for(waiting, timeout).await
    }

    /// [`Process::settle`], then [`Process::stop`]; says whether everything settled. When
    /// nothing was left to wait for, the tree walked to find that out is also the stop's record
    /// of the tree (taken just before the signal, as the stop's own would be), so the child's
    /// threads are walked once, not twice: each walk costs, and the kernel flushes what it
    /// looked up when the child exits.
    pub async fn settle_then_stop(&mut self, timeout: Duration) -> bool {
        let walked = walk(self.pid_raw());
        let waiting = self.started_by_program(walked.as_deref());
        if waiting.is_empty() {
            self.stop_walked(walked);
            return true;
        }
        let settled = wait_for(waiting, timeout).await;
        self.stop();
        settled
    }

    /// What the program started, in a walk of the tree: under a guardian the program is the
    /// guardian's child, and what it started is one level further down.
    fn started_by_program(&self, walked: Option<&[Node]>) -> Vec<i32> {
        let depth = if self.is_guarded() { 2 } else { 1 };
        walked
            .unwrap_or_default()
            .iter()
            .filter(|node| node.depth >= depth)
            .map(|node| node.pid)
            .collect()
    }
}

/// Whether every process of `pids` exits within `timeout`, waited for on a blocking thread.
async fn wait_for(pids: Vec<i32>, timeout: Duration) -> bool {
    tokio::task::spawn_blocking(move || all_exit(&pids, timeout))
        .await
        .unwrap_or(false)
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
