//! A project and a home in a temporary directory, and the files written into them.

use std::path::{Path, PathBuf};

use serde_json::Value;
use subagent_settings::{EffectiveSettings, FlagSettings, Locations};

/// A temporary directory holding `project/`, `home/` and `managed.json`'s place.
pub(crate) struct World {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub project: PathBuf,
    pub home: PathBuf,
}

impl World {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        // Canonical, as the callers pass paths.
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("work").join("project");
        let home = root.join("home");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Self {
            _dir: dir,
            root,
            project,
            home,
        }
    }

    pub(crate) fn managed(&self) -> PathBuf {
        self.root.join("managed-settings.json")
    }

    pub(crate) fn locations(&self) -> Locations {
        Locations {
            managed: Some(self.managed()),
            home: Some(self.home.clone()),
            project: self.project.clone(),
        }
    }

    /// Writes `value` (JSON) to `path`, creating its directory.
    pub(crate) fn write(&self, path: &Path, value: &Value) -> PathBuf {
        self.write_text(path, &serde_json::to_string_pretty(value).unwrap())
    }

    pub(crate) fn write_text(&self, path: &Path, text: &str) -> PathBuf {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        path.to_path_buf()
    }

    /// Marks `dir` trusted in `~/.claude.json`, as Claude Code's trust dialog does.
    pub(crate) fn claude_trusts(&self, dir: &Path, accepted: bool) {
        let value = serde_json::json!({
            "numStartups": 3,
            "projects": { dir.to_string_lossy(): { "hasTrustDialogAccepted": accepted, "allowedTools": [] } }
        });
        self.write(&self.home.join(".claude.json"), &value);
    }

    pub(crate) fn load(&self) -> EffectiveSettings {
        EffectiveSettings::load(&self.locations(), FlagSettings::default(), None).unwrap()
    }
}
