//! The catalog: every source loaded, priorities applied, duplicates reported, reloadable.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use serde::Serialize;
use subagent_core::agents::{AgentDirectory, AgentProfile};
use subagent_core::memory::MemoryRoots;

use crate::builtin::{BUILTIN_NAMES, BuiltinOptions, builtins};
use crate::capability::ProviderTable;
use crate::definition::Definition;
use crate::location::Location;
use crate::parse::{declared_name, parse_definition, read_text};
use crate::source::{Source, SourceDir};
use crate::warning::{Warning, WarningKind};

/// How deep a directory of definitions is read (guards against symlink loops).
pub const MAX_DIR_DEPTH: usize = 16;

/// What a catalog reads. [`Catalog::reload`] reads the same again.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CatalogConfig {
    /// The built-ins and their options; `None` = no built-ins.
    pub builtins: Option<BuiltinOptions>,
    /// Directories (or single files) of definitions, each with its source. Within one source,
    /// earlier entries come first when duplicates are resolved.
    pub dirs: Vec<SourceDir>,
    /// Definitions given as values (a preset's, a plugin's), each in its own `source`. Within one
    /// source they come before the directories.
    pub definitions: Vec<Definition>,
    /// Warnings about `definitions` found by whoever read them (an inline definition's unknown
    /// field), reported with the load's own.
    pub definition_warnings: Vec<Warning>,
    /// Providers to check definitions against (see [`crate::capability_warnings`]); `None` = no
    /// check.
    pub providers: Option<ProviderTable>,
    /// Where the `memory:` scopes' directories are (the user's home, the project); a
    /// definition whose scope has no root here gets no memory.
    pub memory: MemoryRoots,
}

impl Default for CatalogConfig {
    fn default() -> Self {
        Self {
            builtins: Some(BuiltinOptions::default()),
            dirs: Vec::new(),
            definitions: Vec::new(),
            definition_warnings: Vec::new(),
            providers: None,
            memory: MemoryRoots::default(),
        }
    }
}

impl CatalogConfig {
    /// The built-ins with default options, nothing else.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a directory (or file) of one source.
    #[must_use]
    pub fn dir(mut self, source: Source, path: impl Into<PathBuf>) -> Self {
        self.dirs.push(SourceDir::new(source, path));
        self
    }

    /// Adds directories (e.g. [`crate::standard_dirs`]).
    #[must_use]
    pub fn dirs(mut self, dirs: impl IntoIterator<Item = SourceDir>) -> Self {
        self.dirs.extend(dirs);
        self
    }

    /// Adds a definition given as a value.
    #[must_use]
    pub fn definition(mut self, definition: Definition) -> Self {
        self.definitions.push(definition);
        self
    }

    /// Adds definitions given as values with the warnings their reading gave (a
    /// [`parse_agents_json`](crate::parse_agents_json) result).
    #[must_use]
    pub fn parsed(mut self, parsed: impl IntoIterator<Item = crate::Parsed>) -> Self {
        for parsed in parsed {
            self.definitions.push(parsed.definition);
            self.definition_warnings.extend(parsed.warnings);
        }
        self
    }

    /// Sets the built-ins' options; `None` leaves the built-ins out.
    #[must_use]
    pub fn builtins(mut self, builtins: Option<BuiltinOptions>) -> Self {
        self.builtins = builtins;
        self
    }

    /// Resolves the `memory:` scopes' directories under these roots.
    #[must_use]
    pub fn memory(mut self, roots: MemoryRoots) -> Self {
        self.memory = roots;
        self
    }

    /// Checks every effective definition against these providers on each load.
    #[must_use]
    pub fn providers(mut self, providers: ProviderTable) -> Self {
        self.providers = Some(providers);
        self
    }
}

/// One effective definition and those of the same name it overrides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    /// The definition in effect (from the highest-priority source that has one).
    pub definition: Arc<Definition>,
    /// Definitions of the same name from lower-priority sources, highest priority first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overridden: Vec<Arc<Definition>>,
}

