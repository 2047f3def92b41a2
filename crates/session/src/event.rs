//! Session events: what a run records, in order.

use serde::{Deserialize, Serialize};

use crate::Message;

/// Why a turn, or a whole run, stopped.
///
/// The same vocabulary serves a `turn_end` event and a run's outcome (`subagent-core`
/// re-exports this type as its `StopReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model finished its answer.
    Completed,
    /// Someone cancelled the run.
    Cancelled,
    /// The run failed (model error, process error, protocol error…).
    Failed,
    /// The run reached its turn limit.
    MaxTurns,
    /// The model reached its output token limit.
    MaxTokens,
    /// The model refused.
    Refused,
    /// The run spent its token or cost budget and was stopped (`--max-tokens-budget`,
    /// `--max-budget-usd`, a delegation row's `budget`).
    BudgetExceeded,
}

impl StopReason {
    /// The snake_case name used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Cancelled => "cancelled",
            Self::Failed => "failed",
            Self::MaxTurns => "max_turns",
            Self::MaxTokens => "max_tokens",
            Self::Refused => "refused",
            Self::BudgetExceeded => "budget_exceeded",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event of a session log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionEvent {
    /// A turn begins (a user prompt, or tool results, are about to be answered).
    TurnStart {
        /// 0-based number of the turn in this session.
        turn: u32,
    },
    /// A message joined the conversation.
    Message {
        /// The message.
        message: Message,
    },
    /// A turn ended.
    TurnEnd {
        /// Why it ended.
        stop_reason: StopReason,
    },
}

impl SessionEvent {
    /// The message, for a `message` event.
    pub fn as_message(&self) -> Option<&Message> {
        match self {
            Self::Message { message } => Some(message),
            _ => None,
        }
    }

    /// A `message` event.
    pub fn message(message: Message) -> Self {
        Self::Message { message }
    }
}
