//! A peer process of a test (an agent or a server on 127.0.0.1, started from the command line)
//! that says where it listens on the first line of its stdout. It is killed and reaped when
//! dropped, so a failing test leaves none behind.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

/// A started peer and the first line it printed.
#[derive(Debug)]
pub struct Peer {
    child: Child,
    first_line: String,
}

impl Peer {
    /// Starts `command` (stdin empty, stdout piped, stderr to `stderr`) and reads its first line
    /// of stdout (the rest stays unread in the pipe).
    ///
    /// # Panics
    /// When it cannot start or its stdout cannot be read.
    pub fn start(command: &mut Command, stderr: Stdio) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {command:?}: {e}"));
        let stdout = child
            .stdout
            .take()
            .unwrap_or_else(|| panic!("no stdout of {command:?}"));
        let mut first_line = String::new();
        BufReader::new(stdout)
            .read_line(&mut first_line)
            .unwrap_or_else(|e| panic!("reading {command:?}: {e}"));
        Self { child, first_line }
    }

    /// The first line it printed, without its line end.
    pub fn first_line(&self) -> &str {
        self.first_line.trim_end()
    }

    /// The process.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
