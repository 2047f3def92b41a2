//! Input that reaches a run from outside, between its turns.
//!
//! The runtime knows nothing of where it comes from: a team (`subagent-teams`) gives each
//! in-process teammate a [`TurnInput`] over its mailbox, and its leader one that also waits
//! while teammates work. The loop takes what is waiting at the start of every turn (it joins
//! that turn's user message), and when the model answers without tool calls it asks
//! [`TurnInput::wait`] before it ends, as it waits for its background tasks.

use std::sync::Arc;

use async_trait::async_trait;
use subagent_core::PermissionMode;
use subagent_session::ContentBlock;

use crate::tools::Tool;

/// Input a run takes at the start of each turn from outside the run.
#[async_trait]
pub trait TurnInput: Send + Sync {
    /// What waits for the run, as blocks of the turn about to start. Taking is delivering:
    /// what is returned is never returned again, and the loop adds it to the turn at once.
    fn take(&self) -> Vec<ContentBlock>;

    /// The run answered without tool calls and would end: resolve `true` once input may have
    /// arrived (the run takes it and goes on; nothing taken, it asks again), or `false` when
    /// none can come any more (the run ends). The default is `false` at once.
    async fn wait(&self) -> bool {
        false
    }

    /// The run is over, however it ended: stop whatever could still send it input and return
    /// once that has stopped. The default does nothing.
    async fn close(&self) {}
}

/// What whoever starts a child adds to it beyond its request: input between its turns and
/// tools after its own. Handed to the provider in the request's `ParentContext::extensions`
/// (the delegation tool's [`start_detached`](crate::DelegationTool::start_detached) puts it
/// there; spawn honours it, after the tool filters).
#[derive(Clone, Default)]
pub struct ChildExtras {
    /// Input between the child's turns (`AgentConfig::input`).
    pub input: Option<Arc<dyn TurnInput>>,
    /// Tools the child gets after its own.
    pub tools: Vec<Arc<dyn Tool>>,
    /// The loosest permission mode the child may run in, tightening the ceiling the delegation
    /// gives it (never loosening it): a team holds a teammate in `plan` until its leader
    /// approves its plan. Every provider honours it as it honours the request's ceiling.
    pub permission_ceiling: Option<PermissionMode>,
    /// Why the child is held in plan mode, said in its plan-mode refusals
    /// ([`PermissionPolicy::plan_reason`](crate::PermissionPolicy::plan_reason)) by an
    /// in-process child; a product child is told in its prompt.
    pub plan_reason: Option<Arc<str>>,
    /// The child's name in a team (the record of runs shows it).
    pub teammate: Option<String>,
}

impl std::fmt::Debug for ChildExtras {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildExtras")
            .field("input", &self.input.is_some())
            .field("tools", &self.tools.len())
            .field("permission_ceiling", &self.permission_ceiling)
            .field("plan_reason", &self.plan_reason)
            .finish()
    }
}
