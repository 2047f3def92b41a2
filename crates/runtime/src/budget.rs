//! Budgets, as users know them from `claude --max-budget-usd`: the most tokens (and, where the
//! model's price is known, the most US dollars) a run may spend, its nested agents included.
//!
//! [`enforce`] stands between a run and its caller ([`Run::relay`]): it passes every event on,
//! keeps the spend from the run's `usage` events (cumulative per agent: the run's own, and each
//! nested agent's under the id of the call that started it), and once the spend is over the
//! budget cancels the run and ends it `budget_exceeded`, with a diagnostic that says what was
//! spent against what budget. Usage is reported after each model answer, so a run stops after
//! the answer that crossed its budget (it may go over by that answer), never in the middle. A
//! run whose crossing answer was its last completed; one that reported another answer after the
//! crossing (it was already asking when the cancel went out) ends `budget_exceeded` whatever it
//! ended with, its text kept, so the status never depends on how fast the cancel landed.
//!
//! Tokens counted: input (cache reads and writes included) and output, the way `subagent`
//! prints them. A cost is the tokens at the model's [`Price`].

use std::collections::HashMap;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use subagent_core::{Run, RunEvent, StopReason, Usage};

/// A model's list price, in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Input tokens not read from the cache.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from the prompt cache (default: a tenth of `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Input tokens written to the prompt cache (default: `input` × 1.25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

impl Price {
    /// What `usage` costs at this price, in US dollars.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let per = |tokens: u64, usd_per_million: f64| {
            // Token counts are far below 2^52: the conversion is exact.
            #[allow(clippy::cast_precision_loss)]
            let tokens = tokens as f64;
            tokens * usd_per_million / 1_000_000.0
        };
        per(usage.input_tokens, self.input)
            + per(usage.output_tokens, self.output)
            + per(
                usage.cache_read_tokens,
                self.cache_read.unwrap_or(self.input / 10.0),
            )
            + per(
                usage.cache_write_tokens,
                self.cache_write.unwrap_or(self.input * 1.25),
            )
    }
}

/// The tokens a budget counts of `usage`: input (cache reads and writes included) and output.
pub fn tokens(usage: &Usage) -> u64 {
    usage
        .input_tokens
        .saturating_add(usage.output_tokens)
        .saturating_add(usage.cache_read_tokens)
        .saturating_add(usage.cache_write_tokens)
}

/// The most a run may spend.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Budget {
    /// The most tokens ([`tokens`]).
    pub max_tokens: Option<u64>,
    /// The most US dollars, at `price`.
    pub max_usd: Option<f64>,
    /// The price of the run's model (a cost budget needs it).
    pub price: Option<Price>,
    /// Where the budget was set, for the diagnostic (`--max-tokens-budget`, `budget of row
    /// subagent`).
    pub source: String,
}

impl Budget {
    /// Whether it limits anything.
    pub fn is_set(&self) -> bool {
        self.max_tokens.is_some() || self.max_usd.is_some()
    }

    /// Why `spent` is over the budget, or `None` while it is within it.
    fn over(&self, spent: &Usage) -> Option<String> {
        let used = tokens(spent);
        if let Some(max) = self.max_tokens
            && used > max
        {
            return Some(format!(
                "budget exceeded: the run used {used} tokens, over its budget of {max} ({})",
                self.source
            ));
        }
        if let (Some(max), Some(price)) = (self.max_usd, &self.price) {
            let cost = price.cost(spent);
            if cost > max {
                return Some(format!(
                    "budget exceeded: the run spent ${cost:.4} ({used} tokens), over its budget of ${max} ({})",
                    self.source
                ));
            }
        }
        None
    }
}

/// A token budget of `max_tokens` (set by `source`) or of the agent type's `maxTokensBudget`,
/// whichever is tighter.
pub fn tighter(
    max_tokens: Option<u64>,
    source: String,
    profile: Option<&subagent_core::agents::AgentProfile>,
) -> Budget {
    let of_type = profile.and_then(|p| p.max_tokens_budget.map(|max| (max, &p.name)));
    let (max_tokens, source) = match (max_tokens, of_type) {
        (Some(mine), Some((theirs, _))) if mine <= theirs => (Some(mine), source),
        (_, Some((theirs, name))) => (Some(theirs), format!("the maxTokensBudget of agent {name}")),
        (mine, None) => (mine, source),
    };
    Budget {
        max_tokens,
        source,
        ..Budget::default()
    }
}

