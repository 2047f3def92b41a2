//! `subagent providers`: the capability table.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;
use subagent_core::{Capability, ProviderFactory};

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

/// The table's capability columns: every gated capability, in table order, then the
/// descriptive `inherits_parent_context`.
fn capability_columns() -> Vec<&'static str> {
    let mut columns: Vec<&str> = Capability::ALL.iter().map(|c| c.as_str()).collect();
    columns.push("inherits_parent_context");
    columns
}

/// A row's cells under [`capability_columns`].
fn capability_cells(caps: &subagent_core::Capabilities) -> Vec<&'static str> {
    let mut cells: Vec<&str> = Capability::ALL
        .iter()
        .map(|c| check(caps.supports(*c)))
        .collect();
    cells.push(check(caps.inherits_parent_context));
    cells
}

/// The capability table as Markdown, one row per provider.
pub(super) fn providers_markdown(listing: &[subagent_preset::ProviderListing]) -> String {
    let columns = capability_columns();
    let mut out = format!(
        "| provider | kind | {} |\n|{}\n",
        columns.join(" | "),
        " --- |".repeat(columns.len() + 2)
    );
    for row in listing {
        out.push_str(&format!(
            "| {}{} | {} | {} |\n",
            row.name,
            if row.disabled { " (disabled)" } else { "" },
            row.kind,
            capability_cells(&row.capabilities).join(" | ")
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
    let mut headers = vec!["provider", "kind", "state"];
    headers.extend(capability_columns());
    let mut rows = vec![headers.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>()];
    for row in listing {
        let mut cells = vec![
            one_line(&row.name, MAX_CELL_CHARS),
            one_line(&row.kind, MAX_CELL_CHARS),
            if row.disabled {
                "disabled".into()
            } else if row.unavailable.is_some() {
                "unavailable".into()
            } else {
                "enabled".into()
            },
        ];
        cells.extend(
            capability_cells(&row.capabilities)
                .into_iter()
                .map(str::to_owned),
        );
        rows.push(cells);
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
