//! The provider trait: the one seam every way of running a child agent plugs into.

use async_trait::async_trait;

use crate::{Capabilities, Capability, Result, Run, StartRequest};

/// A way to run a child agent: in-process, a product's CLI, a protocol peer, a remote instance.
///
/// Implementors declare what they can honour in [`SubagentProvider::capabilities`]; the
/// [`Registry`](crate::registry::Registry) refuses any request that needs more before `start`
/// is called, so `start` may assume every set field of the request is one it declared.
#[async_trait]
pub trait SubagentProvider: Send + Sync {
    /// The name the provider is registered under.
    fn name(&self) -> &str;

    /// What the provider can honour. Static: the same value on every call.
    fn capabilities(&self) -> Capabilities;

    /// Why this provider does not declare `capability`, when the reason lies in how it was
    /// built rather than in its kind (a model that takes no reasoning effort, a remote agent
    /// whose card does not offer it): said in `UNSUPPORTED_CAPABILITY` refusals and by
    /// `subagent providers`. Default: none.
    fn capability_reason(&self, capability: Capability) -> Option<String> {
        let _ = capability;
        None
    }

    /// Starts a child. `Err` only for what went wrong before the child existed (a missing binary,
    /// a bad argument); everything after is reported through the run's [`Outcome`](crate::Outcome).
    async fn start(&self, request: StartRequest) -> Result<Run>;
}
