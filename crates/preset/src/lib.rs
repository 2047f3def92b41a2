//! `subagent-preset`: preset files (YAML) → a checked [`Preset`] → a [`Registry`] of providers
//! and the delegation-tool rows.
//!
//! A preset names the default model of in-process agents, the agent definition directories,
//! the provider rows (`{name, kind, disabled, config}`, each built by the [`ProviderFactory`]
//! of its kind) and the delegation-tool rows. [`Preset::load`] checks everything that can be
//! checked without starting anything, and every error carries `file:line:column` and the key
//! path ([`Site`]):
//!
//! - the YAML itself, read with budgets (size ≤ [`MAX_PRESET_BYTES`], alias expansion, nodes,
//!   depth) so a hostile file cannot exhaust memory; unknown keys are errors (typos caught);
//! - `version` ([`PRESET_VERSION`]);
//! - `${VAR}` references in string values, looked up through a function the caller passes
//!   (the process environment is never read here); a secret one (a variable the preset names as
//!   holding a key, or whose name says it holds a credential) is refused in a row's command line
//!   ([`ARGV_KEYS`]), where any process of the machine would read its value;
//! - each row's kind (the known kinds are listed) and its `config` against the kind's JSON
//!   Schema;
//! - tool rows: a known, enabled provider; a numeric `max_depth` only for a provider with the
//!   `depth_limit` capability and never above the preset's `max_depth`.
//!
//! **Depth.** The preset's top-level `max_depth` (default [`DEFAULT_MAX_DEPTH`]) is the
//! registry's absolute cap ([`Registry::with_max_depth`]): it applies to every provider,
//! whatever its capabilities. A tool row's `max_depth` is a tighter cap the delegation tool puts
//! in each request (`StartRequest::max_depth`); the registry takes the smaller of the two, and
//! the request needs the provider's `depth_limit` capability, hence the load-time check.
//!
//! [`Preset::build`] turns the enabled rows into providers. [`preset_schema`] is the JSON
//! Schema of the format (committed as `docs/preset.schema.json`).
//!
//! Deliberately not here: no model client, no runtime, no provider crate. The `model:`
//! section and the tool rows are plain data the caller converts; the caller owns the list of
//! factories and builds the agent catalog from [`Preset::agents`].
//!
//! [`Registry`]: subagent_core::registry::Registry
//! [`Registry::with_max_depth`]: subagent_core::registry::Registry::with_max_depth
//! [`DEFAULT_MAX_DEPTH`]: subagent_core::registry::DEFAULT_MAX_DEPTH

mod build;
mod error;
mod format;
mod load;
mod vars;
mod yaml;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use subagent_core::ProviderFactory;

pub use build::{Built, ProviderListing};
pub use error::{Error, Position, Result, Site};
pub use format::{
    Background, DEFAULT_TOOL_NAME, ModelKind, ModelPrice, ModelRetry, ModelSection, ModelTimeouts,
    ProviderRow, RowBudget, ToolRow,
};

/// How `${VAR}` references are looked up: the variable's value, or `None` when unset. The CLI
/// passes its environment (`subagent_session::env::var`, where the secrets it withdrew from its
/// environment block are kept); tests pass a map.
pub type Env = dyn Fn(&str) -> Option<String>;

/// The built-in agents whose model `builtin_models:` may set.
pub const BUILTIN_AGENTS: [&str; 3] = ["general-purpose", "explore", "plan"];

/// The keys of a provider row's `config` whose values become a child's command line (its
/// program and arguments): a `${VAR}` naming a secret anywhere under one of them is refused
/// ([`Error::SecretInArgv`]), since any process of the machine reads a command line. A kind that
/// runs a program names these fields so (`command` and `args`, as `acp` does).
pub const ARGV_KEYS: [&str; 5] = [
    "command",
    "args",
    "binary",
    "extra_args",
    "config_overrides",
];

/// The format version this build reads.
pub const PRESET_VERSION: u32 = 1;

/// The largest preset file read, in bytes (1 MiB); reading stops after it and a larger file is
/// refused.
pub const MAX_PRESET_BYTES: usize = 1024 * 1024;

