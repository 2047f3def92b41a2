//! Loading: bytes → YAML → `${VAR}` expansion → the rules of the format → a [`Preset`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use serde_saphyr::Spanned;
use subagent_core::registry::DEFAULT_MAX_DEPTH;
use subagent_core::{Capabilities, Capability, ProviderFactory};

use crate::format::{Document, ModelKind, ModelSection, ProviderRow, ToolRow};
use crate::vars::{self, VarError};
use crate::yaml::{self, Index};
use crate::{
    ARGV_KEYS, Env, Error, MAX_PRESET_BYTES, PRESET_VERSION, Position, Preset, Result, Site,
};

/// What loading needs besides the text: the file's name, the factories and the variables.
pub(crate) struct Loader<'a> {
    pub file: &'a Path,
    pub factories: &'a [Arc<dyn ProviderFactory>],
    pub env: &'a Env,
}

fn position<T>(spanned: &Spanned<T>) -> Position {
    let location = spanned.referenced;
    Position::new(
        u32::try_from(location.line()).unwrap_or(u32::MAX),
        u32::try_from(location.column()).unwrap_or(u32::MAX),
    )
}

impl Loader<'_> {
    fn site(&self, position: Position, key: impl Into<String>) -> Box<Site> {
        Box::new(Site {
            file: self.file.to_path_buf(),
            position,
            key: key.into(),
        })
    }

    /// The site of `key`: where its node starts, or `fallback` (the row) when not written.
    fn site_of(&self, index: &Index, key: String, fallback: Position) -> Box<Site> {
        let at = index.position_of(&key).unwrap_or(fallback);
        self.site(at, key)
    }

    pub(crate) fn load(&self, text: &str) -> Result<Preset> {
        if text.len() > MAX_PRESET_BYTES {
            return Err(Error::TooLarge {
                site: self.site(Position::default(), ""),
                size: text.len(),
                limit: MAX_PRESET_BYTES,
            });
        }
        let document = match yaml::document(text) {
            Ok(document) => document,
            Err(failure) => {
                let key = yaml::index(text, None)
                    .map(|index| index.key_at(failure.position))
                    .unwrap_or_default();
                let site = self.site(failure.position, key);
                return Err(if failure.budget {
                    Error::Budget {
                        site,
                        message: failure.message,
                    }
                } else {
                    Error::Syntax {
                        site,
                        message: failure.message,
                    }
                });
            }
        };
        let version = document.version.value;
        if version != PRESET_VERSION {
            return Err(Error::UnsupportedVersion {
                site: self.site(position(&document.version), "version"),
                found: version,
                supported: PRESET_VERSION,
            });
        }
        let index = yaml::index(text, Some(self.env)).map_err(|failure| {
            let site = self.site(failure.position, failure.key);
            match failure.error {
                VarError::Unset(name) => Error::UnsetVariable { site, name },
                VarError::Malformed(reference) => Error::MalformedVariable { site, reference },
            }
        })?;
        self.check(document, &index)
    }

    /// Expands a string already checked by the index walk (so it cannot fail in practice; a
    /// failure is still reported, at the row).
    fn expand(&self, text: &mut String, position: Position, key: &str) -> Result<()> {
        if vars::has_reference(text) {
            *text = vars::expand(text, self.env).map_err(|error| {
                let site = self.site(position, key);
                match error {
                    VarError::Unset(name) => Error::UnsetVariable { site, name },
                    VarError::Malformed(reference) => Error::MalformedVariable { site, reference },
                }
            })?;
        }
        Ok(())
    }

    /// Expands a row's config; the variables referenced in its command line (a value under a
    /// key of [`ARGV_KEYS`], `argv`) go to `noted` with their key path.
    fn expand_config(
        &self,
        value: &mut Value,
        position: Position,
        key: &str,
        argv: bool,
        noted: &mut Vec<(String, String)>,
    ) -> Result<()> {
        match value {
            Value::String(text) if argv && vars::has_reference(text) => {
                let (expanded, names) = vars::expand_noting(text, self.env).map_err(|error| {
                    let site = self.site(position, key);
                    match error {
                        VarError::Unset(name) => Error::UnsetVariable { site, name },
                        VarError::Malformed(reference) => {
                            Error::MalformedVariable { site, reference }
                        }
                    }
                })?;
                *text = expanded;
                noted.extend(names.into_iter().map(|name| (key.to_owned(), name)));
                Ok(())
            }
            Value::String(text) => self.expand(text, position, key),
            Value::Array(items) => items.iter_mut().enumerate().try_for_each(|(i, item)| {
                self.expand_config(item, position, &format!("{key}[{i}]"), argv, noted)
            }),
            Value::Object(map) => map.iter_mut().try_for_each(|(name, item)| {
                let argv = argv || ARGV_KEYS.contains(&name.as_str());
                self.expand_config(item, position, &format!("{key}.{name}"), argv, noted)
            }),
            _ => Ok(()),
        }
    }

    /// Refuses a secret variable in a row's command line (`noted`: each row's references
    /// there): one the preset names as holding a key (`model_key`, each row's
    /// [`ProviderFactory::secret_env`]) or whose name says it holds a credential
    /// ([`subagent_process::is_credential_name`]).
    fn refuse_secrets_in_argv(
        &self,
        rows: &[ProviderRow],
        noted: &[Vec<(String, String)>],
        model_key: Option<String>,
        index: &Index,
    ) -> Result<()> {
        let mut named: Vec<String> = model_key.into_iter().collect();
        for row in rows {
            if let Some(factory) = self.factory(&row.kind) {
                named.extend(factory.secret_env(&row.config));
            }
        }
        for (row, references) in rows.iter().zip(noted) {
            let secret = references.iter().find(|(_, variable)| {
                named.contains(variable) || subagent_process::is_credential_name(variable)
            });
            if let Some((key, variable)) = secret {
                return Err(Error::SecretInArgv {
                    site: self.site_of(index, key.clone(), row.location),
                    provider: row.name.clone(),
                    variable: variable.clone(),
                });
            }
        }
        Ok(())
    }

    fn base_dir(&self) -> PathBuf {
        match self.file.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    fn check(&self, document: Document, index: &Index) -> Result<Preset> {
        let base_dir = self.base_dir();
        let max_depth = match &document.max_depth {
            Some(spanned) => spanned.value,
            None => DEFAULT_MAX_DEPTH,
        };
        let max_tool_result_bytes = match &document.max_tool_result_bytes {
            Some(spanned) if spanned.value == 0 => {
                return Err(Error::Invalid {
                    site: self.site_of(index, "max_tool_result_bytes".into(), position(spanned)),
                    message: "a tool result keeps at least 1 byte (max_tool_result_bytes: 0 would leave only the marker)".into(),
                });
            }
            Some(spanned) => Some(spanned.value),
            None => None,
        };
        let settings = match document.settings {
            Some(spanned) if !spanned.value.is_object() => {
                return Err(Error::Invalid {
                    site: self.site_of(index, "settings".into(), position(&spanned)),
                    message: "settings must be a mapping in Claude Code's settings.json shape (permissions, hooks, env)".into(),
                });
            }
            Some(spanned) => Some(spanned.value),
            None => None,
        };
        let mcp_servers = match document.mcp_servers {
            Some(spanned) if !spanned.value.is_object() => {
                return Err(Error::Invalid {
                    site: self.site_of(index, "mcp_servers".into(), position(&spanned)),
                    message: "mcp_servers must be a mapping of servers by name, as .mcp.json's mcpServers".into(),
                });
            }
            Some(spanned) => Some(spanned.value),
            None => None,
        };
        let model = match document.model {
            Some(spanned) => {
                Some(self.model(position(&spanned), spanned.value, &base_dir, index)?)
            }
            None => None,
        };
        let model_aliases = match document.model_aliases {
            Some(spanned) => self.model_aliases(position(&spanned), spanned.value, index)?,
            None => std::collections::BTreeMap::new(),
        };
        let builtin_models = match document.builtin_models {
            Some(spanned) => self.builtin_models(position(&spanned), spanned.value, index)?,
            None => std::collections::BTreeMap::new(),
        };
        let mut agents = Vec::with_capacity(document.agents.len());
        for (i, spanned) in document.agents.into_iter().enumerate() {
            let at = position(&spanned);
            let key = format!("agents[{i}]");
            let mut dir = spanned.value;
            self.expand(&mut dir, at, &key)?;
            if dir.is_empty() {
                return Err(Error::Invalid {
                    site: self.site_of(index, key, at),
                    message: "an agents entry must be a directory path, not empty".into(),
                });
            }
            agents.push(base_dir.join(dir));
        }
        let model_key = model.as_ref().and_then(|model| {
            model
                .api_key_env
                .clone()
                .or_else(|| model.kind.default_api_key_env().map(str::to_owned))
        });
        let providers = self.providers(document.providers, model_key, index)?;
        let tools = self.tools(document.tools, &providers, max_depth, index)?;
        Ok(Preset {
            path: self.file.to_path_buf(),
            base_dir,
            version: PRESET_VERSION,
            max_depth,
            max_tool_result_bytes,
            settings,
            mcp_servers,
            model,
            model_aliases,
            builtin_models,
            agents,
            providers,
            tools,
        })
    }

    /// Checks `model_aliases:` (no blank alias or id, no `inherit`) and expands `${VAR}` in
    /// the ids.
    fn model_aliases(
        &self,
        at: Position,
        aliases: std::collections::BTreeMap<String, String>,
        index: &Index,
    ) -> Result<std::collections::BTreeMap<String, String>> {
        let mut checked = std::collections::BTreeMap::new();
        for (alias, mut id) in aliases {
            let key = format!("model_aliases.{alias}");
            let invalid = |message: String| Error::Invalid {
                site: self.site_of(index, key.clone(), at),
                message,
            };
            let name = alias.trim();
            if name.is_empty() {
                return Err(invalid("a model alias must not be blank".into()));
            }
            if name.eq_ignore_ascii_case(subagent_model::INHERIT) {
                return Err(invalid(format!(
                    "`{name}` always means the parent's model and cannot be an alias"
                )));
            }
            self.expand(&mut id, at, &key)?;
            let id = id.trim().to_owned();
            if id.is_empty() {
                return Err(invalid(format!(
                    "the model id of alias `{name}` must not be empty"
                )));
            }
            checked.insert(name.to_owned(), id);
        }
        Ok(checked)
    }

    /// Checks `builtin_models:` (a built-in's name, a model that is not blank) and expands
    /// `${VAR}` in the models; `inherit` is the parent's model, as absent.
    fn builtin_models(
        &self,
        at: Position,
        models: std::collections::BTreeMap<String, String>,
        index: &Index,
    ) -> Result<std::collections::BTreeMap<String, String>> {
        let mut checked = std::collections::BTreeMap::new();
        for (name, mut model) in models {
            let key = format!("builtin_models.{name}");
            let invalid = |message: String| Error::Invalid {
                site: self.site_of(index, key.clone(), at),
                message,
            };
            if !crate::BUILTIN_AGENTS.contains(&name.as_str()) {
                return Err(invalid(format!(
                    "`{name}` is not a built-in agent (built in: {}); give an agent of your own its model in its definition",
                    crate::BUILTIN_AGENTS.join(", ")
                )));
            }
            self.expand(&mut model, at, &key)?;
            let model = model.trim().to_owned();
            if model.is_empty() {
                return Err(invalid(format!("the model of `{name}` must not be empty")));
            }
            if !model.eq_ignore_ascii_case(subagent_model::INHERIT) {
                checked.insert(name, model);
            }
        }
        Ok(checked)
    }

    fn model(
        &self,
        at: Position,
        mut model: ModelSection,
        base_dir: &Path,
        index: &Index,
    ) -> Result<ModelSection> {
        self.expand(&mut model.name, at, "model.name")?;
        if let Some(url) = &mut model.base_url {
            self.expand(url, at, "model.base_url")?;
        }
        if let Some(var) = &mut model.api_key_env {
            self.expand(var, at, "model.api_key_env")?;
        }
        if model.name.trim().is_empty() {
            return Err(Error::Invalid {
                site: self.site_of(index, "model.name".into(), at),
                message: "the model name must not be empty".into(),
            });
        }
        if model.max_answer_bytes == Some(0) {
            return Err(Error::Invalid {
                site: self.site_of(index, "model.max_answer_bytes".into(), at),
                message:
                    "an answer needs at least 1 byte (max_answer_bytes: 0 would fail every answer)"
                        .into(),
            });
        }
        if let Some(price) = &model.price {
            let prices = [
                Some(price.input),
                Some(price.output),
                price.cache_read,
                price.cache_write,
            ];
            if prices
                .into_iter()
                .flatten()
                .any(|p| !p.is_finite() || p < 0.0)
            {
                return Err(Error::Invalid {
                    site: self.site_of(index, "model.price".into(), at),
                    message: "a price is a number of US dollars per million tokens, 0 or more"
                        .into(),
                });
            }
        }
        if let Some(scenario) = model.scenario.take() {
            if model.kind != ModelKind::Scripted {
                return Err(Error::Invalid {
                    site: self.site_of(index, "model.scenario".into(), at),
                    message: format!(
                        "scenario is only for kind scripted (this model is {})",
                        model.kind.as_str()
                    ),
                });
            }
            let mut text = scenario.to_string_lossy().into_owned();
            self.expand(&mut text, at, "model.scenario")?;
            let path = base_dir.join(text);
            if !path.is_file() {
                return Err(Error::Invalid {
                    site: self.site_of(index, "model.scenario".into(), at),
                    message: format!("scenario file {} not found", path.display()),
                });
            }
            model.scenario = Some(path);
        }
        Ok(model)
    }

    fn factory(&self, kind: &str) -> Option<&Arc<dyn ProviderFactory>> {
        self.factories.iter().find(|factory| factory.kind() == kind)
    }

    fn providers(
        &self,
        rows: Vec<Spanned<ProviderRow>>,
        model_key: Option<String>,
        index: &Index,
    ) -> Result<Vec<ProviderRow>> {
        let mut out: Vec<ProviderRow> = Vec::with_capacity(rows.len());
        let mut noted = Vec::with_capacity(rows.len());
        for (i, spanned) in rows.into_iter().enumerate() {
            let at = position(&spanned);
            let mut row = spanned.value;
            row.location = at;
            let key = format!("providers[{i}]");
            self.expand(&mut row.name, at, format!("{key}.name").as_str())?;
            self.expand(&mut row.kind, at, format!("{key}.kind").as_str())?;
            let config_key = format!("{key}.config");
            let mut references = Vec::new();
            self.expand_config(&mut row.config, at, &config_key, false, &mut references)?;
            noted.push(references);
            if row.config.is_null() {
                row.config = Value::Object(serde_json::Map::new());
            }
            if row.name.trim().is_empty() {
                return Err(Error::Invalid {
                    site: self.site_of(index, format!("{key}.name"), at),
                    message: "a provider name must not be empty".into(),
                });
            }
            if let Some(first) = out.iter().find(|other| other.name == row.name) {
                return Err(Error::Duplicate {
                    site: self.site_of(index, format!("{key}.name"), at),
                    what: "provider",
                    name: row.name,
                    first: first.location,
                });
            }
            let kind_at = index.position_of(&format!("{key}.kind")).unwrap_or(at);
            let Some(factory) = self.factory(&row.kind) else {
                return Err(Error::UnknownKind {
                    site: self.site(kind_at, format!("{key}.kind")),
                    kind: row.kind,
                    known: self.factories.iter().map(|f| f.kind().to_owned()).collect(),
                });
            };
            let config_at = index.position_of(&config_key).unwrap_or(at);
            self.validate_config(factory.as_ref(), &row, config_at, &config_key, index)?;
            out.push(row);
        }
        self.refuse_secrets_in_argv(&out, &noted, model_key, index)?;
        Ok(out)
    }

    fn validate_config(
        &self,
        factory: &dyn ProviderFactory,
        row: &ProviderRow,
        config_at: Position,
        config_key: &str,
        index: &Index,
    ) -> Result<()> {
        let schema = factory.config_schema();
        let validator =
            jsonschema::validator_for(schema.as_value()).map_err(|error| Error::FactorySchema {
                site: self.site(config_at, config_key),
                kind: row.kind.clone(),
                message: error.to_string(),
            })?;
        let mut first: Option<(Position, String)> = None;
        let mut messages = Vec::new();
        for error in validator.iter_errors(&row.config).take(8) {
            let pointer = error.instance_path().to_string();
            let key = pointer_to_key(config_key, &pointer);
            if first.is_none() {
                let at = index.position_of(&key).unwrap_or(config_at);
                first = Some((at, key));
            }
            let shown = if pointer.is_empty() { "/" } else { &pointer };
            messages.push(format!("{shown}: {}", masked_message(&error)));
        }
        match first {
            None => Ok(()),
            Some((at, key)) => Err(Error::InvalidConfig {
                site: self.site(at, key),
                provider: row.name.clone(),
                kind: row.kind.clone(),
                messages,
            }),
        }
    }

    fn tools(
        &self,
        rows: Vec<Spanned<ToolRow>>,
        providers: &[ProviderRow],
        cap: u32,
        index: &Index,
    ) -> Result<Vec<ToolRow>> {
        let mut out: Vec<ToolRow> = Vec::with_capacity(rows.len());
        let mut kinds: HashMap<&str, &ProviderRow> = HashMap::new();
        for row in providers {
            kinds.insert(row.name.as_str(), row);
        }
        for (i, spanned) in rows.into_iter().enumerate() {
            let at = position(&spanned);
            let mut row = spanned.value;
            row.location = at;
            let key = format!("tools[{i}]");
            self.expand(&mut row.name, at, &format!("{key}.name"))?;
            self.expand(&mut row.provider, at, &format!("{key}.provider"))?;
            if let Some(fork) = &mut row.fork {
                self.expand(fork, at, &format!("{key}.fork"))?;
            }
            for (field, text) in [
                ("persona", row.persona.as_mut()),
                ("description", row.description.as_mut()),
            ] {
                if let Some(text) = text {
                    self.expand(text, at, &format!("{key}.{field}"))?;
                }
            }
            if let Some(filter) = &mut row.tool_filter {
                for pattern in filter
                    .allow
                    .iter_mut()
                    .flatten()
                    .chain(filter.deny.iter_mut())
                {
                    self.expand(pattern, at, &format!("{key}.tool_filter"))?;
                }
            }
            if row.budget.and_then(|b| b.max_tokens) == Some(0) {
                return Err(Error::Invalid {
                    site: self.site_of(index, format!("{key}.budget.max_tokens"), at),
                    message: "a token budget must be at least 1".into(),
                });
            }
            if row.name.trim().is_empty() {
                return Err(Error::Invalid {
                    site: self.site_of(index, format!("{key}.name"), at),
                    message: "a tool name must not be empty".into(),
                });
            }
            if let Some(first) = out.iter().find(|other| other.name == row.name) {
                return Err(Error::Duplicate {
                    site: self.site_of(index, format!("{key}.name"), at),
                    what: "tool",
                    name: row.name,
                    first: first.location,
                });
            }
            let Some(provider) = kinds.get(row.provider.as_str()) else {
                return Err(Error::UnknownProvider {
                    site: self.site_of(index, format!("{key}.provider"), at),
                    tool: row.name,
                    provider: row.provider,
                    known: providers.iter().map(|p| p.name.clone()).collect(),
                });
            };
            if provider.disabled {
                return Err(Error::DisabledProvider {
                    site: self.site_of(index, format!("{key}.provider"), at),
                    tool: row.name,
                    provider: row.provider,
                    row: provider.location,
                });
            }
            let capabilities = self
                .factory(&provider.kind)
                .map_or(Capabilities::NONE, |factory| factory.capabilities());
            for (field, set, capability) in [
                ("max_depth", row.max_depth.is_some(), Capability::DepthLimit),
                (
                    "tool_filter",
                    row.tool_filter.is_some(),
                    Capability::ToolFilter,
                ),
                ("persona", row.persona.is_some(), Capability::Persona),
            ] {
                if set && !capabilities.supports(capability) {
                    return Err(Error::UnsupportedField {
                        site: self.site_of(index, format!("{key}.{field}"), at),
                        tool: row.name,
                        provider: row.provider,
                        kind: provider.kind.clone(),
                        field,
                        capability,
                    });
                }
            }
            if let Some(fork) = &row.fork {
                let key = format!("{key}.fork");
                let Some(fork_row) = kinds.get(fork.as_str()) else {
                    return Err(Error::UnknownProvider {
                        site: self.site_of(index, key, at),
                        tool: row.name,
                        provider: fork.clone(),
                        known: providers.iter().map(|p| p.name.clone()).collect(),
                    });
                };
                if fork_row.disabled {
                    return Err(Error::DisabledProvider {
                        site: self.site_of(index, key, at),
                        tool: row.name,
                        provider: fork.clone(),
                        row: fork_row.location,
                    });
                }
                let inherits = self
                    .factory(&fork_row.kind)
                    .is_some_and(|factory| factory.capabilities().inherits_parent_context);
                if !inherits {
                    return Err(Error::Invalid {
                        site: self.site_of(index, key, at),
                        message: format!(
                            "tool \"{}\": fork provider \"{fork}\" (kind {}) does not continue the parent's conversation; name a provider of kind fork",
                            row.name, fork_row.kind
                        ),
                    });
                }
            }
            if let Some(max_depth) = row.max_depth
                && max_depth > cap
            {
                return Err(Error::DepthAboveCap {
                    site: self.site_of(index, format!("{key}.max_depth"), at),
                    tool: row.name,
                    max_depth,
                    cap,
                });
            }
            out.push(row);
        }
        Ok(out)
    }
}

/// A violation for people, the value masked. A value outside an `enum` lists every valid value
/// (the validator's own text shows three), `null` left out: it means the default.
fn masked_message(error: &jsonschema::ValidationError<'_>) -> String {
    if let jsonschema::error::ValidationErrorKind::Enum { options } = error.kind()
        && let Some(options) = options.as_array()
    {
        let valid: Vec<String> = options
            .iter()
            .filter(|option| !option.is_null())
            .map(ToString::to_string)
            .collect();
        return format!("value is not one of {}", valid.join(", "));
    }
    error.masked().to_string()
}

/// `providers[0].config` + `/a/0/b` → `providers[0].config.a[0].b`.
fn pointer_to_key(base: &str, pointer: &str) -> String {
    let mut key = base.to_owned();
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
            key.push_str(&format!("[{token}]"));
        } else {
            key.push('.');
            key.push_str(&token);
        }
    }
    key
}
