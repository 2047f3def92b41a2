//! One settings file (or a preset's `settings:`, or `--settings JSON`): the keys honoured,
//! checked; the rest kept.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::hooks::Hooks;
use crate::mode::PermissionMode;
use crate::rule::Rule;
use crate::scope::Scope;

/// The most a settings file may hold.
pub const MAX_SETTINGS_BYTES: u64 = 4 << 20;

/// One parsed settings source.
#[derive(Clone, Debug, Serialize)]
pub struct SettingsFile {
    /// Its scope.
    pub scope: Scope,
    /// The file; `None` for a preset's `settings:` or `--settings JSON`.
    pub file: Option<PathBuf>,
    /// `permissions.allow`.
    pub allow: Vec<Rule>,
    /// `permissions.ask`.
    pub ask: Vec<Rule>,
    /// `permissions.deny`.
    pub deny: Vec<Rule>,
    /// `permissions.defaultMode`.
    pub default_mode: Option<PermissionMode>,
    /// `permissions.additionalDirectories`, as written.
    pub additional_directories: Vec<String>,
    /// `hooks`.
    pub hooks: Hooks,
    /// `env`.
    pub env: BTreeMap<String, String>,
    /// Every other top-level key, kept as it is and ignored.
    pub other: Map<String, Value>,
    /// Every other key of `permissions`, kept and ignored.
    pub other_permissions: Map<String, Value>,
}

impl SettingsFile {
    /// Reads the file at `path`; `Ok(None)` when it does not exist.
    ///
    /// # Errors
    /// [`Error::Read`] when it exists but cannot be read (through
    /// `subagent_session::read_user_text`: regular files only, at most [`MAX_SETTINGS_BYTES`]),
    /// and those of [`SettingsFile::parse`].
    pub fn load(path: &Path, scope: Scope) -> Result<Option<Self>> {
        match subagent_session::read_user_text(path, MAX_SETTINGS_BYTES) {
            Ok(text) => Self::parse(&text, path, scope).map(Some),
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.kind() == std::io::ErrorKind::NotADirectory =>
            {
                Ok(None)
            }
            Err(source) => Err(Error::Read {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Parses the text of the settings file at `path` (whitespace only is an empty file).
    ///
    /// # Errors
    /// [`Error::Syntax`] (`path:line:column: message`) for text that is not JSON, and those of
    /// [`SettingsFile::from_value`].
    pub fn parse(text: &str, path: &Path, scope: Scope) -> Result<Self> {
        let label = path.display().to_string();
        let value = parse_json(text, &label)?;
        Self::from_value(&value, scope, Some(path), &label)
    }

    /// Reads settings from a JSON value (a preset's `settings:`); `label` names it in errors.
    ///
    /// # Errors
    /// [`Error::Key`] (`SETTINGS_INVALID`) for a known key of the wrong type,
    /// [`Error::Rule`] (`PERMISSION_RULE_INVALID`) for a rule that does not parse,
    /// [`Error::HookMatcher`] for a hook matcher that is not a regular expression.
    pub fn from_value(
        value: &Value,
        scope: Scope,
        file: Option<&Path>,
        label: &str,
    ) -> Result<Self> {
        let key_error = |key: &str, message: &str| Error::Key {
            path: label.to_owned(),
            key: key.to_owned(),
            message: message.to_owned(),
        };
        let mut settings = Self {
            scope,
            file: file.map(Path::to_path_buf),
            allow: Vec::new(),
            ask: Vec::new(),
            deny: Vec::new(),
            default_mode: None,
            additional_directories: Vec::new(),
            hooks: Hooks::default(),
            env: BTreeMap::new(),
            other: Map::new(),
            other_permissions: Map::new(),
        };
        let object = match value {
            Value::Null => return Ok(settings),
            Value::Object(object) => object,
            _ => return Err(key_error("(top level)", "must be a JSON object")),
        };
        for (key, value) in object {
            match key.as_str() {
                "permissions" => settings.permissions(value, label)?,
                "hooks" => settings.hooks = Hooks::from_value(value, scope, file, label)?,
                "env" => {
                    let Some(env) = value.as_object() else {
                        return Err(key_error("env", "must be an object of strings"));
                    };
                    for (name, value) in env {
                        let Some(value) = value.as_str() else {
                            return Err(key_error(&format!("env.{name}"), "must be a string"));
                        };
                        settings.env.insert(name.clone(), value.to_owned());
                    }
                }
                _ => {
                    settings.other.insert(key.clone(), value.clone());
                }
            }
        }
        Ok(settings)
    }

    fn permissions(&mut self, value: &Value, label: &str) -> Result<()> {
        let key_error = |key: &str, message: &str| Error::Key {
            path: label.to_owned(),
            key: format!("permissions.{key}"),
            message: message.to_owned(),
        };
        let Some(object) = value.as_object() else {
            return Err(Error::Key {
                path: label.to_owned(),
                key: "permissions".into(),
                message: "must be an object".into(),
            });
        };
        for (key, value) in object {
            match key.as_str() {
                "allow" | "ask" | "deny" => {
                    let strings = strings(value)
                        .ok_or_else(|| key_error(key, "must be an array of rule strings"))?;
                    let mut rules = Vec::new();
                    for (index, text) in strings.into_iter().enumerate() {
                        let rule = Rule::parse(text).map_err(|e| {
                            e.rule_at(format!("{label}: permissions.{key}[{index}]: "))
                        })?;
                        rules.push(rule);
                    }
                    match key.as_str() {
                        "allow" => self.allow = rules,
                        "ask" => self.ask = rules,
                        _ => self.deny = rules,
                    }
                }
                "defaultMode" => {
                    let names: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.name()).collect();
                    let mode = value
                        .as_str()
                        .and_then(PermissionMode::parse)
                        .ok_or_else(|| {
                            key_error(key, &format!("must be one of {}", names.join(", ")))
                        })?;
                    self.default_mode = Some(mode);
                }
                "additionalDirectories" => {
                    let dirs = strings(value)
                        .ok_or_else(|| key_error(key, "must be an array of directory strings"))?;
                    self.additional_directories = dirs.into_iter().map(str::to_owned).collect();
                }
                _ => {
                    self.other_permissions.insert(key.clone(), value.clone());
                }
            }
        }
        Ok(())
    }
}

/// Parses JSON text; whitespace only is `null` (an empty settings file).
pub(crate) fn parse_json(text: &str, label: &str) -> Result<Value> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(text).map_err(|e| Error::Syntax {
        path: label.to_owned(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })
}

/// serde_json's message without its own ` at line L column C` (the error puts them first).
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

fn strings(value: &Value) -> Option<Vec<&str>> {
    value.as_array()?.iter().map(Value::as_str).collect()
}
