//! The crate's one error enum (the provider's), and how it becomes the seam's
//! [`subagent_core::Error`]. (The wire's [`crate::rpc::RpcError`] is a JSON-RPC error object,
//! not an error of this crate.)

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong building an `a2a` provider or starting a run on it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The row's config is invalid. Returned by the factory's `build`; becomes
    /// `INVALID_ARGUMENTS`. Retrying does not help until the config is fixed.
    #[error("invalid a2a provider config: {0}")]
    Config(String),
    /// The agent could not be reached, or answered with something that is not A2A (a card
    /// that does not read, an HTTP error). Returned by `build` (the card) and `start`; becomes
    /// `SPAWN_FAILED`. Retrying helps once the agent is up.
    #[error("a2a agent at {url}: {message}")]
    Unreachable {
        /// What was asked.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The agent refused the token (HTTP 401). Returned by `build` and `start`; becomes
    /// `UNAUTHORIZED`. Retrying does not help until the token is right.
    #[error("a2a agent at {url} refused the token (HTTP 401): check the row's token_env")]
    Unauthorized {
        /// What was asked.
        url: String,
    },
    /// The agent did what this provider refuses: a redirect to another host, a card or an
    /// answer past the row's bound (`limits`), an answer of the wrong content type. Returned by
    /// `build` (the card) and `start`; becomes `PROTOCOL`. Retrying does not help: the agent,
    /// or the row's `url` or `limits`, must change.
    #[error("a2a agent at {url}: {message}")]
    Refused {
        /// What was asked.
        url: String,
        /// What was refused.
        message: String,
    },
    /// The agent's card offers nothing this provider can use (no JSON-RPC 1.x interface, no
    /// streaming, no such skill). Returned by `build`; becomes `INVALID_ARGUMENTS`.
    #[error("a2a agent at {url}: {message}")]
    Card {
        /// The card's URL.
        url: String,
        /// What is missing.
        message: String,
    },
}

impl Error {
    /// A config error.
    pub fn config(message: impl Into<String>) -> Self {
        Self::Config(message.into())
    }
}

impl From<Error> for subagent_core::Error {
    fn from(error: Error) -> Self {
        match error {
            Error::Config(_) | Error::Card { .. } => Self::invalid(error.to_string()),
            Error::Unreachable { .. } => Self::spawn_failed(error.to_string()),
            Error::Refused { .. } => Self::protocol(error.to_string()),
            Error::Unauthorized { .. } => Self::Unauthorized {
                message: error.to_string(),
            },
        }
    }
}
