//! The one scan of `/proc` tests use to find the processes a run started or left behind.

use std::path::{Path, PathBuf};

/// One process as `/proc` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    /// Its pid.
    pub pid: u32,
    /// Its state letter (`R`, `S`, `Z`, …).
    pub state: char,
    /// Its process group.
    pub pgid: i32,
    /// Its command line, arguments joined by spaces.
    pub cmdline: String,
}

impl Proc {
    /// Whether it still runs: neither a zombie nor dead.
    #[must_use]
    pub fn live(&self) -> bool {
        self.state != 'Z' && self.state != 'X'
    }

    /// Its working directory, when it can be read.
    #[must_use]
    pub fn cwd(&self) -> Option<PathBuf> {
        std::fs::read_link(format!("/proc/{}/cwd", self.pid)).ok()
    }

    /// Whether its working directory is `dir` or below it.
    #[must_use]
    pub fn runs_in(&self, dir: &Path) -> bool {
        self.cwd().is_some_and(|cwd| cwd.starts_with(dir))
    }

    /// `PID: CMDLINE`, for a failure message.
    #[must_use]
    pub fn line(&self) -> String {
        format!("{}: {}", self.pid, self.cmdline)
    }
}

/// Every process `/proc` lists now, zombies included, this process included (a process that
/// ends while it is read is left out).
#[must_use]
pub fn all() -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| read(entry.file_name().to_str()?.parse::<u32>().ok()?))
        .collect()
}

/// The process `pid`, when `/proc` still lists it (a zombie included).
#[must_use]
pub fn read(pid: u32) -> Option<Proc> {
    let dir = PathBuf::from(format!("/proc/{pid}"));
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    // The state follows the `(comm)` field, which may itself hold spaces or parens.
    let (_, tail) = stat.rsplit_once(')')?;
    let mut fields = tail.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgid = fields.nth(1)?.parse().ok()?;
    let cmdline = std::fs::read(dir.join("cmdline")).ok()?;
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    Some(Proc {
        pid,
        state,
        pgid,
        cmdline,
    })
}

/// Whether the process `pid` is gone: not listed, a zombie or dead.
#[must_use]
pub fn gone(pid: u32) -> bool {
    !read(pid).is_some_and(|p| p.live())
}

/// The live processes other than this one.
#[must_use]
pub fn live() -> Vec<Proc> {
    all()
        .into_iter()
        .filter(|p| p.live() && p.pid != std::process::id())
        .collect()
}

/// The live processes (other than this one) whose command line contains `needle`.
#[must_use]
pub fn live_with(needle: &str) -> Vec<Proc> {
    live()
        .into_iter()
        .filter(|p| p.cmdline.contains(needle))
        .collect()
}

/// [`live_with`] as `PID: CMDLINE` lines, for an assert that shows what was left.
#[must_use]
pub fn live_lines_with(needle: &str) -> Vec<String> {
    live_with(needle).iter().map(Proc::line).collect()
}

/// Makes a FIFO at `path` (`mkfifo`): a test's gate on what a child process has done.
///
/// # Panics
/// When `mkfifo` cannot run or fails.
pub fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap_or_else(|e| panic!("mkfifo {}: {e}", path.display()));
    assert!(status.success(), "mkfifo {}: {status}", path.display());
}

/// What a child wrote to the FIFO `fifo`, read on a blocking thread: opening the FIFO waits
/// until the child opens it to write, a gate, not a sleep.
///
/// # Panics
/// When the FIFO cannot be read.
pub async fn text_from(fifo: PathBuf) -> String {
    tokio::task::spawn_blocking(move || {
        use std::io::Read as _;
        let mut text = String::new();
        std::fs::File::open(&fifo)
            .and_then(|mut file| file.read_to_string(&mut text))
            .unwrap_or_else(|e| panic!("reading {}: {e}", fifo.display()));
        text
    })
    .await
    .unwrap_or_else(|e| panic!("the FIFO's reader: {e}"))
}

/// The pids a child wrote to the FIFO `fifo` (whitespace between them), read as
/// [`text_from`] reads.
///
/// # Panics
/// When the FIFO cannot be read or holds something other than pids.
pub async fn pids_from(fifo: PathBuf) -> Vec<u32> {
    text_from(fifo)
        .await
        .split_whitespace()
        .map(|p| p.parse().unwrap_or_else(|e| panic!("a pid {p:?}: {e}")))
        .collect()
}

/// The first line `child` prints on its piped stdout (without the newline): a child that says
/// where it listens before it serves.
///
/// # Panics
/// When the child's stdout is not piped, was taken already, or cannot be read.
pub fn first_line(child: &mut std::process::Child) -> String {
    use std::io::BufRead as _;
    let stdout = child
        .stdout
        .take()
        .unwrap_or_else(|| panic!("the child's stdout is not piped or was taken"));
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap_or_else(|e| panic!("reading the child's first line: {e}"));
    line.trim_end().to_owned()
}
