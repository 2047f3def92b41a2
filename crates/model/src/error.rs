//! The error type of model calls, its stable codes ([`ErrorCode`], `core`'s text where one fits)
//! and its stop reasons.

use std::time::Duration;

use subagent_session::StopReason;

/// Which wait ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutKind {
    /// Connecting to the server.
    Connect,
    /// Waiting for the answer to start (headers and its first event; keep-alives do not count).
    FirstByte,
    /// Waiting for the next event of an answer that has started (keep-alives do not count).
    Idle,
    /// The whole request, retries included, took longer than its overall limit.
    Total,
}

impl std::fmt::Display for TimeoutKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Connect => "connect",
            Self::FirstByte => "first byte",
            Self::Idle => "idle",
            Self::Total => "overall",
        })
    }
}

/// The longest message a server's error keeps, in bytes (cut on a character boundary).
pub const MAX_SERVER_MESSAGE: usize = 2000;

/// The stable, SCREAMING_SNAKE code of an [`Error`] ([`Error::code`]), shown to CLI users and
/// callers. Where `core` has a code for the same thing (`subagent_core::ErrorCode`), this one
/// renders the same text; the others are `MODEL_*`. Codes never change meaning once shipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `UNAUTHORIZED`: [`Error::Auth`].
    Unauthorized,
    /// `MODEL_RATE_LIMITED`: [`Error::RateLimited`].
    ModelRateLimited,
    /// `MODEL_OVERLOADED`: [`Error::Overloaded`].
    ModelOverloaded,
    /// `MODEL_BAD_REQUEST`: [`Error::BadRequest`] and [`Error::Unscripted`].
    ModelBadRequest,
    /// `MODEL_CONTEXT_TOO_LONG`: [`Error::ContextTooLong`].
    ModelContextTooLong,
    /// `MODEL_NETWORK`: [`Error::Network`].
    ModelNetwork,
    /// `PROTOCOL`: [`Error::Protocol`].
    Protocol,
    /// `MODEL_TIMEOUT`: [`Error::Timeout`].
    ModelTimeout,
    /// `ANSWER_TOO_LARGE`: [`Error::AnswerTooLarge`].
    AnswerTooLarge,
    /// `CANCELLED`: [`Error::Cancelled`].
    Cancelled,
    /// `INVALID_ARGUMENTS`: [`Error::Config`].
    InvalidArguments,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 11] = [
        Self::Unauthorized,
        Self::ModelRateLimited,
        Self::ModelOverloaded,
        Self::ModelBadRequest,
        Self::ModelContextTooLong,
        Self::ModelNetwork,
        Self::Protocol,
        Self::ModelTimeout,
        Self::AnswerTooLarge,
        Self::Cancelled,
        Self::InvalidArguments,
    ];

    /// The code as text: the one way it is rendered ([`Display`](std::fmt::Display) writes
    /// this).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unauthorized => "UNAUTHORIZED",
            Self::ModelRateLimited => "MODEL_RATE_LIMITED",
            Self::ModelOverloaded => "MODEL_OVERLOADED",
            Self::ModelBadRequest => "MODEL_BAD_REQUEST",
            Self::ModelContextTooLong => "MODEL_CONTEXT_TOO_LONG",
            Self::ModelNetwork => "MODEL_NETWORK",
            Self::Protocol => "PROTOCOL",
            Self::ModelTimeout => "MODEL_TIMEOUT",
            Self::AnswerTooLarge => "ANSWER_TOO_LARGE",
            Self::Cancelled => "CANCELLED",
            Self::InvalidArguments => "INVALID_ARGUMENTS",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Errors of model calls. Messages never contain the API key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server refused the credentials (401/403), or the configured key variable is not set.
    /// Returned by every client and by [`crate::build`]; retrying does not help.
    #[error("model authentication failed: {message}")]
    Auth {
        /// What the server (or the configuration check) said.
        message: String,
    },
    /// The server is rate limiting us (429). Retried automatically before the first byte;
    /// retrying later can help.
    #[error("model rate limited: {message}")]
    RateLimited {
        /// What the server said.
        message: String,
        /// The server's `retry-after`, if any.
        retry_after: Option<Duration>,
    },
    /// The server is overloaded or failing (5xx, Anthropic `overloaded_error`). Retried
    /// automatically before the first byte; retrying later can help.
    #[error("model server unavailable ({status}): {message}")]
    Overloaded {
        /// HTTP status (0 when reported inside the stream).
        status: u16,
        /// What the server said.
        message: String,
    },
    /// The server rejected the request (4xx other than auth, rate limit and context length):
    /// unknown model, malformed request. Retrying the same request does not help.
    #[error("model request rejected ({status}): {message}")]
    BadRequest {
        /// HTTP status (0 when reported inside the stream).
        status: u16,
        /// The server's message.
        message: String,
    },
    /// The conversation does not fit the model's context window. Retrying the same request
    /// does not help; compacting the conversation does.
    #[error("model context too long: {message}")]
    ContextTooLong {
        /// The server's message.
        message: String,
    },
    /// The connection failed or broke (refused, reset, cut mid-stream). Retried automatically
    /// before the first byte only; a stream cut midway is not retried.
    #[error("model network error: {message}")]
    Network {
        /// What failed.
        message: String,
    },
    /// The server's answer is not the protocol (malformed SSE or JSON, a stream that ends
    /// without its final event). Retrying rarely helps.
    #[error("model protocol error: {message}")]
    Protocol {
        /// What was wrong.
        message: String,
    },
    /// A configured timeout ran out. Retrying may help.
    #[error("model {kind} timeout after {after:?}")]
    Timeout {
        /// Which wait.
        kind: TimeoutKind,
        /// The configured limit.
        after: Duration,
    },
    /// The answer grew past the configured cap on its bytes (text, thinking and tool calls
    /// together: [`crate::ModelConfig::max_answer_bytes`]); the stream was stopped there and the
    /// response dropped. Returned in the stream by every model built from a configuration;
    /// retrying the same request likely does not help, asking for a shorter answer or raising
    /// the cap does.
    #[error(
        "model answer too large: it passed {limit} bytes of text, thinking and tool calls (max_answer_bytes); the stream was stopped"
    )]
    AnswerTooLarge {
        /// The cap, in bytes.
        limit: u64,
    },
    /// The caller cancelled the call. Not an error of the model; do not retry.
    #[error("model call cancelled")]
    Cancelled,
    /// The scripted model's scenarios have no answer for this conversation (no scenario matches
    /// the prompt, or the matched one has no step for this turn); the message says so in a
    /// user's words. Returned by [`crate::ScriptedModel`]; retrying does not help.
    #[error("{message}")]
    Unscripted {
        /// What has no answer, and what to do.
        message: String,
    },
    /// The configuration is invalid (unknown scenario file, bad base URL). Returned by
    /// [`crate::build`]; retrying does not help.
    #[error("invalid model configuration: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// The stable code: `core`'s where one fits (`UNAUTHORIZED`, `PROTOCOL`, `CANCELLED`,
    /// `INVALID_ARGUMENTS`, `ANSWER_TOO_LARGE`), otherwise a `MODEL_*` code ([`ErrorCode`]).
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Auth { .. } => ErrorCode::Unauthorized,
            Self::RateLimited { .. } => ErrorCode::ModelRateLimited,
            Self::Overloaded { .. } => ErrorCode::ModelOverloaded,
            Self::BadRequest { .. } | Self::Unscripted { .. } => ErrorCode::ModelBadRequest,
            Self::ContextTooLong { .. } => ErrorCode::ModelContextTooLong,
            Self::Network { .. } => ErrorCode::ModelNetwork,
            Self::Protocol { .. } => ErrorCode::Protocol,
            Self::Timeout { .. } => ErrorCode::ModelTimeout,
            Self::AnswerTooLarge { .. } => ErrorCode::AnswerTooLarge,
            Self::Cancelled => ErrorCode::Cancelled,
            Self::Config { .. } => ErrorCode::InvalidArguments,
        }
    }

    /// How a run that hit this error ends: `Cancelled` for a cancel, `Failed` otherwise.
    pub fn stop_reason(&self) -> StopReason {
        match self {
            Self::Cancelled => StopReason::Cancelled,
            _ => StopReason::Failed,
        }
    }

    /// Whether the error may be retried before the first streamed byte (429, 5xx, connect
    /// failures).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. } | Self::Overloaded { .. } | Self::Network { .. }
        )
    }

    pub(crate) fn protocol(message: impl Into<String>) -> Self {
        Self::Protocol {
            message: message.into(),
        }
    }

    pub(crate) fn network(message: impl Into<String>) -> Self {
        Self::Network {
            message: message.into(),
        }
    }

    /// Classifies an error the server reported, by HTTP status (0 inside a stream), the
    /// provider's error type or code, and its message (cut to [`MAX_SERVER_MESSAGE`] bytes).
    pub fn from_server(
        status: u16,
        kind: &str,
        message: impl Into<String>,
        retry_after: Option<Duration>,
    ) -> Self {
        let mut message = message.into();
        if message.len() > MAX_SERVER_MESSAGE {
            message.truncate(message.floor_char_boundary(MAX_SERVER_MESSAGE));
        }
        let lower_kind = kind.to_ascii_lowercase();
        let lower = message.to_ascii_lowercase();
        let context = lower_kind.contains("context_length")
            || lower.contains("prompt is too long")
            || lower.contains("context length")
            || lower.contains("context window")
            || lower.contains("maximum context");
        if status == 401
            || status == 403
            || lower_kind.contains("authentication")
            || lower_kind.contains("permission")
            || lower_kind == "invalid_api_key"
        {
            Self::Auth { message }
        } else if status == 429 || lower_kind.contains("rate_limit") {
            Self::RateLimited {
                message,
                retry_after,
            }
        } else if context {
            Self::ContextTooLong { message }
        } else if status >= 500
            || lower_kind.contains("overloaded")
            || lower_kind.contains("server_error")
            || lower_kind == "api_error"
        {
            Self::Overloaded { status, message }
        } else {
            Self::BadRequest { status, message }
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        assert_eq!(
            Error::from_server(401, "", "x", None).code(),
            ErrorCode::Unauthorized
        );
        assert_eq!(
            Error::from_server(429, "", "x", None).code(),
            ErrorCode::ModelRateLimited
        );
        assert_eq!(
            Error::from_server(529, "overloaded_error", "x", None).code(),
            ErrorCode::ModelOverloaded
        );
        assert_eq!(
            Error::from_server(
                400,
                "invalid_request_error",
                "prompt is too long: 1 > 2",
                None
            )
            .code(),
            ErrorCode::ModelContextTooLong
        );
        assert_eq!(
            Error::from_server(400, "context_length_exceeded", "", None).code(),
            ErrorCode::ModelContextTooLong
        );
        assert_eq!(
            Error::from_server(404, "not_found_error", "no model", None).code(),
            ErrorCode::ModelBadRequest
        );
        assert_eq!(Error::Cancelled.stop_reason(), StopReason::Cancelled);
        assert_eq!(Error::protocol("x").stop_reason(), StopReason::Failed);
    }
}
