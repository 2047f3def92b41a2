//! `subagent skills`: the skills runs are offered, where each comes from, and warnings.

use std::process::ExitCode;

use serde_json::json;

use crate::args::SkillsArgs;
use crate::line::one_line;
use crate::setup;
use crate::{EXIT_COMPLETED, Refusal};

pub(super) fn skills(args: &SkillsArgs) -> Result<ExitCode, Refusal> {
    let dir = match &args.cwd {
        Some(dir) => dir.clone(),
        None => setup::current_dir()?,
    };
    let cwd = std::fs::canonicalize(&dir)
        .map_err(|e| Refusal::invalid(format!("--cwd {}: {e}", dir.display())))?;
    let home = setup::env("HOME");
    let skills = crate::skills::load(home.as_deref().map(std::path::Path::new), &cwd);
    let entries = skills.entries();
    let warnings = skills.warnings();
    if args.json {
        let value = json!({ "skills": entries, "warnings": warnings });
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    outln!("{:<18} {:<8} description", "name", "source");
    for entry in &entries {
        let summary = &entry.summary;
        let hidden = if entry.hidden {
            " (hidden from the model)"
        } else {
            ""
        };
        outln!(
            "{:<18} {:<8} {}{hidden}",
            summary.name,
            summary.source,
            one_line(&summary.description, 80)
        );
        outln!("{:<18} from {}", "", summary.dir.display());
        if !summary.allowed_tools.is_empty() {
            outln!(
                "{:<18} allowed-tools {} (loading it needs permission)",
                "",
                summary.allowed_tools.join(", ")
            );
        }
        for overridden in &entry.overridden {
            outln!("{:<18} overrides {}", "", overridden.display());
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
