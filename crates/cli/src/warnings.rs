//! What the agent catalog has to say before a run: the tools each provider gives a child (so
//! that definitions are checked against them), its warnings printed once on stderr, and why an
//! agent type asked for is missing.

use std::path::Path;

use subagent_catalog::{Catalog, ProviderTable, Warning};
use subagent_preset::Preset;
use subagent_runtime::ToolSet;
use subagent_runtime::tools::BashConfig;

use crate::Refusal;
use crate::render;

/// How many warnings are printed before a run; `subagent agents` lists them all.
const MAX_PRINTED: usize = 5;

/// The longest warning line printed before a run, in characters.
const MAX_LINE: usize = 240;

/// `table` with the tools of the preset's providers whose tools are known: an in-process row
/// (`spawn`, `fork`) has the runtime's built-ins (a spawn row's `config.tools` keeps some) and
/// the preset's delegation tools; a `claude-code` row has Claude Code's.
pub fn with_provider_tools(mut table: ProviderTable, preset: &Preset) -> ProviderTable {
    let builtin = ToolSet::new(ToolSet::builtin(BashConfig::default()));
    let delegation = preset.tools.iter().map(|row| row.name.clone());
    for row in preset.providers.iter().filter(|row| !row.disabled) {
        let tools: Vec<String> = match row.kind.as_str() {
            "spawn" | "fork" => {
                let kept = row
                    .config
                    .get("tools")
                    .and_then(|tools| tools.as_array())
                    .map(|tools| tools.iter().filter_map(|t| t.as_str()).collect::<Vec<_>>());
                builtin
                    .names()
                    .into_iter()
                    .filter(|name| kept.as_ref().is_none_or(|kept| kept.contains(name)))
                    .map(str::to_owned)
                    .chain(delegation.clone())
                    .collect()
            }
            "claude-code" => {
                let mut tools: Vec<String> = subagent_claude_code::KNOWN_TOOLS
                    .iter()
                    .map(|tool| (*tool).to_owned())
                    .collect();
                // `Task`, the older name of its sub-agent tool, is still written in definitions.
                for tool in subagent_claude_code::AGENT_TOOLS {
                    if !tools.iter().any(|known| known == tool) {
                        tools.push(tool.to_owned());
                    }
                }
                tools
            }
            _ => continue,
        };
        table = table.with_tools(row.name.clone(), tools);
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
    render::one_line(&text, MAX_LINE)
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
pub fn print(catalog: &Catalog, cwd: &Path) {
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

/// The refusal for an agent type the catalog does not have; when a definition file that would
/// have defined it did not load, the refusal says why.
pub fn unknown_agent(catalog: &Catalog, name: &str, cwd: &Path) -> Refusal {
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
