//! Signals, the whole-tree kill, and the parent-death signal hook.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rustix::process::{Pid, Signal as RawSignal};

/// A signal the owner may send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Signal {
    /// SIGINT: what Ctrl-C sends. Claude Code answers it with a structured result.
    Interrupt,
    /// SIGTERM: the conventional polite stop (codex).
    Terminate,
    /// SIGHUP.
    Hangup,
    /// SIGKILL: cannot be caught.
    Kill,
}

impl Signal {
    pub(crate) fn raw(self) -> RawSignal {
        match self {
            Self::Interrupt => RawSignal::INT,
            Self::Terminate => RawSignal::TERM,
            Self::Hangup => RawSignal::HUP,
            Self::Kill => RawSignal::KILL,
        }
    }

    /// The signal's number (`SIGINT` = 2…), as exit statuses report it.
    pub fn number(self) -> i32 {
        self.raw().as_raw()
    }
}

/// Sends `signal` to one process. A process that is already gone is not an error.
pub(crate) fn signal_process(target: Pid, signal: RawSignal) {
    if let Err(err) = rustix::process::kill_process(target, signal)
        && err != rustix::io::Errno::SRCH
    {
        tracing::debug!(pid = target.as_raw_pid(), %err, "kill failed");
    }
}

/// Sends `signal` to a process group. A group that is already empty is not an error.
pub(crate) fn signal_group(group: Pid, signal: RawSignal) {
    if let Err(err) = rustix::process::kill_process_group(group, signal)
        && err != rustix::io::Errno::SRCH
    {
        tracing::debug!(pgid = group.as_raw_pid(), %err, "killpg failed");
    }
}

/// One row of `/proc/<pid>/stat`.
#[derive(Clone, Copy, Debug)]
struct ProcRow {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    /// Start time in clock ticks since boot: with the pid, it names one process (pids recycle).
    start: u64,
}

fn parse_stat(text: &str) -> Option<ProcRow> {
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the
    // last ')'.
    let (head, tail) = text.rsplit_once(')')?;
    let pid = head.split_whitespace().next()?.parse().ok()?;
    let fields: Vec<&str> = tail.split_whitespace().collect();
    Some(ProcRow {
        pid,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

fn snapshot() -> Vec<ProcRow> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name();
            let name = name.to_str()?;
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let mut text = Vec::new();
            read_proc(&format!("/proc/{name}/stat"), &mut text).ok()?;
            parse_stat(std::str::from_utf8(&text).ok()?)
        })
        .collect()
}

/// Processes seen in the child's tree earlier, by pid and start time, so that the kill still
/// finds a descendant that left the group after its parent (the child) died of the polite
/// signal.
#[derive(Clone, Debug, Default)]
pub(crate) struct Known(BTreeSet<(i32, u64)>);

/// The tree rooted at `leader` (itself included), every member of the process group `leader`
/// leads, the `known` processes still alive under the same identity, and all their descendants,
/// from one `/proc` snapshot.
fn tree_and_group(leader: i32, known: &Known, rows: &[ProcRow]) -> BTreeMap<i32, u64> {
    tree_and_group_of(leader, true, known, rows)
}

/// [`tree_and_group`], optionally without the process that has the leader's pid (after the
/// leader was reaped its pid may name another process; a group id is not reused while the group
/// has members).
fn tree_and_group_of(
    leader: i32,
    with_leader: bool,
    known: &Known,
    rows: &[ProcRow],
) -> BTreeMap<i32, u64> {
    let mut children: HashMap<i32, Vec<&ProcRow>> = HashMap::new();
    for row in rows {
        children.entry(row.ppid).or_default().push(row);
    }
    let mut found: BTreeMap<i32, u64> = rows
        .iter()
        .filter(|row| {
            row.pgrp == leader
                || (with_leader && row.pid == leader)
                || known.0.contains(&(row.pid, row.start))
        })
        .map(|row| (row.pid, row.start))
        .collect();
    let mut stack: Vec<i32> = found.keys().copied().collect();
    while let Some(pid) = stack.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if found.insert(child.pid, child.start).is_none() {
                stack.push(child.pid);
            }
        }
    }
    found
}

