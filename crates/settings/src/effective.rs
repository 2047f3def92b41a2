//! Every source read and merged into the settings a run uses, each value with its source.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::file::{MAX_SETTINGS_BYTES, SettingsFile, parse_json};
use crate::hooks::Hooks;
use crate::mode::PermissionMode;
use crate::permissions::Permissions;
use crate::rule::Rule;
use crate::scope::{Locations, Scope, Sourced};
use crate::trust::{Trust, TrustState};

/// What the command line says, as claude takes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlagSettings {
    /// `--allowedTools` values; each may list several rules separated by commas or spaces
    /// (outside parentheses), as claude accepts.
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools` values, the same way.
    pub disallowed_tools: Vec<String>,
    /// `--permission-mode` (Claude Code's names, or ours).
    pub permission_mode: Option<String>,
    /// `--settings`: a JSON object (text starting with `{`) or a file (relative to the project).
    pub settings: Option<String>,
}

impl FlagSettings {
    /// The rules of one `--allowedTools`/`--disallowedTools` value: split at commas and
    /// whitespace outside parentheses (`"Bash(npm run test:*) Edit"` is two rules).
    pub fn split_tools(value: &str) -> Vec<String> {
        let mut rules = Vec::new();
        let (mut current, mut depth) = (String::new(), 0usize);
        for c in value.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth == 0 && (c == ',' || c.is_whitespace()) {
                if !current.trim().is_empty() {
                    rules.push(current.trim().to_owned());
                }
                current.clear();
            } else {
                current.push(c);
            }
        }
        if !current.trim().is_empty() {
            rules.push(current.trim().to_owned());
        }
        rules
    }
}

/// A value a source set that does not count, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ignored {
    /// The key (`permissions.allow`, `permissions.defaultMode`).
    pub key: String,
    /// The value as written.
    pub value: String,
    /// Its scope.
    pub scope: Scope,
    /// Its file.
    pub file: Option<PathBuf>,
    /// Why it does not count.
    pub reason: String,
}

/// One file looked at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileRead {
    /// Its scope.
    pub scope: Scope,
    /// The path.
    pub path: PathBuf,
    /// Whether it exists (a missing file is simply absent).
    pub found: bool,
}

/// The settings a run uses: every source merged, each value with where it came from.
#[derive(Clone, Debug, Serialize)]
pub struct EffectiveSettings {
    /// Permission rules, mode and directories.
    pub permissions: Permissions,
    /// Hooks of every source (all run; highest scope first).
    pub hooks: Hooks,
    /// Environment variables, each from the highest scope that sets it.
    pub env: BTreeMap<String, Sourced<String>>,
    /// Values that do not count (a project's `allow` rules before it is trusted).
    pub ignored: Vec<Ignored>,
    /// What the user should know (the untrusted-project warning, unknown hook events).
    pub warnings: Vec<String>,
    /// Whether the project is trusted.
    pub trust: TrustState,
    /// Unknown top-level keys, kept and ignored.
    pub unknown_keys: Vec<Sourced<String>>,
    /// Every file looked at, in precedence order.
    pub files: Vec<FileRead>,
    /// Where the files are (for showing paths).
    #[serde(skip)]
    pub locations: Locations,
}

impl EffectiveSettings {
    /// Reads every source and merges them as Claude Code does: the rule lists and
    /// `additionalDirectories` combined over scopes, `defaultMode` and each `env` key from the
    /// highest scope that sets it, hooks from every scope. A project's (`ProjectLocal`,
    /// `Project`) `allow` rules, a mode wider than `default` and additional directories count
    /// only once the project is trusted; its deny and ask rules and its hooks count at once.
    ///
    /// # Errors
    /// Those of [`SettingsFile::load`] for any file, [`Error::Rule`] for a flag's rule,
    /// [`Error::Key`] for an unknown `--permission-mode`, [`Error::Read`] for a `--settings`
    /// file that is missing or unreadable.
    pub fn load(
        locations: &Locations,
        flags: FlagSettings,
        preset: Option<&serde_json::Value>,
    ) -> Result<Self> {
        let mut sources = Vec::new();
        let mut files = Vec::new();
        let all = locations.files();
        let (managed, rest): (Vec<_>, Vec<_>) = all
            .into_iter()
            .partition(|(scope, _)| *scope == Scope::Managed);
        for (scope, path) in managed {
            read_file(scope, path, &mut sources, &mut files)?;
        }
        sources.push(flag_settings(&flags)?);
        if let Some(text) = &flags.settings {
            sources.push(settings_flag(text, locations, &mut files)?);
        }
        if let Some(preset) = preset {
            sources.push(SettingsFile::from_value(
                preset,
                Scope::Preset,
                None,
                "preset settings",
            )?);
        }
        for (scope, path) in rest {
            read_file(scope, path, &mut sources, &mut files)?;
        }
        let trust = match &locations.home {
            Some(home) => Trust::check(&locations.project, home),
            None => TrustState::default(),
        };
        let mut effective = Self {
            permissions: Permissions::default(),
            hooks: Hooks::default(),
            env: BTreeMap::new(),
            ignored: Vec::new(),
            warnings: trust.warnings.clone(),
            trust,
            unknown_keys: Vec::new(),
            files,
            locations: locations.clone(),
        };
        for source in sources {
            effective.merge(source);
        }
        Ok(effective)
    }

    fn merge(&mut self, source: SettingsFile) {
        let (scope, file) = (source.scope, source.file.clone());
        let sourced = |value| Sourced::new(value, scope, file.clone());
        let untrusted = scope.is_project() && !self.trust.trusted;
        let mut ignored: Vec<(&str, String)> = Vec::new();
        for rule in source.deny {
            self.permissions.deny.push(sourced(rule));
        }
        for rule in source.ask {
            self.permissions.ask.push(sourced(rule));
        }
        for rule in source.allow {
            if untrusted {
                ignored.push(("permissions.allow", rule.text().to_owned()));
            } else {
                self.permissions.allow.push(sourced(rule));
            }
        }
        if let Some(mode) = source.default_mode {
            if untrusted && mode.widens() {
                ignored.push(("permissions.defaultMode", mode.name().to_owned()));
            } else if self.permissions.default_mode.is_none() {
                self.permissions.default_mode = Some(Sourced::new(mode, scope, file.clone()));
            }
        }
        for dir in source.additional_directories {
            if untrusted {
                ignored.push(("permissions.additionalDirectories", dir));
            } else {
                self.permissions.additional_directories.push(Sourced::new(
                    dir,
                    scope,
                    file.clone(),
                ));
            }
        }
        for (name, value) in source.env {
            self.env
                .entry(name)
                .or_insert_with(|| Sourced::new(value, scope, file.clone()));
        }
        for key in source.other.keys() {
            self.unknown_keys
                .push(Sourced::new(key.clone(), scope, file.clone()));
        }
        self.warnings.extend(source.hooks.warnings.iter().cloned());
        self.hooks.extend(source.hooks);
        self.ignore(&ignored, scope, file.as_deref());
    }

    /// Records what an untrusted project set, with Claude Code's warning adapted.
    fn ignore(&mut self, ignored: &[(&str, String)], scope: Scope, file: Option<&Path>) {
        let shown = file.map_or_else(|| scope.to_string(), |f| self.locations.show(f));
        let reason = "this workspace has not been trusted";
        let mut keys: Vec<&str> = ignored.iter().map(|(key, _)| *key).collect();
        keys.dedup();
        for key in keys {
            let count = ignored.iter().filter(|(k, _)| *k == key).count();
            let entries = if count == 1 { "entry" } else { "entries" };
            let claude = self.locations.home.as_deref().map_or_else(
                || "~/.claude.json".to_owned(),
                |home| home.join(".claude.json").display().to_string(),
            );
            self.warnings.push(format!(
                "Ignoring {count} {key} {entries} from {shown}: {reason}. Run `subagent trust` \
                 in {project} to trust it (recorded in ~/.subagents/trusted-projects.json), or \
                 set projects[{project:?}].hasTrustDialogAccepted: true in {claude}.",
                project = self.locations.project.display().to_string(),
            ));
        }
        for (key, value) in ignored {
            self.ignored.push(Ignored {
                key: (*key).to_owned(),
                value: value.clone(),
                scope,
                file: file.map(Path::to_path_buf),
                reason: reason.to_owned(),
            });
        }
    }
}

fn read_file(
    scope: Scope,
    path: PathBuf,
    sources: &mut Vec<SettingsFile>,
    files: &mut Vec<FileRead>,
) -> Result<()> {
    let loaded = SettingsFile::load(&path, scope)?;
    files.push(FileRead {
        scope,
        path,
        found: loaded.is_some(),
    });
    sources.extend(loaded);
    Ok(())
}

/// `--allowedTools`, `--disallowedTools` and `--permission-mode` as one source.
fn flag_settings(flags: &FlagSettings) -> Result<SettingsFile> {
    let mut settings = SettingsFile::from_value(&serde_json::Value::Null, Scope::Flags, None, "")?;
    for (flag, values, list) in [
        ("--allowedTools", &flags.allowed_tools, &mut settings.allow),
        (
            "--disallowedTools",
            &flags.disallowed_tools,
            &mut settings.deny,
        ),
    ] {
        for text in values.iter().flat_map(|v| FlagSettings::split_tools(v)) {
            list.push(Rule::parse(&text).map_err(|e| e.rule_at(format!("{flag}: ")))?);
        }
    }
    if let Some(mode) = &flags.permission_mode {
        let names: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.name()).collect();
        settings.default_mode = Some(PermissionMode::parse(mode).ok_or_else(|| Error::Key {
            path: "command line".into(),
            key: "--permission-mode".into(),
            message: format!("{mode:?} is not one of {}", names.join(", ")),
        })?);
    }
    Ok(settings)
}

/// `--settings FILE|JSON`.
fn settings_flag(
    text: &str,
    locations: &Locations,
    files: &mut Vec<FileRead>,
) -> Result<SettingsFile> {
    if text.trim_start().starts_with('{') {
        let value = parse_json(text, "--settings")?;
        return SettingsFile::from_value(&value, Scope::Flags, None, "--settings");
    }
    let path = locations.project.join(text);
    let text = subagent_session::read_user_text(&path, MAX_SETTINGS_BYTES).map_err(|source| {
        Error::Read {
            path: path.clone(),
            source,
        }
    })?;
    files.push(FileRead {
        scope: Scope::Flags,
        path: path.clone(),
        found: true,
    });
    SettingsFile::parse(&text, &path, Scope::Flags)
}
