//! The `subagent` binary run as a user runs it, for the CLI's tests (ripgrep's `tests/util.rs`
//! is the model): its environment cleared but for `PATH`, `HOME` (also the working directory)
//! in a temp dir, the keys and the preset a test names, then run to its output or spawned.
//!
//! It takes the binary's path (`assert_cmd::cargo::cargo_bin("subagent")` or
//! `env!("CARGO_BIN_EXE_subagent")` in the caller), so this crate never depends on the CLI.

use std::ffi::OsStr;
use std::io::Write as _;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// The key variable the fake presets name (`api_key_env: FAKE_KEY`) and its value.
pub const FAKE_KEY: (&str, &str) = ("FAKE_KEY", "test-key");

/// A `subagent` command line being built.
#[derive(Debug)]
pub struct Subagent {
    command: Command,
    stdin: Option<Vec<u8>>,
}

impl Subagent {
    /// `binary` with a clean, offline environment: only `PATH` kept, `HOME` and the working
    /// directory `home`, stdin empty.
    pub fn new(binary: impl AsRef<OsStr>, home: &Path) -> Self {
        let mut command = Command::new(binary);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home)
            .current_dir(home)
            .stdin(Stdio::null());
        Self {
            command,
            stdin: None,
        }
    }

    /// Sets the variable `name` (a key, or anything else the run reads).
    #[must_use]
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.command.env(name, value);
        self
    }

    /// Sets [`FAKE_KEY`], the key of the fake presets.
    #[must_use]
    pub fn fake_key(self) -> Self {
        self.env(FAKE_KEY.0, FAKE_KEY.1)
    }

    /// Runs in `dir` instead of `HOME`.
    #[must_use]
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// One more argument.
    #[must_use]
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    /// More arguments.
    #[must_use]
    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.command.args(args);
        self
    }

    /// `--preset PATH`.
    #[must_use]
    pub fn preset(self, path: impl AsRef<OsStr>) -> Self {
        self.arg("--preset").arg(path)
    }

    /// `bytes` on stdin (then closed).
    #[must_use]
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// The command as built (stdin empty unless [`Self::stdin`] was given, which only
    /// [`Self::output`] writes), for a caller that drives it itself (e.g. through
    /// `tokio::process::Command::from`).
    #[must_use]
    pub fn command(self) -> Command {
        self.command
    }

    /// Runs to the end; its output.
    ///
    /// # Panics
    /// When the binary cannot be started.
    pub fn output(mut self) -> Output {
        let Some(input) = self.stdin.take() else {
            return self
                .command
                .output()
                .unwrap_or_else(|e| panic!("running subagent: {e}"));
        };
        self.command.stdin(Stdio::piped());
        let mut child = self.spawn();
        let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        // A run that exits before reading all of it is no failure of the harness.
        let _ = stdin.write_all(&input);
        drop(stdin);
        child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("waiting for subagent: {e}"))
    }

    /// Starts it, stdout and stderr piped (stdin piped when [`Self::stdin`] was given, then
    /// left to the caller to write).
    ///
    /// # Panics
    /// When the binary cannot be started.
    pub fn spawn(mut self) -> Child {
        if self.stdin.is_some() {
            self.command.stdin(Stdio::piped());
        }
        self.command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting subagent: {e}"))
    }
}