/// A loaded and checked preset. Relative paths are resolved against the preset's directory and
/// `${VAR}` references are expanded.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Preset {
    /// The file it was read from (as given).
    pub path: PathBuf,
    /// The directory relative paths resolve against (the file's directory).
    pub base_dir: PathBuf,
    /// The format version ([`PRESET_VERSION`]).
    pub version: u32,
    /// The absolute delegation depth cap.
    pub max_depth: u32,
    /// The cap on one tool result of in-process agents, in bytes (`max_tool_result_bytes:`);
    /// `None`: the runtime's default.
    pub max_tool_result_bytes: Option<u64>,
    /// The preset's `settings:` (Claude Code's settings.json shape), ranked between the command
    /// line and the project's settings files; read by `subagent-settings`.
    pub settings: Option<serde_json::Value>,
    /// The preset's `mcp_servers:` (`.mcp.json`'s `mcpServers` shape), read by
    /// `subagent-mcp-client`.
    pub mcp_servers: Option<serde_json::Value>,
    /// The default model of in-process agents.
    pub model: Option<ModelSection>,
    /// Model aliases of in-process agents (`model_aliases:`): alias → model id, `${VAR}`
    /// expanded.
    pub model_aliases: std::collections::BTreeMap<String, String>,
    /// The models of the built-in agents (`builtin_models:`): a name of
    /// [`BUILTIN_AGENTS`] → a model id or alias, `${VAR}` expanded.
    pub builtin_models: std::collections::BTreeMap<String, String>,
    /// Agent definition directories, resolved against `base_dir`, in the preset's order.
    pub agents: Vec<PathBuf>,
    /// Provider rows, disabled ones included, in order.
    pub providers: Vec<ProviderRow>,
    /// Delegation-tool rows, in order.
    pub tools: Vec<ToolRow>,
}

impl Preset {
    /// Reads and checks the preset at `path`.
    ///
    /// `factories` are the provider kinds this build knows (their capabilities and config
    /// schemas are used; nothing is built). `env` looks up `${VAR}` references; the CLI passes
    /// its environment (`subagent_session::env::var`), tests a map. A file larger than
    /// [`MAX_PRESET_BYTES`] is refused without being read whole (reading stops after the limit,
    /// whatever size the file claims), and anything but a regular file (a FIFO, `/dev/zero`, a
    /// symlink to one) is refused without being read at all.
    pub fn load(
        path: impl AsRef<Path>,
        factories: &[Arc<dyn ProviderFactory>],
        env: &Env,
    ) -> Result<Preset> {
        let path = path.as_ref();
        let limit = u64::try_from(MAX_PRESET_BYTES).unwrap_or(u64::MAX);
        let bytes = subagent_session::read_user_file(path, limit).map_err(|error| {
            if error.kind() == std::io::ErrorKind::FileTooLarge {
                Error::TooLarge {
                    site: Box::new(Site {
                        file: path.to_path_buf(),
                        ..Site::default()
                    }),
                    size: MAX_PRESET_BYTES + 1,
                    limit: MAX_PRESET_BYTES,
                }
            } else {
                Error::Io {
                    path: path.to_path_buf(),
                    message: error.to_string(),
                }
            }
        })?;
        let text = String::from_utf8(bytes).map_err(|_| Error::Io {
            path: path.to_path_buf(),
            message: "the preset is not valid UTF-8".into(),
        })?;
        Self::parse(&text, path, factories, env)
    }

    /// Checks a preset given as text; `path` names it in errors and its directory is the base
    /// of relative paths.
    pub fn parse(
        text: &str,
        path: impl AsRef<Path>,
        factories: &[Arc<dyn ProviderFactory>],
        env: &Env,
    ) -> Result<Preset> {
        load::Loader {
            file: path.as_ref(),
            factories,
            env,
        }
        .load(text)
    }

    /// The enabled provider rows, in order.
    pub fn enabled_providers(&self) -> impl Iterator<Item = &ProviderRow> {
        self.providers.iter().filter(|row| !row.disabled)
    }

