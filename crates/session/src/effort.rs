//! [`Effort`]: how hard a model reasons before it answers, one type for the seam and the model
//! clients.

use serde::{Deserialize, Serialize};

/// A reasoning effort, in Claude Code's words (`effort:` of an agent definition, `claude
/// --effort`). Each model protocol maps it onto its own setting: an Anthropic `thinking` budget
/// ([`Effort::thinking_budget`]), OpenAI's `reasoning.effort` / `reasoning_effort`
/// ([`Effort::openai`]), Codex's `model_reasoning_effort`.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    /// Little reasoning.
    Low,
    /// Some reasoning.
    Medium,
    /// Much reasoning.
    High,
    /// More than high.
    #[serde(rename = "xhigh")]
    XHigh,
    /// As much as the model does.
    Max,
}

impl Effort {
    /// Every level, lowest first.
    pub const ALL: [Effort; 5] = [Self::Low, Self::Medium, Self::High, Self::XHigh, Self::Max];

    /// The name as written (`low`, `medium`, `high`, `xhigh`, `max`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::XHigh => "xhigh",
            Self::Max => "max",
        }
    }

    /// Parses a name of [`Effort::ALL`] (case-insensitive, trimmed).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        Self::ALL
            .into_iter()
            .find(|effort| effort.as_str().eq_ignore_ascii_case(text))
    }

    /// The valid names, for an error message: `low, medium, high, xhigh, max`.
    pub fn valid() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }

    /// The Anthropic `thinking` budget, in tokens, sent on top of the answer's own
    /// `max_tokens`: 1024 (the API's least), 4096, 10000, 16000, 32000.
    pub fn thinking_budget(self) -> u32 {
        match self {
            Self::Low => 1024,
            Self::Medium => 4096,
            Self::High => 10_000,
            Self::XHigh => 16_000,
            Self::Max => 32_000,
        }
    }

    /// OpenAI's spelling (`reasoning.effort`, `reasoning_effort`, Codex's
    /// `model_reasoning_effort`): the same name, `max` being `xhigh`, OpenAI's highest.
    pub fn openai(self) -> &'static str {
        match self {
            Self::Max => "xhigh",
            other => other.as_str(),
        }
    }
}

impl std::fmt::Display for Effort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_serialize_as_written() {
        for effort in Effort::ALL {
            assert_eq!(Effort::parse(effort.as_str()), Some(effort));
            assert_eq!(
                serde_json::to_value(effort).unwrap(),
                serde_json::Value::from(effort.as_str())
            );
        }
        assert_eq!(Effort::parse(" HIGH "), Some(Effort::High));
        assert_eq!(Effort::parse("extreme"), None);
        assert_eq!(Effort::valid(), "low, medium, high, xhigh, max");
        assert_eq!(
            Effort::ALL.map(Effort::openai),
            ["low", "medium", "high", "xhigh", "xhigh"]
        );
    }
}