impl Known {
    /// Records the child's tree as a [`walk`] from `leader` found it, before the polite signal
    /// may kill its top: the walk costs what the tree has, not what the machine runs; where it
    /// found nothing (a kernel without children files), a whole `/proc` snapshot with the
    /// leader's process group is read instead. (Under a guardian, a child subreaper, the walk is
    /// the whole tree; without one, an orphan re-parented to init before the stop is not
    /// recorded, but while it stays in the group the kill still finds it.)
    pub(crate) fn record(&mut self, leader: i32, walked: Option<Vec<Node>>) {
        match walked {
            Some(found) => self
                .0
                .extend(found.into_iter().map(|node| (node.pid, node.start))),
            None => {
                let found = tree_and_group(leader, self, &snapshot());
                self.0.extend(found);
            }
        }
    }
}

/// One process of a [`walk`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub pid: i32,
    /// Its start time (with the pid, its identity).
    pub start: u64,
    /// Levels below the root (the root is 0).
    pub depth: usize,
}

/// `root` and its descendants, from the kernel's children files (every thread's, since any
/// thread may have started a child); `None` when `root`'s cannot be read (gone, or a kernel
/// without them).
pub(crate) fn walk(root: i32) -> Option<Vec<Node>> {
    let mut text = Vec::new();
    read_proc(&format!("/proc/{root}/task/{root}/children"), &mut text).ok()?;
    let mut found = Vec::new();
    let mut stack = vec![(root, 0)];
    while let Some((pid, depth)) = stack.pop() {
        if read_proc(&format!("/proc/{pid}/stat"), &mut text).is_err() {
            continue;
        }
        let Some(row) = parse_stat(&String::from_utf8_lossy(&text)) else {
            continue;
        };
        found.push(Node {
            pid,
            start: row.start,
            depth,
        });
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children = format!("/proc/{pid}/task/{}/children", task.file_name().display());
            if read_proc(&children, &mut text).is_ok() {
                stack.extend(
                    String::from_utf8_lossy(&text)
                        .split_whitespace()
                        .filter_map(|c| c.parse::<i32>().ok())
                        .map(|child| (child, depth + 1)),
                );
            }
        }
    }
    Some(found)
}

/// Reads a small `/proc` file whole into `text` (emptied first): open, reads, close, without
/// the `stat` and `lseek` for a size hint that `std::fs::read` makes (a `/proc` file has no
/// size to give). A walk reads two files per thread, on the way to stopping the child. Only
/// ever `/proc` files the kernel writes (`cargo xtask tidy` allows this crate its own reader:
/// it depends on no crate of ours, so not on `subagent_session::read_user_file`).
fn read_proc(path: &str, text: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Read;
    text.clear();
    let mut file = std::fs::File::open(path)?;
    let mut chunk = [0_u8; 4096];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(read) => text.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
}

/// The start time of process `pid` (with the pid, its identity); `None` when there is none.
fn start_of(pid: i32) -> Option<u64> {
    let mut text = Vec::new();
    read_proc(&format!("/proc/{pid}/stat"), &mut text).ok()?;
    parse_stat(std::str::from_utf8(&text).ok()?).map(|row| row.start)
}

/// Whether nothing can be left of a reaped leader's tree: its process group is empty and no
/// known process lives on under the same identity — what [`kill_leftovers`] would look for
/// (the group, live known processes and their descendants), found without a `/proc` snapshot.
fn nothing_left(leader: Pid, known: &Known) -> bool {
    matches!(
        rustix::process::test_kill_process_group(leader),
        Err(rustix::io::Errno::SRCH)
    ) && known
        .0
        .iter()
        .all(|(pid, start)| start_of(*pid) != Some(*start))
}

