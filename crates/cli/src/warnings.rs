//! What the agent catalog has to say before a run: the tools each provider gives a child (so
//! that definitions are checked against them), its warnings printed once on stderr, and why an
//! agent type asked for is missing.

use std::path::Path;
use std::sync::Arc;

use subagent_catalog::{Catalog, ProviderTable, Warning};
use subagent_core::ProviderFactory;
use subagent_preset::Preset;

use crate::Refusal;
use crate::line::one_line;

/// How many warnings are printed before a run; `subagent agents` lists them all.
const MAX_PRINTED: usize = 5;

/// The longest warning line printed before a run, in characters.
const MAX_LINE: usize = 240;

/// `table` with the tools of the preset's enabled rows whose kind knows them
/// ([`ProviderFactory::child_tools`]): an in-process row (`spawn`, `fork`) has the runtime's
/// built-ins (a spawn row's `config.tools` keeps some) and the preset's delegation tools; a
/// `claude-code` row has Claude Code's.
pub(crate) fn with_provider_tools(
    mut table: ProviderTable,
    preset: &Preset,
    factories: &[Arc<dyn ProviderFactory>],
) -> ProviderTable {
    for row in preset.providers.iter().filter(|row| !row.disabled) {
        let Some(tools) = factories
            .iter()
            .find(|factory| factory.kind() == row.kind)
            .and_then(|factory| factory.child_tools(&row.config))
        else {
            continue;
        };
        let mut names = tools.names;
        if tools.delegation {
            names.extend(preset.tools.iter().map(|tool| tool.name.clone()));
        }
        table = table.with_tools(row.name.clone(), names);
    }
    table
}

/// A warning on one line, its path relative to `cwd` when it is inside it.
fn line(warning: &Warning, cwd: &Path) -> String {
    let text = match &warning.path {
        Some(path) => {
            let shown = path.strip_prefix(cwd).unwrap_or(path);
            format!(
                "{}{}: {}",
                shown.display(),
                warning.location,
                warning.message
            )
        }
        None => warning.message.clone(),
    };
    one_line(&text, MAX_LINE)
}

/// The warnings as lines, each once (a directory read as two sources, the home directory
/// being the project, says the same thing twice).
fn lines<'a>(warnings: impl IntoIterator<Item = &'a Warning>, cwd: &Path) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for warning in warnings {
        let line = line(warning, cwd);
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines
}

/// Prints the catalog's warnings on stderr, one line each, at most [`MAX_PRINTED`] of them
/// (`subagent agents` lists them all).
pub(crate) fn print(catalog: &Catalog, cwd: &Path) {
    let lines = lines(&catalog.warnings(), cwd);
    for line in lines.iter().take(MAX_PRINTED) {
        eprintln!("warning: {line}");
    }
    if lines.len() > MAX_PRINTED {
        eprintln!(
            "warning: and {} more (`subagent agents` lists them)",
            lines.len() - MAX_PRINTED
        );
    }
}

/// Prints the skills' warnings on stderr as [`print`] prints the catalog's, and those of the
/// agent definitions whose `skills:` name a skill nobody has (left out of their children's
/// first message).
pub(crate) fn print_skills(skills: &subagent_catalog::Skills, catalog: &Catalog, cwd: &Path) {
    let mut warnings = skills.warnings();
    warnings.extend(missing_skills(skills, catalog));
    let lines = lines(&warnings, cwd);
    for line in lines.iter().take(MAX_PRINTED) {
        eprintln!("warning: {line}");
    }
    if lines.len() > MAX_PRINTED {
        eprintln!(
            "warning: and {} more (`subagent skills` lists them)",
            lines.len() - MAX_PRINTED
        );
    }
}

/// A warning for each skill an agent definition preloads that no `SKILL.md` defines, at the
/// definition's `skills:` line.
pub(crate) fn missing_skills(skills: &subagent_catalog::Skills, catalog: &Catalog) -> Vec<Warning> {
    use subagent_core::skills::SkillDirectory as _;
    let known = skills.skills();
    let mut warnings = Vec::new();
    for entry in catalog.entries() {
        let definition = &entry.definition;
        for name in &definition.skills {
            if known.iter().any(|skill| skill.answers_to(name)) {
                continue;
            }
            let message = format!(
                "agent `{}` preloads skill `{name}`, which no SKILL.md defines: it is left out",
                definition.name
            );
            warnings.push(match definition.origin.path() {
                Some(path) => Warning::new(
                    subagent_catalog::WarningKind::UnknownSkill,
                    path,
                    definition
                        .field_location("skills")
                        .unwrap_or(subagent_catalog::Location::line(1)),
                    message,
                ),
                None => Warning::unplaced(subagent_catalog::WarningKind::UnknownSkill, message),
            });
        }
    }
    warnings
}

/// The refusal for an agent type the catalog does not have; when a definition file that would
/// have defined it did not load, the refusal says why.
pub(crate) fn unknown_agent(catalog: &Catalog, name: &str, cwd: &Path) -> Refusal {
    let mut refusal = Refusal::from(subagent_core::Error::UnknownAgentType {
        name: name.to_owned(),
        available: catalog.names(),
    });
    let failed = lines(&catalog.failed_definitions(name), cwd);
    if !failed.is_empty() {
        refusal.message = format!(
            "{}; its definition did not load: {}",
            refusal.message,
            failed.join("; ")
        );
    }
    refusal
}
