//! Building providers by kind, as presets do.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Capabilities, Error, Extensions, Result, Secrets, SubagentProvider};

/// What a factory may need to build a provider.
#[derive(Clone, Debug, Default)]
pub struct BuildContext {
    /// The directory relative paths in the config are resolved against (the preset's directory).
    pub base_dir: PathBuf,
    /// The configured secrets (every key variable the preset and its rows name, with their
    /// values; [`ProviderFactory::secret_env`] says a kind's own). A provider that starts
    /// children withholds them from each child's environment and redacts their values from
    /// what it reports (`subagent_process::ProcessSpec::withhold`, [`Secrets::redact`]).
    /// Default: none.
    pub secrets: Secrets,
    /// Services of one family of providers that core does not know the types of (the in-process
    /// runtime's default model, session store and task directory, the model aliases), by type.
    /// A provider reads only the ones its crate documents.
    pub extensions: Extensions,
}

impl BuildContext {
    /// Reads a provider's `config:` block: absent (`null`) means every default (`{}`); a value
    /// that does not fit is `INVALID_ARGUMENTS` naming the kind, the provider and the problem.
    pub fn parse_config<T: DeserializeOwned>(kind: &str, name: &str, config: &Value) -> Result<T> {
        let parsed = if config.is_null() {
            serde_json::from_value(Value::Object(serde_json::Map::new()))
        } else {
            T::deserialize(config)
        };
        parsed
            .map_err(|e| Error::invalid(format!("{kind} provider \"{name}\": invalid config: {e}")))
    }

    /// A file or directory path from a config, resolved against the preset's directory:
    /// absolute paths stay as they are, relative ones are joined to [`BuildContext::base_dir`].
    pub fn resolve_path(&self, path: &Path) -> PathBuf {
        if path.is_absolute() || self.base_dir.as_os_str().is_empty() {
            path.to_path_buf()
        } else {
            self.base_dir.join(path)
        }
    }

    /// A program from a config: a bare name (`claude`) stays a `PATH` lookup; a path with a
    /// directory part is resolved like [`BuildContext::resolve_path`].
    pub fn resolve_program(&self, program: &Path) -> PathBuf {
        if program.components().count() < 2 {
            program.to_path_buf()
        } else {
            self.resolve_path(program)
        }
    }
}

/// Where the children of a kind run, as a host needs to know before it builds a row
/// ([`ProviderFactory::placement`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Placement {
    /// In a process or on a machine of their own (a product CLI, an ACP agent, a remote agent):
    /// the host only starts them, and what they need is the row's keys
    /// ([`ProviderFactory::secret_env`]). The default.
    #[default]
    Elsewhere,
    /// In the host's process, as an agent on a model: the host's sessions keep their
    /// transcripts, and the host checks the model they run on before a run.
    InProcess {
        /// The model the row's config names (a `subagent_model::ModelConfig` as JSON), or
        /// `None` for the host's default model (`BuildContext::extensions`' `DefaultModel`).
        model: Option<Value>,
    },
}

impl Placement {
    /// The placement of an in-process kind whose config names its own model under `model`
    /// (`spawn`, `fork`): that model when it is there and not `null`, else the host's.
    pub fn in_process_on_config_model(config: &Value) -> Self {
        Self::InProcess {
            model: config
                .get("model")
                .filter(|model| !model.is_null())
                .cloned(),
        }
    }

    /// Whether the children run in the host's process.
    pub fn in_process(&self) -> bool {
        matches!(self, Self::InProcess { .. })
    }

    /// Whether the children run in the host's process on the host's default model.
    pub fn on_default_model(&self) -> bool {
        matches!(self, Self::InProcess { model: None })
    }
}

/// The tools a child of a row has, as far as its kind knows them before the row is built
/// ([`ProviderFactory::child_tools`]): the catalog checks an agent definition's `tools:` against
/// them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChildTools {
    /// The tools' names.
    pub names: Vec<String>,
    /// Whether the child also has the host's delegation tools (a preset's `tools:` rows).
    pub delegation: bool,
}

/// What a row needs to run, as its kind knows it before building
/// ([`ProviderFactory::requirements`]): what `subagent doctor` checks for it (besides the
/// variables of [`ProviderFactory::secret_env`] and, in process, the model it runs on).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Requirements {
    /// The program the row runs, when it runs one.
    pub program: Option<Program>,
    /// The servers the row reaches, in the order they matter (the agent itself first).
    pub endpoints: Vec<Endpoint>,
}

