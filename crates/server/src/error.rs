//! The server's errors (serving, not requests: a request's errors are JSON-RPC errors).

/// `Result` with the server's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What stops `subagent serve` from serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listening socket failed. Returned by `Server::serve`; retrying helps only if the
    /// cause (a port in use, a closed socket) went away.
    #[error("serving on {addr}: {source}")]
    Io {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
}
