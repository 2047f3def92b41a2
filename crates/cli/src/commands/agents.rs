//! `subagent agents`: the effective catalog.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;
use subagent_core::ProviderFactory;
use subagent_core::agents::AgentDirectory;

use crate::args::AgentsArgs;
use crate::line::one_line;
use crate::setup::{self};
use crate::{EXIT_COMPLETED, Refusal};

pub(super) fn agents(
    args: &AgentsArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    let runnable = setup::listing(&args.preset, factories)?;
    let entries = runnable.catalog.entries();
    let mut warnings = runnable.catalog.warnings();
    warnings.extend(crate::warnings::missing_skills(
        &runnable.skills,
        &runnable.catalog,
    ));
    if args.json {
        let value = json!({ "agents": entries, "warnings": warnings });
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    outln!(
        "{:<18} {:<12} {:<10} description",
        "name",
        "provider",
        "source"
    );
    for entry in &entries {
        let profile = entry.definition.profile();
        outln!(
            "{:<18} {:<12} {:<10} {}",
            profile.name,
            profile
                .provider
                .clone()
                .unwrap_or_else(|| "(default)".into()),
            entry.definition.source.as_str(),
            one_line(&profile.description, 80)
        );
        outln!("{:<18} from {}", "", entry.definition.origin);
        // Where its memory lives (`memory:`), resolved for this directory and HOME.
        if let Some(memory) = runnable
            .catalog
            .get(&profile.name)
            .and_then(|profile| profile.memory)
        {
            outln!(
                "{:<18} memory ({}) in {}",
                "",
                memory.scope,
                memory.dir.display()
            );
        }
        for overridden in &entry.overridden {
            outln!(
                "{:<18} overrides {} ({})",
                "",
                overridden.source.as_str(),
                overridden.origin
            );
        }
    }
    if !warnings.is_empty() {
        eprintln!("warnings:");
        for warning in &warnings {
            eprintln!("  {warning}");
        }
    }
    Ok(ExitCode::from(EXIT_COMPLETED))
}
