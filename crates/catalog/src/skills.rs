//! Skill folders from every source: found, ranked, listed and read on demand.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock};

use serde::Serialize;
use subagent_core::Error as CoreError;
use subagent_core::skills::{LoadedSkill, SkillDirectory, SkillSummary};

use crate::location::Location;
use crate::parse::read_text;
use crate::skill::{SKILL_FILE, parse_skill, skill_body, skill_files};
use crate::source::{Source, SourceDir};
use crate::warning::{Warning, WarningKind};

/// The most files of a skill folder a `Skill` call lists.
pub const MAX_SKILL_FILES: usize = 100;

/// The standard skill directories, from a home directory and a project root the caller chose.
///
/// Order, which is also the order duplicates within a source are resolved in (first wins):
/// `~/.subagents/skills`, `~/.claude/skills`, `<project>/.subagents/skills`,
/// `<project>/.claude/skills`.
pub fn standard_skill_dirs(home: Option<&Path>, project_root: Option<&Path>) -> Vec<SourceDir> {
    let mut dirs = Vec::new();
    if let Some(home) = home {
        dirs.push(SourceDir::new(Source::User, home.join(".subagents/skills")));
        dirs.push(SourceDir::new(Source::User, home.join(".claude/skills")));
    }
    if let Some(project) = project_root {
        dirs.push(SourceDir::new(
            Source::Project,
            project.join(".subagents/skills"),
        ));
        dirs.push(SourceDir::new(
            Source::Project,
            project.join(".claude/skills"),
        ));
    }
    dirs
}

/// How a source ranks for skills: Claude Code's order, policy over the user's over the
/// project's (the other way round from agent definitions, where the project's win).
fn rank(source: Source) -> u8 {
    match source {
        Source::Policy => 0,
        Source::Flag => 1,
        Source::User => 2,
        Source::Project => 3,
        Source::Plugin => 4,
        Source::Builtin => 5,
    }
}

/// One effective skill and those of the same name it overrides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkillEntry {
    /// The skill in effect.
    #[serde(flatten)]
    pub summary: SkillSummary,
    /// Kept from the model (`disable-model-invocation: true`): listed here, never to the model.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    /// Folders of the same name it overrides, highest priority first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overridden: Vec<PathBuf>,
}

#[derive(Debug, Default)]
struct Loaded {
    entries: Vec<SkillEntry>,
    warnings: Vec<Warning>,
    /// Folders that did not load, by name.
    failed: Vec<(String, Warning)>,
}

/// The skills of every configured directory, ranked (see [`standard_skill_dirs`]).
///
/// Listing order ([`Skills::entries`], [`SkillDirectory::skills`]): by source as Claude Code
/// lists them (the user's, then the project's), then by name. A `SKILL.md` is read once to list
/// its skill; its body is read again only when a `Skill` call or a preload asks
/// ([`SkillDirectory::load`]).
#[derive(Debug)]
pub struct Skills {
    dirs: Vec<SourceDir>,
    loaded: RwLock<Loaded>,
}

impl Skills {
    /// Reads every directory's skill folders. Never fails: what cannot be read is a warning.
    pub fn load(dirs: Vec<SourceDir>) -> Self {
        let loaded = load(&dirs);
        Self {
            dirs,
            loaded: RwLock::new(loaded),
        }
    }

    /// Reads the directories again.
    pub fn reload(&self) {
        let fresh = load(&self.dirs);
        *self.loaded.write().unwrap_or_else(PoisonError::into_inner) = fresh;
    }

    /// The effective skills, hidden ones included, in listing order.
    pub fn entries(&self) -> Vec<SkillEntry> {
        self.read(|loaded| loaded.entries.clone())
    }

    /// Every warning of the last load: folders in reading order, then duplicates.
    pub fn warnings(&self) -> Vec<Warning> {
        self.read(|loaded| loaded.warnings.clone())
    }

    /// The warnings of the skill folders named `name` that did not load.
    pub fn failed(&self, name: &str) -> Vec<Warning> {
        self.read(|loaded| {
            loaded
                .failed
                .iter()
                .filter(|(failed, _)| failed == name)
                .map(|(_, warning)| warning.clone())
                .collect()
        })
    }

    fn read<T>(&self, f: impl FnOnce(&Loaded) -> T) -> T {
        f(&self.loaded.read().unwrap_or_else(PoisonError::into_inner))
    }
}

impl SkillDirectory for Skills {
    fn skills(&self) -> Vec<SkillSummary> {
        self.read(|loaded| {
            loaded
                .entries
                .iter()
                .filter(|entry| !entry.hidden)
                .map(|entry| entry.summary.clone())
                .collect()
        })
    }

