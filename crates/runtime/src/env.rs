//! What a run's tools see of the run.

use std::sync::Arc;

use subagent_core::RunId;
use subagent_process::Secrets;

use crate::paths::Roots;
use crate::permissions::PermissionPolicy;
use crate::tasks::TaskTable;

/// What a run's tools see of it.
#[derive(Clone, Debug)]
pub struct RunEnv {
    /// This run's id.
    pub run_id: RunId,
    /// Where file tools may go.
    pub roots: Roots,
    /// The run's delegation depth (0 = top-level agent).
    pub depth: u32,
    /// The absolute depth cap: this run may start children only while `depth < max_depth`.
    pub max_depth: u32,
    /// The run goes on without anyone waiting: it never asks for permission.
    pub background: bool,
    /// The runs above this one, root first.
    pub lineage: Vec<RunId>,
    /// How tool calls are permitted.
    pub permissions: PermissionPolicy,
    /// Background children of this run.
    pub tasks: Arc<TaskTable>,
    /// The configured secrets (see [`AgentConfig::secrets`](crate::AgentConfig::secrets)).
    pub secrets: Secrets,
    /// Where the run's transcripts are kept, and what its children ran with (see
    /// [`crate::ChildRecord`]); `None`: nothing is kept.
    pub sessions: Option<crate::SessionStore>,
}
