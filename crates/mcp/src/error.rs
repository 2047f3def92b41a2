//! The crate's one error type.

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What stops [`McpServer::serve`](crate::McpServer::serve). A call's own failures are never
/// errors: they are tool results with `isError` and a stable code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The client closed its input or sent something else before completing `initialize`.
    /// Returned by `serve`; retrying helps only with a client that speaks MCP.
    #[error("the MCP client did not complete the initialize handshake: {message}")]
    Handshake {
        /// What went wrong, as the SDK says it.
        message: String,
    },
}

impl Error {
    /// The stable code: a broken handshake is the peer breaking the protocol.
    pub fn code(&self) -> subagent_core::ErrorCode {
        match self {
            Self::Handshake { .. } => subagent_core::ErrorCode::Protocol,
        }
    }
}
