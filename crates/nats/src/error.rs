//! The crate's one error enum, and how it becomes the seam's [`subagent_core::Error`].

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong building a `nats` provider, starting a run on it, or running a worker.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The row's config (or the worker's options) is invalid. Returned by the factory's `build`
    /// and `Worker::new`; becomes `INVALID_ARGUMENTS`. Retrying does not help until it is fixed.
    #[error("invalid nats config: {0}")]
    Config(String),
    /// The server could not be reached, or a JetStream call failed (no JetStream, a stream
    /// that cannot be made, a publish without an ack). Returned by `build`, `start` and the
    /// worker; becomes `SPAWN_FAILED`. Retrying helps once the server is up.
    #[error("nats server at {url}: {message}")]
    Unreachable {
        /// The server's URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The server refused the credentials. Returned by `build` and the worker; becomes
    /// `UNAUTHORIZED`. Retrying does not help until the credentials are right.
    #[error(
        "nats server at {url} refused the credentials: check the row's token_env (or user_env/password_env)"
    )]
    Unauthorized {
        /// The server's URL.
        url: String,
    },
    /// The TLS handshake failed: the server's certificate is not trusted (no `tls.ca_file`
    /// naming its CA), the server refused the client's certificate or asked for one, or a TLS
    /// file does not read. Returned by `build` and the worker; becomes `UNAUTHORIZED`.
    /// Retrying does not help until the TLS files are right.
    #[error("nats server at {url}: TLS failed ({message}): check the row's tls files")]
    Tls {
        /// The server's URL.
        url: String,
        /// What the TLS layer said.
        message: String,
    },
    /// No live worker announces the row. Returned by `build` (the capability table is read from
    /// the workers' announcements, which go when their worker stops or is lost); becomes
    /// `SPAWN_FAILED`. Retrying helps once a worker serving the row runs.
    #[error(
        "no live worker announces row {row:?} on the nats server at {url} (start `subagent worker` with a preset that has it)"
    )]
    NoWorker {
        /// The server's URL.
        url: String,
        /// The row asked for.
        row: String,
    },
}

impl Error {
    /// A config error.
    pub fn config(message: impl Into<String>) -> Self {
        Self::Config(message.into())
    }

    /// A failed call to the server at `url`.
    pub(crate) fn unreachable(url: &str, message: impl std::fmt::Display) -> Self {
        Self::Unreachable {
            url: url.to_owned(),
            message: message.to_string(),
        }
    }
}

impl From<Error> for subagent_core::Error {
    fn from(error: Error) -> Self {
        match error {
            Error::Config(_) => Self::invalid(error.to_string()),
            Error::Unreachable { .. } | Error::NoWorker { .. } => {
                Self::spawn_failed(error.to_string())
            }
            Error::Unauthorized { .. } | Error::Tls { .. } => Self::Unauthorized {
                message: error.to_string(),
            },
        }
    }
}