/// `run` held to `budget` (see the module docs); `run` itself when the budget limits nothing.
pub fn enforce(run: Run, budget: Budget) -> Run {
    if !budget.is_set() {
        return run;
    }
    let (sender, relayed) = Run::relay(&run);
    let cancel = run.cancel_token();
    tokio::spawn(async move {
        let mut inner = run;
        let mut spent: HashMap<Option<String>, Usage> = HashMap::new();
        let mut exceeded = None;
        let mut went_past = false;
        if let Some(mut events) = inner.take_events() {
            while let Some(event) = events.next().await {
                if let RunEvent::Usage {
                    usage,
                    parent_tool_use_id,
                } = &event
                {
                    spent.insert(parent_tool_use_id.clone(), *usage);
                    // An answer after the crossing: the run was already asking when the cancel
                    // went out, and went past its budget whatever it ends with.
                    went_past |= exceeded.is_some();
                    if exceeded.is_none() {
                        let mut total = Usage::default();
                        for usage in spent.values() {
                            total.add(usage);
                        }
                        exceeded = budget.over(&total);
                        if exceeded.is_some() {
                            cancel.cancel();
                        }
                    }
                }
                if !matches!(event, RunEvent::Finished { .. }) {
                    sender.emit(event);
                }
            }
        }
        let mut outcome = inner.outcome().await;
        if let Some(diagnostic) = exceeded
            && (outcome.status != StopReason::Completed || went_past)
        {
            outcome.status = StopReason::BudgetExceeded;
            outcome.diagnostic = Some(diagnostic);
        }
        sender.finish(outcome);
    });
    relayed
}

#[cfg(test)]
mod tests {
    use super::*;
    use subagent_core::{Outcome, StartRequest};

    /// A run whose provider reports `answers` usages of 15 tokens each, then completes.
    async fn enforced(answers: usize, max_tokens: u64) -> subagent_core::Outcome {
        let request = StartRequest::new("work", "/");
        let (sender, run) = Run::channel("fake", &request);
        let mut run = enforce(
            run,
            Budget {
                max_tokens: Some(max_tokens),
                source: "--max-tokens-budget".into(),
                ..Budget::default()
            },
        );
        let mut spent = Usage::default();
        for _ in 0..answers {
            spent.add(&Usage {
                input_tokens: 10,
                output_tokens: 5,
                ..Usage::default()
            });
            sender.emit(RunEvent::Usage {
                usage: spent,
                parent_tool_use_id: None,
            });
        }
        // The provider did not see the cancel in time: its run completed all the same.
        sender.finish(Outcome::completed("done at last"));
        drop(run.take_events());
        run.outcome().await
    }

    #[tokio::test]
    async fn an_answer_after_the_crossing_ends_the_run_over_budget_even_when_it_completed() {
        let outcome = enforced(3, 20).await;
        assert_eq!(outcome.status, StopReason::BudgetExceeded);
        assert_eq!(
            outcome.diagnostic.as_deref(),
            Some(
                "budget exceeded: the run used 30 tokens, over its budget of 20 (--max-tokens-budget)"
            )
        );
        assert_eq!(outcome.text, "done at last");
    }

    #[tokio::test]
    async fn a_run_whose_last_answer_crossed_the_budget_completed() {
        let outcome = enforced(2, 20).await;
        assert_eq!(outcome.status, StopReason::Completed);
        assert_eq!(enforced(1, 20).await.status, StopReason::Completed);
    }

    #[test]
    fn a_cost_counts_every_kind_of_token_at_its_price() {
        let price = Price {
            input: 3.0,
            output: 15.0,
            cache_read: None,
            cache_write: None,
        };
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 1_000_000,
            cache_write_tokens: 1_000_000,
            ..Usage::default()
        };
        // 3 + 1.5 + 0.3 + 3.75
        assert!((price.cost(&usage) - 8.55).abs() < 1e-9);
        assert_eq!(tokens(&usage), 3_100_000);
    }
}