    /// Gives each kind of `factories` that no row of the preset names (disabled rows count) a
    /// row of its own: named after the kind, with the kind's default config (`{}`), when that
    /// name is free and `{}` is a valid config of the kind (a kind that needs configuring is left
    /// to the preset). For the kinds a host binary adds (`subagent_cli::main_with`): usable by
    /// their name under any preset, the built-in one included, without a row written for them. A
    /// row added here has no position (0:0).
    pub fn add_default_rows(&mut self, factories: &[Arc<dyn ProviderFactory>]) {
        for factory in factories {
            let kind = factory.kind();
            let named = self
                .providers
                .iter()
                .any(|row| row.kind == kind || row.name == kind);
            let config = serde_json::Value::Object(serde_json::Map::new());
            let valid = jsonschema::validator_for(factory.config_schema().as_value())
                .is_ok_and(|validator| validator.is_valid(&config));
            if !named && valid {
                self.providers.push(ProviderRow {
                    name: kind.to_owned(),
                    kind: kind.to_owned(),
                    disabled: false,
                    config,
                    location: Position::default(),
                });
            }
        }
    }

    /// Where a position of this preset is, for messages of the caller's own.
    pub fn site(&self, position: Position, key: impl Into<String>) -> Site {
        Site {
            file: self.path.clone(),
            position,
            key: key.into(),
        }
    }
}

/// The JSON Schema (draft 2020-12) of the preset format, for editors and
/// `subagent preset schema`. Provider `config` blocks are free-form here: their schemas belong
/// to the factories (see [`preset_schema_for`]).
pub fn preset_schema() -> serde_json::Value {
    schemars::schema_for!(format::Document).to_value()
}

/// [`preset_schema`] with each provider row's `config` checked against its kind's schema (one
/// `if kind = K then config: schema(K)` per factory), and `kind` limited to the known kinds.
pub fn preset_schema_for(factories: &[Arc<dyn ProviderFactory>]) -> serde_json::Value {
    let mut schema = preset_schema();
    let kinds: Vec<serde_json::Value> = factories
        .iter()
        .map(|factory| factory.kind().into())
        .collect();
    let mut hoisted = serde_json::Map::new();
    let conditions: Vec<serde_json::Value> = factories
        .iter()
        .map(|factory| {
            let kind = factory.kind();
            let mut config = factory.config_schema().to_value();
            rename_refs(&mut config, kind);
            if let Some(defs) = config
                .as_object_mut()
                .and_then(|object| object.remove("$defs"))
                .and_then(|defs| match defs {
                    serde_json::Value::Object(defs) => Some(defs),
                    _ => None,
                })
            {
                for (name, def) in defs {
                    hoisted.insert(format!("{kind}.{name}"), def);
                }
            }
            if let Some(object) = config.as_object_mut() {
                object.remove("$schema");
            }
            serde_json::json!({
                "if": { "properties": { "kind": { "const": kind } }, "required": ["kind"] },
                "then": { "properties": { "config": config } }
            })
        })
        .collect();
    if let Some(defs) = schema
        .pointer_mut("/$defs")
        .and_then(serde_json::Value::as_object_mut)
    {
        defs.extend(hoisted);
    }
    if let Some(row) = schema
        .pointer_mut("/$defs/ProviderRow")
        .and_then(serde_json::Value::as_object_mut)
    {
        row.insert("allOf".into(), conditions.into());
        if let Some(kind) = row
            .get_mut("properties")
            .and_then(|properties| properties.get_mut("kind"))
            .and_then(serde_json::Value::as_object_mut)
        {
            kind.insert("enum".into(), kinds.into());
        }
    }
    schema
}

/// Rewrites `#/$defs/X` references of a factory's schema to `#/$defs/<kind>.X`, where
/// [`preset_schema_for`] hoists them.
fn rename_refs(value: &mut serde_json::Value, kind: &str) {
    match value {
        serde_json::Value::Object(object) => {
            for (key, item) in object.iter_mut() {
                match item {
                    serde_json::Value::String(target) if key == "$ref" => {
                        if let Some(name) = target.strip_prefix("#/$defs/") {
                            *target = format!("#/$defs/{kind}.{name}");
                        }
                    }
                    _ => rename_refs(item, kind),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                rename_refs(item, kind);
            }
        }
        _ => {}
    }
}
