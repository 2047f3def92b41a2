//! The crate's one error type.

use std::path::PathBuf;

use crate::Location;

/// What can go wrong reading one definition. The loader never returns these: it turns each into
/// a [`Warning`](crate::Warning) and keeps loading the other files. They are returned by the
/// single-file functions ([`parse_definition`](crate::parse_definition),
/// [`load_file`](crate::load_file)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read (missing, unreadable, not UTF-8, over
    /// [`MAX_FILE_BYTES`](crate::MAX_FILE_BYTES), or not a regular file: a FIFO or a device,
    /// also behind a symlink, is refused without being read). Returned by
    /// [`load_file`](crate::load_file); retrying helps only once the file is fixed.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// The file is not a valid definition: no frontmatter, YAML that does not parse, or a known
    /// field with a value of the wrong shape (`maxTurns: many`, `permissionMode: yolo`).
    /// Returned by [`parse_definition`](crate::parse_definition); never helped by retrying.
    #[error("{}{location}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Where in the file (1-based line and column; unknown parts are omitted).
        location: Location,
        /// What is wrong, for a person.
        message: String,
    },
    /// Definitions given on the command line (`--agents '<json>'`) are not valid: not a JSON
    /// object of agent names, or a known field with a value of the wrong shape. Returned by
    /// [`parse_agents_json`](crate::parse_agents_json); never helped by retrying.
    #[error("{option}: {message}")]
    CommandLine {
        /// The option (`--agents`).
        option: String,
        /// What is wrong, for a person.
        message: String,
    },
}

impl Error {
    /// The file the error is about (for [`Error::CommandLine`], the option's name).
    pub fn path(&self) -> &std::path::Path {
        match self {
            Self::Io { path, .. } | Self::Invalid { path, .. } => path,
            Self::CommandLine { option, .. } => std::path::Path::new(option.as_str()),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
