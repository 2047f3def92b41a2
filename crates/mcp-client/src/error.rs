//! The crate's errors and their stable codes.

/// What went wrong, as a stable code ([`ErrorCode::as_str`]): the model reads it in a tool error
/// (`error[MCP_TIMEOUT]: …`), the CLI prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// A server configuration that cannot be used: a file that does not parse, a server without
    /// a command or URL, a `${VAR}` that is not set and has no default.
    ConfigInvalid,
    /// A server that could not be started or did not finish the MCP handshake.
    StartFailed,
    /// A server that exited (or closed its output) while it was needed.
    ServerExited,
    /// A call that took longer than its timeout (the server is told to cancel it).
    Timeout,
    /// A server that answered something MCP does not allow, or an error for the call.
    Protocol,
    /// A call cancelled with its run (the server is told).
    Cancelled,
    /// A transport we cannot connect over (only stdio servers are connected for now).
    UnsupportedTransport,
}

impl ErrorCode {
    /// The code as the CLI and the model see it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ConfigInvalid => "MCP_CONFIG_INVALID",
            Self::StartFailed => "MCP_SERVER_FAILED",
            Self::ServerExited => "MCP_SERVER_EXITED",
            Self::Timeout => "MCP_TIMEOUT",
            Self::Protocol => "MCP_PROTOCOL_ERROR",
            Self::Cancelled => "MCP_CALL_CANCELLED",
            Self::UnsupportedTransport => "MCP_UNSUPPORTED_TRANSPORT",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error of this crate: a code and what to tell a person (the server's name, the file, what
/// to do).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// The stable code.
    pub code: ErrorCode,
    /// The sentence for people.
    pub message: String,
}

impl Error {
    /// An error with `code` saying `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// A configuration error of the file `path`.
    pub(crate) fn config(path: &std::path::Path, message: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorCode::ConfigInvalid,
            format!("{}: {message}", path.display()),
        )
    }
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
