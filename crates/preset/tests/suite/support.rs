//! Fake factories with the kinds of the real providers, and helpers.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use subagent_core::{
    BuildContext, Capabilities, Capability, Error, ProviderFactory, Result, Run, StartRequest,
    SubagentProvider,
};

/// A factory of `kind` with a fixed capability table and config schema.
pub(super) struct FakeFactory {
    pub kind: &'static str,
    pub capabilities: Capabilities,
    pub schema: Value,
}

struct FakeProvider {
    name: String,
    capabilities: Capabilities,
}

#[async_trait]
impl SubagentProvider for FakeProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    async fn start(&self, _request: StartRequest) -> Result<Run> {
        Err(Error::spawn_failed("fake provider"))
    }
}

impl ProviderFactory for FakeFactory {
    fn kind(&self) -> &str {
        self.kind
    }

    fn summary(&self) -> &str {
        "a fake provider for tests"
    }

    fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::Schema::try_from(self.schema.clone()).unwrap()
    }

    fn build(
        &self,
        name: &str,
        config: &Value,
        _context: &BuildContext,
    ) -> Result<Arc<dyn SubagentProvider>> {
        if config.get("fail").is_some() {
            return Err(Error::spawn_failed("binary not found"));
        }
        Ok(Arc::new(FakeProvider {
            name: name.to_owned(),
            capabilities: self.capabilities,
        }))
    }
}

/// spawn, fork, claude-code (depth_limit) and codex (no depth_limit), with small strict
/// config schemas.
pub(super) fn factories() -> Vec<Arc<dyn ProviderFactory>> {
    let all = Capabilities::ALL;
    vec![
        Arc::new(FakeFactory {
            kind: "spawn",
            capabilities: all,
            schema: json!({
                "type": "object",
                "properties": {
                    "max_turns": {"type": "integer", "minimum": 1},
                    "fail": {"type": "boolean"}
                },
                "additionalProperties": false
            }),
        }),
        Arc::new(FakeFactory {
            kind: "fork",
            capabilities: all.inheriting_parent_context(true),
            schema: json!({"type": "object", "additionalProperties": false}),
        }),
        Arc::new(FakeFactory {
            kind: "claude-code",
            capabilities: all,
            schema: json!({
                "type": "object",
                "properties": {
                    "binary": {"type": "string"},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}},
                    "model": {"$ref": "#/$defs/Model"},
                    "fail": {"type": "boolean"}
                },
                "additionalProperties": false,
                "$defs": {"Model": {"type": "string", "minLength": 1}}
            }),
        }),
        Arc::new(FakeFactory {
            kind: "codex",
            capabilities: Capabilities::NONE
                .with(Capability::OutputSchema, true)
                .with(Capability::ModelOverride, true),
            schema: json!({
                "type": "object",
                "properties": {"binary": {"type": "string"}},
                "additionalProperties": false
            }),
        }),
    ]
}

/// The same kinds, and the protocol kinds (`acp`, `a2a`, `nats`) with nothing optional, with schemas
/// accepting any config (the shipped presets are checked against the real schemas by the CLI's
/// tests).
pub(super) fn permissive_factories() -> Vec<Arc<dyn ProviderFactory>> {
    factories()
        .iter()
        .map(|factory| {
            Arc::new(FakeFactory {
                kind: match factory.kind() {
                    "spawn" => "spawn",
                    "fork" => "fork",
                    "claude-code" => "claude-code",
                    _ => "codex",
                },
                capabilities: factory.capabilities(),
                schema: json!({"type": "object"}),
            }) as Arc<dyn ProviderFactory>
        })
        .chain(["acp", "a2a", "nats"].map(|kind| {
            Arc::new(FakeFactory {
                kind,
                capabilities: Capabilities::NONE,
                schema: json!({"type": "object"}),
            }) as Arc<dyn ProviderFactory>
        }))
        .collect()
}

/// A variable lookup over fixed pairs.
pub(super) fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

/// No variables at all.
pub(super) fn no_env(_: &str) -> Option<String> {
    None
}
