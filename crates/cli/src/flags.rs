//! Options users bring from Claude Code: inline agent definitions (`--agents '<json>'`), an
//! output schema given inline or in a file, the `run` parent's reasoning effort.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use subagent_catalog::{Catalog, Source};

use crate::Refusal;
use crate::setup::Runnable;

/// The option that gives inline definitions, and their origin in listings.
pub(crate) const AGENTS_OPTION: &str = "--agents";

/// The largest `--output-schema` file, in bytes: 1 MiB.
const MAX_SCHEMA_FILE: u64 = 1 << 20;

/// Adds the definitions of `--agents JSON` to the runnable's catalog, above every file (the
/// command line's source; only an administrator's policy is above it, as in Claude Code). Their
/// warnings (an unknown field) are the catalog's; a bad value refuses the command.
pub(crate) fn add_agents(runnable: &mut Runnable, json: Option<&str>) -> Result<(), Refusal> {
    let Some(json) = json else {
        return Ok(());
    };
    let parsed = subagent_catalog::parse_agents_json(AGENTS_OPTION, json, Source::Flag)
        .map_err(|e| Refusal::invalid(e.to_string()))?;
    let config = runnable.catalog.config().parsed(parsed);
    runnable.catalog = Arc::new(Catalog::load(config));
    Ok(())
}

/// The schema of `--output-schema VALUE`: a value starting with `{` is the JSON itself, else the
/// path of a file holding it.
pub(crate) fn output_schema(value: &Path) -> Result<Value, Refusal> {
    let text = value.to_string_lossy();
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(&text)
            .map_err(|e| Refusal::invalid(format!("--output-schema: not JSON: {e}")));
    }
    let text = subagent_session::read_user_text(value, MAX_SCHEMA_FILE)
        .map_err(|e| Refusal::invalid(format!("--output-schema {}: {e}", value.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        Refusal::invalid(format!(
            "--output-schema {}: not JSON: {e}",
            value.display()
        ))
    })
}

/// The `run` parent's reasoning effort (`run --effort`): refused, as `delegate --effort` is on
/// a provider without `effort`, when the parent's model sends none.
pub(crate) fn parent_effort(
    runnable: &Runnable,
    effort: Option<subagent_core::Effort>,
) -> Result<Option<subagent_core::Effort>, Refusal> {
    match effort {
        Some(effort) if !runnable.model.model.supports_effort() => Err(Refusal::new(
            subagent_core::ErrorCode::UnsupportedCapability,
            format!(
                "--effort {effort}: the parent's model ({}) takes no reasoning effort (an anthropic or openai-responses model does, an openai-chat one with `reasoning_effort: true`)",
                runnable.model.model.describe()
            ),
        )),
        effort => Ok(effort),
    }
}

/// `agent` asking its model for `effort` (unchanged when `None`).
pub(crate) fn with_effort(
    agent: subagent_runtime::Agent,
    effort: Option<subagent_core::Effort>,
) -> Result<subagent_runtime::Agent, Refusal> {
    let Some(effort) = effort else {
        return Ok(agent);
    };
    let mut config = agent.config().clone();
    config.effort = Some(effort);
    subagent_runtime::Agent::new(config).map_err(|e| Refusal::invalid(e.to_string()))
}

/// The budget of `--max-tokens-budget` and `--max-budget-usd`. A cost needs the price of what
/// runs: the preset's `model.price`, when the run spends on the preset's model as written
/// (`on_preset_model`: the `run` parent; a spawn or fork child without a model of its own and
/// no `--model`); anything else is refused, since its cost cannot be known. An agent type's
/// `maxTokensBudget` applies when it is tighter than `--max-tokens-budget`.
pub(crate) fn budget(
    runnable: &Runnable,
    max_tokens: Option<u64>,
    max_usd: Option<f64>,
    on_preset_model: bool,
    profile: Option<&subagent_core::agents::AgentProfile>,
) -> Result<subagent_runtime::budget::Budget, Refusal> {
    let source = match (max_tokens, max_usd) {
        (Some(_), Some(_)) => "--max-tokens-budget, --max-budget-usd",
        (Some(_), None) => "--max-tokens-budget",
        _ => "--max-budget-usd",
    };
    // The agent type's `maxTokensBudget` holds too, when it is the tighter.
    let mut budget = subagent_runtime::budget::tighter(max_tokens, source.to_owned(), profile);
    budget.max_usd = max_usd;
    if let Some(usd) = max_usd {
        let section = runnable.preset.model.as_ref();
        let price = section
            .and_then(|section| section.price)
            .filter(|_| on_preset_model && runnable.model.as_written);
        let Some(price) = price else {
            return Err(Refusal::invalid(format!(
                "--max-budget-usd {usd}: the price of what runs is not known: a cost budget needs the preset's model as written, with its `price:` (US dollars per million tokens) in the preset's `model:` section, and a child on that model (a spawn or fork row without a model of its own, no --model, no --offline)"
            )));
        };
        budget.price = Some(subagent_runtime::budget::Price {
            input: price.input,
            output: price.output,
            cache_read: price.cache_read,
            cache_write: price.cache_write,
        });
    }
    Ok(budget)
}