/// What a reload changed, by agent name (sorted).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Reloaded {
    /// Names that were not there before.
    pub added: Vec<String>,
    /// Names that are gone.
    pub removed: Vec<String>,
    /// Names whose effective definition changed.
    pub changed: Vec<String>,
}

impl Reloaded {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

#[derive(Debug, Default)]
struct Loaded {
    entries: Vec<Entry>,
    profiles: Vec<AgentProfile>,
    load_warnings: Vec<Warning>,
    capability_warnings: Vec<Warning>,
    /// Files that did not load, by the name they would have defined.
    failed: Vec<(String, Warning)>,
}

#[derive(Debug)]
struct State {
    config: CatalogConfig,
    loaded: Arc<Loaded>,
}

/// Agent definitions from every configured source, with priorities applied.
///
/// Listing order ([`Catalog::entries`], [`AgentDirectory::agents`]): the built-in names first
/// (`general-purpose`, `explore`, `plan`, whichever source defines them), then every other name
/// in byte order. The order depends only on the names, so the delegation tool's description is
/// stable across reloads that change no name.
///
/// [`AgentDirectory::get`] matches the exact name, else the one name equal to it ignoring ASCII
/// case (a model trained on Claude Code writes `Explore`).
#[derive(Debug)]
pub struct Catalog {
    state: RwLock<State>,
}

impl Catalog {
    /// Loads every source. Never fails: what cannot be loaded becomes a [`Warning`].
    pub fn load(config: CatalogConfig) -> Self {
        let loaded = Arc::new(load(&config));
        Self {
            state: RwLock::new(State { config, loaded }),
        }
    }

    /// Reads every source again and swaps the result in; runs already started are unaffected.
    pub fn reload(&self) -> Reloaded {
        let config = self.read(|state| state.config.clone());
        let fresh = Arc::new(load(&config));
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        let changes = diff(&state.loaded.entries, &fresh.entries);
        state.loaded = fresh;
        changes
    }

    /// Sets the providers to check against and re-checks (without reading any file).
    pub fn set_providers(&self, providers: Option<ProviderTable>) {
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        let loaded = &state.loaded;
        let capability_warnings = check(&providers, &loaded.entries);
        state.loaded = Arc::new(Loaded {
            entries: loaded.entries.clone(),
            profiles: loaded.profiles.clone(),
            load_warnings: loaded.load_warnings.clone(),
            capability_warnings,
            failed: loaded.failed.clone(),
        });
        state.config.providers = providers;
    }

    /// The configuration it reads.
    pub fn config(&self) -> CatalogConfig {
        self.read(|state| state.config.clone())
    }

    /// The effective definitions, in listing order, each with what it overrides.
    pub fn entries(&self) -> Vec<Entry> {
        self.read(|state| state.loaded.entries.clone())
    }

    /// The effective definition of that exact name.
    pub fn definition(&self, name: &str) -> Option<Arc<Definition>> {
        self.read(|state| {
            state
                .loaded
                .entries
                .iter()
                .find(|entry| entry.definition.name == name)
                .map(|entry| Arc::clone(&entry.definition))
        })
    }

    /// The effective names, in listing order.
    pub fn names(&self) -> Vec<String> {
        self.read(|state| {
            state
                .loaded
                .entries
                .iter()
                .map(|entry| entry.definition.name.clone())
                .collect()
        })
    }

    /// Every warning of the last load: files in reading order (parse problems, unknown fields,
    /// missing descriptions), then duplicates, then provider checks.
    pub fn warnings(&self) -> Vec<Warning> {
        self.read(|state| {
            let loaded = &state.loaded;
            let mut warnings = loaded.load_warnings.clone();
            warnings.extend(loaded.capability_warnings.iter().cloned());
            warnings
        })
    }

    /// The warnings of the definition files that did not load and would have defined `name`
    /// (their frontmatter's `name:` line, else their file stem; ASCII case ignored, as in
    /// [`AgentDirectory::get`]): why there is no agent of that name.
    pub fn failed_definitions(&self, name: &str) -> Vec<Warning> {
        self.read(|state| {
            state
                .loaded
                .failed
                .iter()
                .filter(|(intended, _)| intended.eq_ignore_ascii_case(name))
                .map(|(_, warning)| warning.clone())
                .collect()
        })
    }

