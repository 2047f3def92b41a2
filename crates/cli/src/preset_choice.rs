//! Which preset a command uses, the way git and cargo find their files: `--preset` >
//! `SUBAGENT_PRESET` > `.subagents/preset.yaml` up to the repository's root > the built-in
//! standard preset, and how a command names its choice on stderr.
//!
//! Deliberately not here: reading and checking the preset (`crate::setup::read_preset`).

use std::path::{Path, PathBuf};

use crate::args::PresetArgs;

/// The name of the variable that names a preset when `--preset` is not given.
pub(crate) const PRESET_VAR: &str = "SUBAGENT_PRESET";

/// Where a project keeps its preset, below a directory between the working directory and its
/// repository's root.
pub(crate) const PROJECT_PRESET: &str = ".subagents/preset.yaml";

/// Where the preset a command uses came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PresetSource {
    /// `--preset FILE`.
    Flag,
    /// `SUBAGENT_PRESET`.
    Variable,
    /// `.subagents/preset.yaml`, found walking up from the working directory (`--cwd` when
    /// `by_flag`).
    Found {
        /// Whether the walk started at `--cwd` (else the current directory).
        by_flag: bool,
    },
    /// None of those: the built-in copy of `presets/standard.yaml`.
    BuiltIn,
}

/// The preset a command uses: its file (none for the built-in one) and where that came from.
#[derive(Clone, Debug)]
pub(crate) struct PresetChoice {
    /// The file, as given (`--preset`, `SUBAGENT_PRESET`) or found (absolute).
    pub path: Option<PathBuf>,
    /// Where it came from.
    pub source: PresetSource,
}

impl PresetChoice {
    /// The line each command prints on stderr: which preset, and why that one.
    pub(crate) fn line(&self) -> String {
        let path = self.path.as_deref().map(Path::display);
        match (&self.source, path) {
            (PresetSource::Flag, Some(path)) => format!("preset: {path} (--preset)"),
            (PresetSource::Variable, Some(path)) => format!("preset: {path} ({PRESET_VAR})"),
            (PresetSource::Found { by_flag }, Some(path)) => format!(
                "preset: {path} (found from {})",
                if *by_flag {
                    "--cwd"
                } else {
                    "the working directory"
                }
            ),
            _ => format!(
                "preset: built-in standard (no --preset, {PRESET_VAR} or {PROJECT_PRESET} up to the repository root)"
            ),
        }
    }
}

/// The preset a command uses, the way git and cargo find their files: `--preset` >
/// `SUBAGENT_PRESET` > `.subagents/preset.yaml` in `start` or a directory above it up to its
/// repository's root (the first directory holding `.git`; outside a repository, `start` only) >
/// the built-in standard preset. `start` is `--cwd` when `by_flag`, else the current directory.
pub(crate) fn choose_preset(
    args: &PresetArgs,
    start: &Path,
    by_flag: bool,
    get: &dyn Fn(&str) -> Option<String>,
) -> PresetChoice {
    if let Some(path) = &args.preset {
        return PresetChoice {
            path: Some(path.clone()),
            source: PresetSource::Flag,
        };
    }
    if let Some(path) = get(PRESET_VAR) {
        return PresetChoice {
            path: Some(PathBuf::from(path)),
            source: PresetSource::Variable,
        };
    }
    match find_project_preset(start) {
        Some(path) => PresetChoice {
            path: Some(path),
            source: PresetSource::Found { by_flag },
        },
        None => PresetChoice {
            path: None,
            source: PresetSource::BuiltIn,
        },
    }
}

/// `.subagents/preset.yaml` in `start` or above it, up to its repository's root; outside a
/// repository, in `start` only (a preset planted in a shared parent such as `/tmp` is never
/// picked up).
pub(crate) fn find_project_preset(start: &Path) -> Option<PathBuf> {
    // A repository: a `.git` file (a worktree) or a `.git` directory with a `HEAD`. An empty
    // `.git` directory is none (codex's workspace-write sandbox leaves one in `/tmp`), or the
    // walk would climb into a shared parent and pick a planted preset up.
    let repository = start.ancestors().find(|dir| {
        let git = dir.join(".git");
        git.is_file() || git.join("HEAD").is_file()
    });
    let dirs: Vec<&Path> = match repository {
        Some(root) => start
            .ancestors()
            .take_while(|dir| dir.starts_with(root))
            .collect(),
        None => vec![start],
    };
    dirs.into_iter()
        .map(|dir| dir.join(PROJECT_PRESET))
        .find(|path| path.is_file())
}
