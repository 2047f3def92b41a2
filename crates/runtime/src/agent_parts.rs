//! What an agent type gives its child's request beyond its settings: its hooks (parsed here,
//! where hooks run) and what [`AgentProfile::give`] puts in (skills, memory, MCP servers).
//! The delegation tool and `subagent delegate` call [`give`].
//!
//! Deliberately not here: acting on them (an in-process provider runs the hooks, loads the
//! skills and memory, starts the servers; a product provider hands the servers to its CLI).

use subagent_core::StartRequest;
use subagent_core::agents::AgentProfile;

/// Puts `profile`'s hooks ([`crate::AgentHooks`]) and what [`AgentProfile::give`] gives into
/// `request`; what cannot be given is said in a warning.
///
/// # Errors
/// Hooks that do not parse, in words (everything else is given all the same; the caller says
/// whether the child starts without them).
pub fn give(profile: &AgentProfile, request: &mut StartRequest) -> Result<(), String> {
    for warning in profile.give(request) {
        tracing::warn!(target: "subagent::mcp", "{warning}");
    }
    if let Some(hooks) = crate::AgentHooks::of(profile)? {
        request.parent.extensions.insert(hooks);
    }
    Ok(())
}
