//! What a fork starts from: the parent's state when it called the delegation tool. Here, beside
//! the [`ToolContext`](super::ToolContext) that carries it, and re-exported by
//! [`crate::delegation`].

use std::sync::Arc;

use subagent_model::{Messages, Model};
use subagent_session::EventLog;

use super::ToolSet;
use crate::env::RunEnv;

/// The parent's state when it called the delegation tool: what a fork starts from. The runtime
/// puts it into `ParentContext::extensions`; every field is cheap to clone (the log shares its
/// history).
#[derive(Clone)]
pub struct ParentSnapshot {
    /// The parent's system prompt.
    pub system: Option<Arc<str>>,
    /// The parent's tools, in order, with their specs as the model saw them.
    pub tools: ToolSet,
    /// The parent's model.
    pub model: Arc<dyn Model>,
    /// The model id the parent sent.
    pub model_id: Option<String>,
    /// The reasoning effort the parent asked of its model (a fork asks the same; a spawned
    /// child inherits it when its provider takes an effort).
    pub effort: Option<subagent_model::Effort>,
    /// The parent's output token limit.
    pub max_tokens: u32,
    /// The parent's log, up to and including the assistant message that made the call (and its
    /// `turn_end`).
    pub log: EventLog,
    /// The messages of `log`, shared with the parent's run (what a fork's requests continue).
    pub messages: Messages,
    /// The delegation call's id (empty outside a delegation call).
    pub call_id: String,
    /// The parent's environment (roots, permissions, depth).
    pub env: Arc<RunEnv>,
}

impl std::fmt::Debug for ParentSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParentSnapshot")
            .field("tools", &self.tools)
            .field("log_len", &self.log.len())
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}
