//! `subagent providers`: the capability table.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;
use subagent_core::ProviderFactory;

use crate::args::ProvidersArgs;
use crate::line::one_line;
use crate::setup::{self};
use crate::{EXIT_COMPLETED, Refusal};

fn check(on: bool) -> &'static str {
    if on { "yes" } else { "-" }
}

pub(super) fn providers(
    args: &ProvidersArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    let cwd = setup::current_dir()?;
    let (preset, _) = setup::load_preset(&args.preset, &cwd, false, factories)?;
    let listing = preset.built_listing(factories, &setup::listing_context(&preset, factories)?);
    if args.json {
        let value = serde_json::to_value(&listing).unwrap_or(Value::Null);
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    if args.markdown {
        crate::render::out(format_args!("{}", providers_markdown(&listing)));
    } else {
        outln!("{}", providers_table(&listing));
    }
    let notes = notes(&listing);
    if !notes.is_empty() {
        let bullet = if args.markdown { "\n- " } else { "" };
        for note in notes {
            outln!("{bullet}{note}");
        }
    }
    Ok(ExitCode::from(EXIT_COMPLETED))
}

/// Why a row honours less than its kind can, and why one could not be built: one line each,
/// under the table.
fn notes(listing: &[subagent_preset::ProviderListing]) -> Vec<String> {
    let mut notes = Vec::new();
    for row in listing {
        let name = one_line(&row.name, MAX_CELL_CHARS);
        for (capability, why) in &row.reasons {
            notes.push(format!("{name}: no {capability}: {why}"));
        }
        if let Some(why) = &row.unavailable {
            notes.push(format!("{name}: unavailable: {why}"));
        }
    }
    notes
}

/// The capability table as Markdown, one row per provider.
pub(super) fn providers_markdown(listing: &[subagent_preset::ProviderListing]) -> String {
    let mut out = String::from(
        "| provider | kind | output_schema | depth_limit | tool_filter | persona | model_override | max_turns | resume | isolation | effort | inherits_parent_context |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for row in listing {
        let c = &row.capabilities;
        let cells = [
            c.output_schema,
            c.depth_limit,
            c.tool_filter,
            c.persona,
            c.model_override,
            c.max_turns,
            c.resume,
            c.isolation,
            c.effort,
            c.inherits_parent_context,
        ]
        .map(check);
        out.push_str(&format!(
            "| {}{} | {} | {} |\n",
            row.name,
            if row.disabled { " (disabled)" } else { "" },
            row.kind,
            cells.join(" | ")
        ));
    }
    out
}

/// The widest cell of the text table, in characters: a longer name (a preset may hold any
/// string, and `format!` panics on a width over 65,535) is cut with an ellipsis; `--json` and
/// `--markdown` keep it whole.
const MAX_CELL_CHARS: usize = 40;

/// The capability table as text.
pub(super) fn providers_table(listing: &[subagent_preset::ProviderListing]) -> String {
    let headers = [
        "provider",
        "kind",
        "state",
        "output_schema",
        "depth_limit",
        "tool_filter",
        "persona",
        "model_override",
        "max_turns",
        "resume",
        "isolation",
        "effort",
        "inherits_parent_context",
    ];
    let mut rows = vec![headers.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>()];
    for row in listing {
        let c = &row.capabilities;
        rows.push(vec![
            one_line(&row.name, MAX_CELL_CHARS),
            one_line(&row.kind, MAX_CELL_CHARS),
            if row.disabled {
                "disabled".into()
            } else if row.unavailable.is_some() {
                "unavailable".into()
            } else {
                "enabled".into()
            },
            check(c.output_schema).into(),
            check(c.depth_limit).into(),
            check(c.tool_filter).into(),
            check(c.persona).into(),
            check(c.model_override).into(),
            check(c.max_turns).into(),
            check(c.resume).into(),
            check(c.isolation).into(),
            check(c.effort).into(),
            check(c.inherits_parent_context).into(),
        ]);
    }
    let widths: Vec<usize> = (0..headers.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|row| {
            row.iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
