//! Counting what a killed `subagent` left behind: the test process makes itself a child
//! subreaper, so every orphan of a tree it started is re-parented to it (not to init), and its
//! descendants in `/proc` are exactly what is still alive of those trees.
//!
//! A user's shell is not a subreaper: there the orphans go to init. The guardians of
//! `crates/process` learn of the host's death by the parent-death signal and `getppid`
//! changing, which happens the same way whoever adopts them, so what is counted here is what a
//! user would find left.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions};

/// Makes this process the subreaper of everything it starts from now on. nextest runs each
/// test in a process of its own, so this changes nothing for other tests there.
pub(super) fn become_subreaper() {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).unwrap();
}

/// A live process: pid and command line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Live {
    pub pid: i32,
    pub cmdline: String,
}

fn children_of(pid: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return found;
    };
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            found.extend(
                text.split_whitespace()
                    .filter_map(|s| s.parse::<i32>().ok()),
            );
        }
    }
    found
}

/// A process's state letter (`Z` for a zombie), or `None` once it is gone.
fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| {
            String::from_utf8_lossy(&bytes)
                .replace('\0', " ")
                .trim()
                .to_owned()
        })
        .unwrap_or_default()
}

/// `pid` and all its descendants that are not zombies.
pub(super) fn tree(pid: i32) -> Vec<Live> {
    let mut out = Vec::new();
    let mut stack = vec![pid];
    while let Some(next) = stack.pop() {
        if state(next).is_some_and(|s| s != 'Z') {
            out.push(Live {
                pid: next,
                cmdline: cmdline(next),
            });
        }
        stack.extend(children_of(next));
    }
    out.sort();
    out
}

/// This process's children (of every thread).
pub(super) fn children() -> Vec<i32> {
    children_of(i32::try_from(std::process::id()).unwrap())
}

/// The live descendants of this process outside the trees of `keep` (the harness's own
/// long-lived processes: nats-server, `subagent serve`, workers).
pub(super) fn strays(keep: &BTreeSet<i32>) -> Vec<Live> {
    let mut out = Vec::new();
    for child in children() {
        if !keep.contains(&child) {
            out.extend(tree(child));
        }
    }
    out.sort();
    out
}

/// Waits up to `limit` for the strays to be gone (the guardians kill their trees within
/// milliseconds; the kernel ends a killed process a moment later), polling `/proc`; returns
/// what is still alive at the end, then kills and reaps it so the next round starts clean.
pub(super) fn settle(keep: &BTreeSet<i32>, limit: Duration) -> Vec<Live> {
    let deadline = Instant::now() + limit;
    let mut left = strays(keep);
    while !left.is_empty() && Instant::now() < deadline {
        reap_zombies(keep);
        std::thread::sleep(Duration::from_millis(20));
        left = strays(keep);
    }
    reap_zombies(keep);
    if !left.is_empty() {
        for live in &left {
            if let Some(pid) = Pid::from_raw(live.pid) {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
        }
        let cleanup = Instant::now() + Duration::from_secs(10);
        while !strays(keep).is_empty() && Instant::now() < cleanup {
            reap_zombies(keep);
            std::thread::sleep(Duration::from_millis(20));
        }
        reap_zombies(keep);
    }
    left
}

/// Reaps the zombies among this process's children that are not ours to wait for (`keep`,
/// and processes a `Child` handle of the harness still owns are never zombies here: the
/// harness waits for those before it settles).
pub(super) fn reap_zombies(keep: &BTreeSet<i32>) {
    for child in children() {
        if keep.contains(&child) || state(child) != Some('Z') {
            continue;
        }
        if let Some(pid) = Pid::from_raw(child) {
            let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
        }
    }
}

/// Sends `signal` to one process.
pub(super) fn signal(pid: u32, signal: Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}
