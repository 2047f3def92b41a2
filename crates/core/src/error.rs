//! The one error type of the seam, with stable codes.

use serde::{Deserialize, Serialize};

use crate::Capability;

/// `Result` with the seam's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The stable, SCREAMING_SNAKE code of an [`Error`], used in CLI JSON output, tool results and the
/// remote protocol. Codes never change meaning once shipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ErrorCode {
    /// See [`Error::UnknownProvider`].
    UnknownProvider,
    /// See [`Error::DuplicateProvider`].
    DuplicateProvider,
    /// See [`Error::UnsupportedCapability`].
    UnsupportedCapability,
    /// See [`Error::DepthExceeded`].
    DepthExceeded,
    /// See [`Error::NestedDelegationForbidden`].
    NestedDelegationForbidden,
    /// See [`Error::UnknownAgentType`].
    UnknownAgentType,
    /// See [`Error::UnknownSkill`].
    UnknownSkill,
    /// See [`Error::InvalidArguments`].
    InvalidArguments,
    /// See [`Error::SpawnFailed`].
    SpawnFailed,
    /// See [`Error::Cancelled`].
    Cancelled,
    /// See [`Error::Unauthorized`].
    Unauthorized,
    /// See [`Error::NotResumable`].
    NotResumable,
    /// See [`Error::Protocol`].
    Protocol,
    /// See [`Error::AgentTypeNotAllowed`].
    AgentTypeNotAllowed,
    /// See [`Error::MissingApiKey`].
    MissingApiKey,
    /// See [`Error::AnswerTooLarge`].
    AnswerTooLarge,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 16] = [
        Self::UnknownProvider,
        Self::DuplicateProvider,
        Self::UnsupportedCapability,
        Self::DepthExceeded,
        Self::NestedDelegationForbidden,
        Self::UnknownAgentType,
        Self::UnknownSkill,
        Self::InvalidArguments,
        Self::SpawnFailed,
        Self::Cancelled,
        Self::Unauthorized,
        Self::NotResumable,
        Self::Protocol,
        Self::AgentTypeNotAllowed,
        Self::MissingApiKey,
        Self::AnswerTooLarge,
    ];

    /// The code as text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownProvider => "UNKNOWN_PROVIDER",
            Self::DuplicateProvider => "DUPLICATE_PROVIDER",
            Self::UnsupportedCapability => "UNSUPPORTED_CAPABILITY",
            Self::DepthExceeded => "DEPTH_EXCEEDED",
            Self::NestedDelegationForbidden => "NESTED_DELEGATION_FORBIDDEN",
            Self::UnknownAgentType => "UNKNOWN_AGENT_TYPE",
            Self::UnknownSkill => "UNKNOWN_SKILL",
            Self::InvalidArguments => "INVALID_ARGUMENTS",
            Self::SpawnFailed => "SPAWN_FAILED",
            Self::Cancelled => "CANCELLED",
            Self::Unauthorized => "UNAUTHORIZED",
            Self::NotResumable => "NOT_RESUMABLE",
            Self::Protocol => "PROTOCOL",
            Self::AgentTypeNotAllowed => "AGENT_TYPE_NOT_ALLOWED",
            Self::MissingApiKey => "MISSING_API_KEY",
            Self::AnswerTooLarge => "ANSWER_TOO_LARGE",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn join<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(|item| format!("\"{item}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Everything that can refuse or break a delegation before its child exists.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No provider has that name. Returned by `Registry::start`; retrying does not help, pick
    /// one of `known`.
    #[error("no subagent provider named \"{name}\" (known: {})", if known.is_empty() { "none".to_owned() } else { join(known) })]
    UnknownProvider {
        /// The name asked for.
        name: String,
        /// Registered names, in registration order.
        known: Vec<String>,
    },
    /// A provider of that name is already registered. Returned by `Registry::register`.
    #[error("a subagent provider named \"{name}\" is already registered")]
    DuplicateProvider {
        /// The name.
        name: String,
    },
    /// The request needs capabilities the provider does not declare. Returned by
    /// `Registry::start` before anything starts; retrying the same request does not help.
    #[error("subagent provider \"{provider}\" does not support {}: {}{}", if missing.len() == 1 { "the capability" } else { "the capabilities" }, join(missing), because.as_deref().map(|why| format!(" ({why})")).unwrap_or_default())]
    UnsupportedCapability {
        /// The provider.
        provider: String,
        /// Every missing capability, in table order.
        missing: Vec<Capability>,
        /// Why, where the provider says ([`SubagentProvider::capability_reason`](crate::SubagentProvider::capability_reason)).
        because: Option<String>,
    },
    /// The child would run deeper than allowed. Returned by `Registry::start`.
    #[error("subagent depth {child_depth} exceeds max_depth {max_depth}")]
    DepthExceeded {
        /// Depth the child would have (parent depth + 1).
        child_depth: u32,
        /// The cap in force.
        max_depth: u32,
    },
    /// A subagent tried to delegate where nesting is forbidden (e.g. inside a fork).
    #[error("nested delegation is forbidden: {reason}")]
    NestedDelegationForbidden {
        /// Why.
        reason: String,
    },
    /// No agent definition has that type. Returned by the delegation tool.
    #[error("unknown agent type \"{name}\" (available: {})", if available.is_empty() { "none".to_owned() } else { join(available) })]
    UnknownAgentType {
        /// The type asked for.
        name: String,
        /// The available types.
        available: Vec<String>,
    },
    /// No skill has that name (or its `SKILL.md` did not load: `reason` says why). Returned by
    /// the `Skill` tool as an error result; retrying with a listed skill helps.
    #[error("unknown skill \"{name}\"{}", reason.as_ref().map(|r| format!(": {r}")).unwrap_or_else(|| format!(" (available: {})", if available.is_empty() { "none".to_owned() } else { join(available) })))]
    UnknownSkill {
        /// The skill asked for.
        name: String,
        /// The skills that are listed.
        available: Vec<String>,
        /// Why a skill of that name is not there (its file did not load), if one was meant to be.
        reason: Option<String>,
    },
    /// The calling agent may start only some agent types (`Agent(explore, plan)` in its
    /// definition's tools) and this is not one of them. Returned by the delegation tool;
    /// retrying with one of `allowed` helps.
    #[error("this agent may not start agent type \"{name}\" (allowed: {})", if allowed.is_empty() { "none".to_owned() } else { join(allowed) })]
    AgentTypeNotAllowed {
        /// The type asked for (`general-purpose` for a call without one that does not fork).
        name: String,
        /// The types it may start.
        allowed: Vec<String>,
    },
    /// The model an in-process agent would use needs an API key and its variable is not set.
    /// Returned by the CLI's front doors before anything starts (never a silent fallback to a
    /// canned answer); setting the variable helps, retrying without it does not.
    #[error("{message}")]
    MissingApiKey {
        /// Which variable, for which model, and what to do.
        message: String,
    },
    /// A request field is malformed (a non-object output schema, an empty prompt…).
    #[error("invalid arguments: {message}")]
    InvalidArguments {
        /// What is wrong.
        message: String,
    },
    /// The child could not be started (binary missing, not executable, bad config…). Retrying
    /// helps once the cause is fixed; the message says how.
    #[error("could not start the subagent: {message}")]
    SpawnFailed {
        /// What failed, with the path tried and how to fix it.
        message: String,
    },
    /// The start was cancelled before the child existed.
    #[error("cancelled")]
    Cancelled,
    /// Credentials are missing or were refused.
    #[error("unauthorized: {message}")]
    Unauthorized {
        /// What was refused (never the secret itself).
        message: String,
    },
    /// The run asked to resume cannot be resumed.
    #[error("run cannot be resumed: {message}")]
    NotResumable {
        /// Why.
        message: String,
    },
    /// A peer broke its protocol (malformed output, unexpected message).
    #[error("protocol error: {message}")]
    Protocol {
        /// What was wrong.
        message: String,
    },
    /// A model's answer (its text, thinking and tool-call arguments together) grew past the
    /// configured cap (`max_answer_bytes`): the stream was stopped there and the run failed.
    /// Retrying the same request likely does not help; asking for a shorter answer, or raising
    /// the cap, does.
    #[error("{message}")]
    AnswerTooLarge {
        /// The cap, and what to do.
        message: String,
    },
}

impl Error {
    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::UnknownProvider { .. } => ErrorCode::UnknownProvider,
            Self::DuplicateProvider { .. } => ErrorCode::DuplicateProvider,
            Self::UnsupportedCapability { .. } => ErrorCode::UnsupportedCapability,
            Self::DepthExceeded { .. } => ErrorCode::DepthExceeded,
            Self::NestedDelegationForbidden { .. } => ErrorCode::NestedDelegationForbidden,
            Self::UnknownAgentType { .. } => ErrorCode::UnknownAgentType,
            Self::UnknownSkill { .. } => ErrorCode::UnknownSkill,
            Self::InvalidArguments { .. } => ErrorCode::InvalidArguments,
            Self::SpawnFailed { .. } => ErrorCode::SpawnFailed,
            Self::Cancelled => ErrorCode::Cancelled,
            Self::Unauthorized { .. } => ErrorCode::Unauthorized,
            Self::NotResumable { .. } => ErrorCode::NotResumable,
            Self::Protocol { .. } => ErrorCode::Protocol,
            Self::AgentTypeNotAllowed { .. } => ErrorCode::AgentTypeNotAllowed,
            Self::MissingApiKey { .. } => ErrorCode::MissingApiKey,
            Self::AnswerTooLarge { .. } => ErrorCode::AnswerTooLarge,
        }
    }

    /// `INVALID_ARGUMENTS` with this message.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::InvalidArguments {
            message: message.into(),
        }
    }

    /// `SPAWN_FAILED` with this message.
    pub fn spawn_failed(message: impl Into<String>) -> Self {
        Self::SpawnFailed {
            message: message.into(),
        }
    }

    /// `PROTOCOL` with this message.
    pub fn protocol(message: impl Into<String>) -> Self {
        Self::Protocol {
            message: message.into(),
        }
    }

    /// The error as the JSON object every surface prints: `{"code": …, "message": …}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "code": self.code().as_str(), "message": self.to_string() })
    }
}