/// Kills the child's whole tree: every descendant of `leader` (also those that left its process
/// group or session, found through `/proc`), every member of its process group and every `known`
/// process still alive. Each round freezes what it finds with SIGSTOP (a stopped process cannot
/// fork), until a round finds nothing new; then everything gets SIGKILL, and the group once more.
pub(crate) fn kill_tree(leader: Pid, known: &Known) {
    kill_all(leader, true, known);
}

/// What [`kill_tree`] kills, once the leader itself exited and was reaped: the rest of its
/// process group, every `known` process still alive under the same identity, and their
/// descendants (never the leader's pid, which may have been reused).
pub(crate) fn kill_leftovers(leader: Pid, known: &Known) {
    kill_all(leader, false, known);
}

fn kill_all(leader: Pid, with_leader: bool, known: &Known) {
    if !with_leader && nothing_left(leader, known) {
        return;
    }
    let raw_leader = leader.as_raw_pid();
    freeze_then_kill(|| {
        tree_and_group_of(raw_leader, with_leader, known, &snapshot())
            .into_keys()
            .collect()
    });
    if with_leader {
        signal_process(leader, RawSignal::KILL);
    }
    signal_group(leader, RawSignal::KILL);
}

/// Freezes (SIGSTOP) what `survey` finds, round after round, until a round finds nothing new
/// (a stopped process cannot fork), then kills everything frozen with SIGKILL.
fn freeze_then_kill(mut survey: impl FnMut() -> Vec<i32>) {
    let mut frozen: BTreeSet<i32> = BTreeSet::new();
    for _round in 0..16 {
        let fresh: Vec<i32> = survey()
            .into_iter()
            .filter(|pid| !frozen.contains(pid))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for raw in fresh {
            if let Some(target) = Pid::from_raw(raw) {
                signal_process(target, RawSignal::STOP);
            }
            frozen.insert(raw);
        }
    }
    for raw in &frozen {
        if let Some(target) = Pid::from_raw(*raw) {
            signal_process(target, RawSignal::KILL);
        }
    }
}

/// Freezes and kills every descendant of `ancestor` and every other member of its process
/// group, never `ancestor` itself (the guardian cleaning up after its program).
pub(crate) fn kill_descendants(ancestor: Pid) {
    let me = ancestor.as_raw_pid();
    freeze_then_kill(|| {
        tree_and_group_of(me, false, &Known::default(), &snapshot())
            .into_keys()
            .filter(|pid| *pid != me)
            .collect()
    });
}

/// The live members of process group `group`, from one `/proc` snapshot.
pub(crate) fn group_members(group: Pid) -> Vec<Pid> {
    let raw = group.as_raw_pid();
    snapshot()
        .iter()
        .filter(|row| row.pgrp == raw)
        .filter_map(|row| Pid::from_raw(row.pid))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_comm() {
        let stat = "42 (a (weird) name) S 7 42 7 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987 1 2";
        let row = parse_stat(stat).map(|r| (r.pid, r.ppid, r.pgrp, r.start));
        assert_eq!(row, Some((42, 7, 42, 987)));
    }

    fn row(pid: i32, ppid: i32, pgrp: i32) -> ProcRow {
        ProcRow {
            pid,
            ppid,
            pgrp,
            start: 100,
        }
    }

    #[test]
    fn tree_follows_children_group_and_known() {
        let rows = [
            row(10, 1, 10),
            row(11, 10, 10),
            row(12, 11, 12), // left the group, still a descendant
            row(13, 12, 12),
            row(14, 1, 10), // reparented, still in the group
            row(15, 14, 15),
            row(20, 1, 20), // unrelated
            row(30, 1, 30), // known from an earlier survey: its parent died
            row(31, 30, 30),
            ProcRow {
                pid: 40,
                ppid: 1,
                pgrp: 40,
                start: 999,
            }, // pid reused: not the known one
        ];
        let known = Known([(30, 100), (40, 100)].into_iter().collect());
        let found: Vec<i32> = tree_and_group(10, &known, &rows).into_keys().collect();
        assert_eq!(found, vec![10, 11, 12, 13, 14, 15, 30, 31]);
    }
}