    fn read<T>(&self, f: impl FnOnce(&State) -> T) -> T {
        f(&self.state.read().unwrap_or_else(PoisonError::into_inner))
    }
}

impl AgentDirectory for Catalog {
    fn agents(&self) -> Vec<AgentProfile> {
        self.read(|state| state.loaded.profiles.clone())
    }

    fn get(&self, name: &str) -> Option<AgentProfile> {
        self.read(|state| {
            let profiles = &state.loaded.profiles;
            if let Some(profile) = profiles.iter().find(|p| p.name == name) {
                return Some(profile.clone());
            }
            let mut folded = profiles
                .iter()
                .filter(|p| p.name.eq_ignore_ascii_case(name));
            match (folded.next(), folded.next()) {
                (Some(only), None) => Some(only.clone()),
                _ => None,
            }
        })
    }
}

fn load(config: &CatalogConfig) -> Loaded {
    let mut sink = Sink::default();
    if let Some(options) = &config.builtins {
        sink.definitions.extend(builtins(options));
    }
    sink.definitions.extend(config.definitions.iter().cloned());
    sink.warnings
        .extend(config.definition_warnings.iter().cloned());
    for dir in &config.dirs {
        read_source_dir(dir, &mut sink);
    }
    let Sink {
        definitions: candidates,
        mut warnings,
        failed,
    } = sink;

    // Per name, the first definition of each source; later ones in the same source are reported.
    let mut by_name: BTreeMap<String, BTreeMap<Source, Arc<Definition>>> = BTreeMap::new();
    for candidate in candidates {
        let per_source = by_name.entry(candidate.name.clone()).or_default();
        match per_source.get(&candidate.source) {
            Some(first) => warnings.push(duplicate_warning(first, &candidate)),
            None => {
                per_source.insert(candidate.source, Arc::new(candidate));
            }
        }
    }

    let mut entries: Vec<Entry> = by_name
        .into_values()
        .filter_map(|per_source| {
            let mut ranked: Vec<Arc<Definition>> = per_source.into_values().rev().collect();
            (!ranked.is_empty()).then(|| {
                let definition = ranked.remove(0);
                Entry {
                    definition,
                    overridden: ranked,
                }
            })
        })
        .collect();
    entries.sort_by(|a, b| listing_key(&a.definition.name).cmp(&listing_key(&b.definition.name)));
    let profiles = entries
        .iter()
        .map(|e| e.definition.profile_with(&config.memory))
        .collect();
    let capability_warnings = check(&config.providers, &entries);
    Loaded {
        entries,
        profiles,
        load_warnings: warnings,
        capability_warnings,
        failed,
    }
}

fn check(providers: &Option<ProviderTable>, entries: &[Entry]) -> Vec<Warning> {
    providers.as_ref().map_or_else(Vec::new, |table| {
        table.check(entries.iter().map(|entry| entry.definition.as_ref()))
    })
}

/// Built-in names first (in their order), then the rest by name.
fn listing_key(name: &str) -> (usize, &str) {
    let rank = BUILTIN_NAMES
        .iter()
        .position(|builtin| *builtin == name)
        .unwrap_or(BUILTIN_NAMES.len());
    (rank, name)
}

fn duplicate_warning(first: &Definition, second: &Definition) -> Warning {
    let message = format!(
        "agent `{}` is defined twice in the {} source: {} and {}; using {}",
        second.name, second.source, first.origin, second.origin, first.origin
    );
    match second.origin.path() {
        Some(path) => {
            let location = second.field_location("name").unwrap_or(Location::line(1));
            Warning::new(WarningKind::Duplicate, path, location, message)
        }
        None => Warning::unplaced(WarningKind::Duplicate, message),
    }
}

/// What reading the sources gives: definitions, warnings, and the files that did not load.
#[derive(Default)]
struct Sink {
    definitions: Vec<Definition>,
    warnings: Vec<Warning>,
    failed: Vec<(String, Warning)>,
}

fn read_source_dir(dir: &SourceDir, sink: &mut Sink) {
    match std::fs::metadata(&dir.path) {
        Ok(meta) if meta.is_file() => load_into(&dir.path, dir.source, sink),
        Ok(_) => {
            let mut walk = Walk {
                source: dir.source,
                visited: HashSet::new(),
                sink,
            };
            walk.dir(&dir.path, 0);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if dir.source == Source::Flag {
                sink.warnings.push(Warning::new(
                    WarningKind::Unreadable,
                    &dir.path,
                    Location::NONE,
                    "agents directory given on the command line does not exist",
                ));
            }
        }
        Err(e) => sink.warnings.push(Warning::new(
            WarningKind::Unreadable,
            &dir.path,
            Location::NONE,
            e.to_string(),
        )),
    }
}

/// A recursive read of one source directory.
struct Walk<'a> {
    source: Source,
    /// Directories already read (canonical paths), so a symlink loop is read once.
    visited: HashSet<PathBuf>,
    sink: &'a mut Sink,
}

