//! Claude Code's settings as the commands that run agents read them (docs/permissions.md):
//! where the files are, the flags on top, the rules the runtime applies and the mode a run
//! starts in.
//!
//! Deliberately not here: parsing and merging the files (`subagent-settings`), applying the
//! rules to a call (`subagent-runtime`'s permission policy), the `settings` and `trust`
//! commands (`commands::settings`).

use std::path::{Path, PathBuf};

use subagent_core::PermissionMode;
use subagent_runtime::SettingsRules;
use subagent_settings::{EffectiveSettings, FlagSettings, Locations};

use crate::Refusal;
use crate::args::SettingsFlags;

/// The variable that names another managed settings file (tests, and hosts that keep it
/// elsewhere); default `/etc/claude-code/managed-settings.json`.
pub(crate) const MANAGED_SETTINGS_VAR: &str = "SUBAGENT_MANAGED_SETTINGS";

/// Where the settings files of the project in `cwd` are: the managed policy file, the home
/// (`HOME`, when absolute), the project.
pub(crate) fn settings_locations(cwd: &Path, get: &dyn Fn(&str) -> Option<String>) -> Locations {
    let home = get("HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    let mut locations = Locations::new(cwd, home);
    if let Some(managed) = get(MANAGED_SETTINGS_VAR).filter(|v| !v.is_empty()) {
        locations.managed = Some(PathBuf::from(managed));
    }
    locations
}

/// The settings the runs of the project in `cwd` obey (docs/permissions.md): every settings
/// file, the preset's `settings:` and the command line's flags, merged.
pub(crate) fn load_settings(
    cwd: &Path,
    flags: &SettingsFlags,
    preset: Option<&serde_json::Value>,
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<EffectiveSettings, Refusal> {
    let flags = FlagSettings {
        allowed_tools: flags.allowed_tools.clone(),
        disallowed_tools: flags.disallowed_tools.clone(),
        permission_mode: None,
        settings: flags.settings.clone(),
    };
    EffectiveSettings::load(&settings_locations(cwd, get), flags, preset).map_err(|error| {
        Refusal::new(
            crate::RefusalCode::Settings(error.code()),
            error.to_string(),
        )
    })
}

/// The rules of `settings` as the runtime applies them.
pub(crate) fn settings_rules(settings: &EffectiveSettings) -> SettingsRules {
    SettingsRules {
        permissions: settings.permissions.clone(),
        project_root: settings.locations.project.clone(),
        home: settings.locations.home.clone(),
        hooks: settings.hooks.clone(),
        env: settings
            .env
            .iter()
            .map(|(name, value)| (name.clone(), value.value.clone()))
            .collect(),
        additional_dirs: settings
            .permissions
            .additional_directories
            .iter()
            .map(|dir| absolute_dir(&dir.value, settings))
            .collect(),
    }
}

/// An `additionalDirectories` entry as a path: `~/x` in the home, a relative one in the project.
fn absolute_dir(dir: &str, settings: &EffectiveSettings) -> PathBuf {
    let locations = &settings.locations;
    match (dir.strip_prefix("~/"), &locations.home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => locations.project.join(dir),
    }
}

/// The permission mode a run starts in: the flag's, else the settings' `defaultMode`, else
/// `default`.
pub(crate) fn permission_mode(
    flag: Option<PermissionMode>,
    settings: &EffectiveSettings,
) -> PermissionMode {
    flag.or_else(|| {
        settings
            .permissions
            .default_mode
            .as_ref()
            .and_then(|mode| PermissionMode::parse(mode.value.name()))
    })
    .unwrap_or_default()
}
