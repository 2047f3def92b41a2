//! The crate's one error type.

use std::path::PathBuf;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong owning a child process.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The program was not found. Returned by [`crate::ProcessSpec::spawn`]; retrying helps only
    /// once the program is installed. `searched` lists the directories of `PATH` that were
    /// looked in (empty when the program was given as a path).
    #[error("{}", not_found_message(program, searched))]
    NotFound {
        /// The program as configured.
        program: PathBuf,
        /// The `PATH` directories searched, for a bare name.
        searched: Vec<PathBuf>,
    },
    /// The program exists but is not an executable file. Returned by `spawn`.
    #[error("{} is not an executable file", program.display())]
    NotExecutable {
        /// The path found.
        program: PathBuf,
    },
    /// The working directory is missing, not a directory, or not absolute. Returned by `spawn`;
    /// a relative or empty cwd is refused so that a child never runs in the process cwd by
    /// accident.
    #[error("working directory {}: {reason}", cwd.display())]
    InvalidCwd {
        /// The directory given.
        cwd: PathBuf,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The operating system refused to start the child. Returned by `spawn`.
    #[error("could not start {}: {source}", program.display())]
    Spawn {
        /// The resolved program.
        program: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A stdout line exceeded the configured bound without a newline. Returned by
    /// [`crate::Process::next_line`]; the process is being stopped. Retrying the same child
    /// does not help: its output is not line-delimited as expected.
    #[error("a line of the child's output exceeded {limit} bytes without a newline")]
    LineTooLong {
        /// The bound in bytes.
        limit: usize,
    },
    /// Reading from or writing to the child failed. Returned by `next_line`, `wait` and
    /// `write_line`.
    #[error("i/o with the child failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Whose fault a failure to start a child is, so that every provider gives the same failure the
/// same error code: [`Error::blame`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Blame {
    /// The request asked for something that cannot be (a working directory that is not an
    /// absolute, existing directory): the seam's `INVALID_ARGUMENTS`. Retrying the same request
    /// does not help.
    Request,
    /// The child could not be started (program missing or not executable, the OS refused): the
    /// seam's `SPAWN_FAILED`. Retrying helps once the installation is fixed.
    Start,
}

impl Error {
    /// Whose fault this failure is (see [`Blame`]).
    pub fn blame(&self) -> Blame {
        match self {
            Self::InvalidCwd { .. } => Blame::Request,
            _ => Blame::Start,
        }
    }

    /// The one text every provider shows when `product`'s CLI cannot be started: for a missing
    /// program what was tried and `install_hint`, otherwise what went wrong.
    pub fn start_failure(&self, product: &str, install_hint: &str) -> String {
        match self {
            Self::NotFound { program, searched } => {
                let tried = if searched.is_empty() {
                    format!("tried {}", program.display())
                } else {
                    let dirs = searched
                        .iter()
                        .map(|dir| dir.display().to_string())
                        .collect::<Vec<_>>()
                        .join(":");
                    format!("tried `{}` on PATH {dirs}", program.display())
                };
                format!("the {product} CLI was not found ({tried}); {install_hint}")
            }
            Self::InvalidCwd { .. } => self.to_string(),
            other => format!("could not start {product}: {other}"),
        }
    }
}

fn not_found_message(program: &std::path::Path, searched: &[PathBuf]) -> String {
    if searched.is_empty() {
        format!("{} was not found", program.display())
    } else {
        let dirs = searched
            .iter()
            .map(|dir| dir.display().to_string())
            .collect::<Vec<_>>()
            .join(":");
        format!(
            "{} was not found on PATH (searched {dirs})",
            program.display()
        )
    }
}