impl Walk<'_> {
    fn dir(&mut self, dir: &Path, depth: usize) {
        if let Ok(canonical) = std::fs::canonicalize(dir)
            && !self.visited.insert(canonical)
        {
            return;
        }
        let unreadable =
            |message: String| Warning::new(WarningKind::Unreadable, dir, Location::NONE, message);
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => return self.sink.warnings.push(unreadable(e.to_string())),
        };
        let mut paths: Vec<PathBuf> = Vec::new();
        for entry in entries {
            match entry {
                Ok(entry) if !entry.file_name().to_string_lossy().starts_with('.') => {
                    paths.push(entry.path());
                }
                Ok(_) => {}
                Err(e) => self.sink.warnings.push(unreadable(e.to_string())),
            }
        }
        paths.sort();
        for path in paths {
            // `metadata` follows symlinks: a linked file or directory counts as what it points to.
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => {
                    if depth + 1 < MAX_DIR_DEPTH {
                        self.dir(&path, depth + 1);
                    } else {
                        self.sink.warnings.push(Warning::new(
                            WarningKind::Unreadable,
                            &path,
                            Location::NONE,
                            format!("directory nested deeper than {MAX_DIR_DEPTH} levels not read"),
                        ));
                    }
                }
                Ok(_) if is_markdown(&path) => load_into(&path, self.source, self.sink),
                Ok(_) => {}
                Err(e) => {
                    if is_markdown(&path) {
                        self.sink.warnings.push(Warning::new(
                            WarningKind::Unreadable,
                            &path,
                            Location::NONE,
                            e.to_string(),
                        ));
                    }
                }
            }
        }
    }
}

fn is_markdown(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("md"))
}

fn load_into(path: &Path, source: Source, sink: &mut Sink) {
    // The name the file would have defined: its `name:` line, else its stem (as when it loads).
    let stem = || {
        path.file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let (error, intended) = match read_text(path) {
        Err(error) => (error, stem()),
        Ok(text) => match parse_definition(path, &text, source) {
            Ok(parsed) => {
                sink.warnings.extend(parsed.warnings);
                sink.definitions.push(parsed.definition);
                return;
            }
            Err(error) => (error, declared_name(&text).unwrap_or_else(stem)),
        },
    };
    let warning = Warning::from(error);
    sink.failed.push((intended, warning.clone()));
    sink.warnings.push(warning);
}

fn diff(before: &[Entry], after: &[Entry]) -> Reloaded {
    let index = |entries: &[Entry]| -> BTreeMap<String, Arc<Definition>> {
        entries
            .iter()
            .map(|e| (e.definition.name.clone(), Arc::clone(&e.definition)))
            .collect()
    };
    let (before, after) = (index(before), index(after));
    let mut changes = Reloaded::default();
    for (name, definition) in &after {
        match before.get(name) {
            None => changes.added.push(name.clone()),
            Some(old) if old != definition => changes.changed.push(name.clone()),
            Some(_) => {}
        }
    }
    changes.removed = before
        .keys()
        .filter(|name| !after.contains_key(*name))
        .cloned()
        .collect();
    changes
}
