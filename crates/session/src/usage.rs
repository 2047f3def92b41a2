//! [`Usage`]: the one record of what a model call or a whole run cost.

use serde::{Deserialize, Serialize};

/// Token counts, and for a run its tool calls and wall time: a model call fills the token
/// counts, a run adds up its calls' and sets the rest. The counts come from servers and child
/// CLIs: adding saturates at `u64::MAX` instead of overflowing.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(default)]
pub struct Usage {
    /// Input tokens not read from the prompt cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    /// Tool calls made (a run's; 0 for one model call).
    pub tool_uses: u64,
    /// Wall time of the run, in milliseconds (0 for one model call).
    pub duration_ms: u64,
}

impl Usage {
    /// Adds the counts of `other`, saturating; durations are not added (a run has one wall
    /// time).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
        self.tool_uses = self.tool_uses.saturating_add(other.tool_uses);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_saturates_and_keeps_the_duration() {
        let mut total = Usage {
            input_tokens: u64::MAX - 1,
            duration_ms: 7,
            ..Usage::default()
        };
        total.add(&Usage {
            input_tokens: 5,
            output_tokens: 2,
            tool_uses: 1,
            duration_ms: 100,
            ..Usage::default()
        });
        assert_eq!(
            total,
            Usage {
                input_tokens: u64::MAX,
                output_tokens: 2,
                tool_uses: 1,
                duration_ms: 7,
                ..Usage::default()
            }
        );
    }
}
