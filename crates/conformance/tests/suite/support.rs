//! What the kit's own test providers share: the factory an adapter hands the kit.

use std::sync::Arc;

use serde_json::Value;
use subagent_core::{BuildContext, Capabilities, ProviderFactory, Result, SubagentProvider};

/// The factory of one of the kit's test providers: a kind, a summary and the capabilities it
/// states, and what its `build` gives (`None`: a refusal, the adapter builds the provider).
pub(super) struct Factory {
    pub kind: &'static str,
    pub summary: &'static str,
    pub capabilities: Capabilities,
    pub built: Option<Arc<dyn SubagentProvider>>,
}

impl ProviderFactory for Factory {
    fn kind(&self) -> &str {
        self.kind
    }

    fn summary(&self) -> &str {
        self.summary
    }

    fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::json_schema!({"type": "object"})
    }

    fn build(
        &self,
        _name: &str,
        _config: &Value,
        _context: &BuildContext,
    ) -> Result<Arc<dyn SubagentProvider>> {
        self.built
            .clone()
            .ok_or_else(|| subagent_core::Error::invalid("built by the adapter"))
    }
}