    fn load(&self, name: &str) -> subagent_core::Result<LoadedSkill> {
        let listed = self.skills();
        let unknown = |reason: Option<String>| CoreError::UnknownSkill {
            name: name.to_owned(),
            available: listed.iter().map(|skill| skill.name.clone()).collect(),
            reason,
        };
        let found = listed
            .iter()
            .find(|skill| skill.name == name)
            .or_else(|| listed.iter().find(|skill| skill.answers_to(name)));
        let Some(summary) = found else {
            let why = self.failed(name).first().map(ToString::to_string);
            return Err(unknown(why));
        };
        let path = summary.dir.join(SKILL_FILE);
        let text = read_text(&path).map_err(|e| unknown(Some(e.to_string())))?;
        Ok(LoadedSkill {
            summary: summary.clone(),
            body: skill_body(&text).to_owned(),
            files: skill_files(&summary.dir, MAX_SKILL_FILES),
        })
    }
}

fn load(dirs: &[SourceDir]) -> Loaded {
    let mut loaded = Loaded::default();
    let mut found: Vec<SkillEntry> = Vec::new();
    // A folder reached twice (the home directory being the project) counts once, as the user's.
    let mut seen: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        for folder in folders(dir, &mut loaded.warnings) {
            let canonical = std::fs::canonicalize(&folder).unwrap_or_else(|_| folder.clone());
            if seen.contains(&canonical) {
                continue;
            }
            seen.push(canonical);
            let path = folder.join(SKILL_FILE);
            let name = folder
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let parsed = read_text(&path).and_then(|text| parse_skill(&path, &text, dir.source));
            match parsed {
                Ok(parsed) => {
                    loaded.warnings.extend(parsed.warnings);
                    found.push(SkillEntry {
                        summary: parsed.summary,
                        hidden: parsed.hidden,
                        overridden: Vec::new(),
                    });
                }
                Err(error) => {
                    let warning = Warning::from(error);
                    loaded.failed.push((name, warning.clone()));
                    loaded.warnings.push(warning);
                }
            }
        }
    }
    // Per name, the first folder of each source; later ones in the same source are reported.
    let mut by_name: BTreeMap<String, BTreeMap<u8, SkillEntry>> = BTreeMap::new();
    for entry in found {
        let source = Source::ALL
            .into_iter()
            .find(|source| source.as_str() == entry.summary.source)
            .unwrap_or_default();
        let per_source = by_name.entry(entry.summary.name.clone()).or_default();
        match per_source.get(&rank(source)) {
            Some(first) => loaded.warnings.push(Warning::new(
                WarningKind::Duplicate,
                entry.summary.dir.join(SKILL_FILE),
                Location::NONE,
                format!(
                    "skill `{}` is defined twice in the {} source: {} and {}; using {}",
                    entry.summary.name,
                    source,
                    first.summary.dir.display(),
                    entry.summary.dir.display(),
                    first.summary.dir.display()
                ),
            )),
            None => {
                per_source.insert(rank(source), entry);
            }
        }
    }
    let mut entries: Vec<SkillEntry> = by_name
        .into_values()
        .filter_map(|per_source| {
            let mut ranked = per_source.into_values();
            let mut first = ranked.next()?;
            first.overridden = ranked.map(|entry| entry.summary.dir).collect();
            Some(first)
        })
        .collect();
    entries.sort_by(|a, b| {
        let key = |entry: &SkillEntry| {
            let source = Source::ALL
                .into_iter()
                .find(|source| source.as_str() == entry.summary.source)
                .unwrap_or_default();
            (rank(source), entry.summary.name.clone())
        };
        // The user's first, as Claude Code lists them.
        key(a)
            .cmp(&key(b))
            .then_with(|| a.summary.dir.cmp(&b.summary.dir))
    });
    loaded.entries = entries;
    loaded
}

/// The skill folders of one directory (its subdirectories holding a `SKILL.md`), in name order.
fn folders(dir: &SourceDir, warnings: &mut Vec<Warning>) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(&dir.path) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            warnings.push(Warning::new(
                WarningKind::Unreadable,
                &dir.path,
                Location::NONE,
                e.to_string(),
            ));
            return Vec::new();
        }
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .map(|entry| entry.path())
        .filter(|path| std::fs::metadata(path).is_ok_and(|meta| meta.is_dir()))
        .filter(|path| path.join(SKILL_FILE).exists())
        .collect();
    folders.sort();
    folders
}