/// A program a row runs ([`Requirements::program`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// As the row names it, resolved against the preset ([`BuildContext::resolve_program`]):
    /// a bare name is looked up on the row's `PATH`.
    pub path: PathBuf,
    /// The version the kind is tested with, when it is known for this program.
    pub tested: Option<TestedVersion>,
    /// How to install it, said when it is missing.
    pub install_hint: String,
}

/// The version of a program a kind is tested with ([`Program::tested`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestedVersion {
    /// Its npm package.
    pub package: String,
    /// The tested version.
    pub version: String,
    /// Whether `PROGRAM --version` prints it (else only the package says it).
    pub asks_version: bool,
}

/// A server a row reaches ([`Requirements::endpoints`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// Its URLs: reaching any one of them is enough (a list of servers of one cluster).
    pub urls: Vec<String>,
    /// Where they are written, said with the fix (the row's `url`, say).
    pub origin: String,
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

    /// The environment variables a provider of this kind built from `config` reads secrets
    /// from (its model's API key variable, say). Whoever builds the providers treats them as
    /// configured secrets: no other child inherits them, and their values are redacted from
    /// output (`subagent_process::Secrets`). Default: none. A config that does not parse names
    /// none (`build` reports it).
    fn secret_env(&self, config: &Value) -> Vec<String> {
        let _ = config;
        Vec::new()
    }

    /// Where the children of a row with this `config` run. Default: [`Placement::Elsewhere`].
    /// A config that does not parse is placed as the default config would be (`build` reports
    /// it).
    fn placement(&self, config: &Value) -> Placement {
        let _ = config;
        Placement::Elsewhere
    }

    /// The tools a child of a row with this `config` has, when the kind knows them before
    /// building; `None` (the default) when it does not (a remote agent's, an arbitrary
    /// program's), and definitions naming tools are then not checked against them.
    fn child_tools(&self, config: &Value) -> Option<ChildTools> {
        let _ = config;
        None
    }

    /// What the row `name` with this `config` needs to run: a program, servers. Default:
    /// nothing. A config that does not parse is `INVALID_ARGUMENTS`, as `build` reports it.
    fn requirements(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> Result<Requirements> {
        let _ = (name, config, context);
        Ok(Requirements::default())
    }

    /// Builds a provider named `name` from its config (already validated against the schema by
    /// the caller, but `build` must still report a bad value as `INVALID_ARGUMENTS`).
    fn build(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> Result<Arc<dyn SubagentProvider>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, serde::Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Config {
        depth: u32,
    }

    #[test]
    fn config_defaults_and_errors() {
        let parsed: Config = BuildContext::parse_config("x", "row", &Value::Null).unwrap();
        assert_eq!(parsed, Config::default());
        let parsed: Config =
            BuildContext::parse_config("x", "row", &serde_json::json!({"depth": 2})).unwrap();
        assert_eq!(parsed.depth, 2);
        let err = BuildContext::parse_config::<Config>("x", "row", &serde_json::json!({"dpth": 2}))
            .unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::InvalidArguments);
        assert!(
            err.to_string().starts_with(
                "invalid arguments: x provider \"row\": invalid config: unknown field `dpth`"
            ),
            "{err}"
        );
    }

    #[test]
    fn paths_resolve_against_the_preset() {
        let context = BuildContext {
            base_dir: "/presets".into(),
            ..BuildContext::default()
        };
        assert_eq!(
            context.resolve_program(Path::new("claude")),
            Path::new("claude")
        );
        assert_eq!(
            context.resolve_program(Path::new("/usr/bin/claude")),
            Path::new("/usr/bin/claude")
        );
        assert_eq!(
            context.resolve_program(Path::new("bin/claude")),
            Path::new("/presets/bin/claude")
        );
        assert_eq!(
            context.resolve_path(Path::new("home")),
            Path::new("/presets/home")
        );
        assert_eq!(context.resolve_path(Path::new("/abs")), Path::new("/abs"));
        assert_eq!(
            BuildContext::default().resolve_path(Path::new("home")),
            Path::new("home")
        );
    }
}
