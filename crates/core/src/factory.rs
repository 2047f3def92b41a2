//! Building providers by kind, as presets do.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::{Capabilities, Extensions, Result, SubagentProvider};

/// What a factory may need to build a provider.
#[derive(Clone, Debug, Default)]
pub struct BuildContext {
    /// The directory relative paths in the config are resolved against (the preset's directory).
    pub base_dir: PathBuf,
    /// Shared services for providers that need them (e.g. the default model for in-process
    /// agents), by type.
    pub extensions: Extensions,
}

/// Builds providers of one kind. The static description (kind, capabilities, config schema) is
/// known before anything is built, so a preset can be validated and documented without building.
pub trait ProviderFactory: Send + Sync {
    /// The kind, as written in a preset's `kind:` (e.g. `spawn`, `claude-code`).
    fn kind(&self) -> &str;

    /// One line saying what the provider runs.
    fn summary(&self) -> &str;

    /// What every provider of this kind can honour.
    fn capabilities(&self) -> Capabilities;

    /// The JSON Schema of the `config:` block.
    fn config_schema(&self) -> schemars::Schema;

    /// Builds a provider named `name` from its config (already validated against the schema by
    /// the caller, but `build` must still report a bad value as `INVALID_ARGUMENTS`).
    fn build(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> Result<Arc<dyn SubagentProvider>>;
}
