//! Model aliases: the names an agent definition or a delegation call gives a model (`sonnet`, a
//! preset's own `fast`) and the model ids they stand for.
//!
//! Deliberately not here: which model a child runs when none is named (the provider's own,
//! which for an in-process child is its parent's).

use std::collections::BTreeMap;

use crate::config::ModelKind;

/// The name that asks for the caller's own model: never an id, never an alias of a preset.
pub const INHERIT: &str = "inherit";

/// Claude Code's aliases and the ids Claude Code 2.1.197 resolves them to. They hold on an
/// Anthropic model only; elsewhere only a preset's table gives them a meaning.
pub const CLAUDE_ALIASES: [(&str, &str); 3] = [
    ("haiku", "claude-haiku-4-5-20251001"),
    ("sonnet", "claude-sonnet-5"),
    ("opus", "claude-opus-4-8"),
];

/// A preset's alias table (`model_aliases:`) and the protocol of its default model. Put into
/// `BuildContext::extensions` by the preset, read by the in-process providers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelAliases {
    table: BTreeMap<String, String>,
    default_kind: Option<ModelKind>,
}

impl ModelAliases {
    /// A preset's table; `default_kind` is the protocol of its default model, if it names one.
    pub fn new(table: BTreeMap<String, String>, default_kind: Option<ModelKind>) -> Self {
        Self {
            table,
            default_kind,
        }
    }

    /// The preset's table.
    pub fn table(&self) -> &BTreeMap<String, String> {
        &self.table
    }

    /// The model id `name` stands for on a model speaking `kind` (`None`: the preset's default
    /// model): the preset's table first, then [`CLAUDE_ALIASES`] on an Anthropic model; any other
    /// name is an id already and is returned as given (trimmed). `None` for [`INHERIT`] or a
    /// blank name: the caller's own model.
    pub fn resolve(&self, kind: Option<ModelKind>, name: &str) -> Option<String> {
        let name = name.trim();
        if name.is_empty() || name.eq_ignore_ascii_case(INHERIT) {
            return None;
        }
        if let Some(id) = self.table.get(name) {
            return Some(id.clone());
        }
        let anthropic = kind.or(self.default_kind) == Some(ModelKind::Anthropic);
        let builtin = CLAUDE_ALIASES
            .iter()
            .find(|(alias, _)| anthropic && *alias == name)
            .map(|(_, id)| (*id).to_owned());
        Some(builtin.unwrap_or_else(|| name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_table_then_claude_aliases_on_anthropic_only() {
        let aliases = ModelAliases::new(
            BTreeMap::from([
                ("fast".to_owned(), "gpt-5.5-mini".to_owned()),
                ("opus".to_owned(), "claude-opus-4-1".to_owned()),
            ]),
            Some(ModelKind::OpenaiResponses),
        );
        let cases = [
            (None, "fast", Some("gpt-5.5-mini")),
            (None, "opus", Some("claude-opus-4-1")),
            // Claude Code's names mean nothing to an OpenAI model unless the preset says so.
            (None, "sonnet", Some("sonnet")),
            (
                Some(ModelKind::Anthropic),
                "sonnet",
                Some("claude-sonnet-5"),
            ),
            (
                Some(ModelKind::Anthropic),
                "haiku",
                Some("claude-haiku-4-5-20251001"),
            ),
            (Some(ModelKind::Anthropic), " gpt-x ", Some("gpt-x")),
            (None, "inherit", None),
            (None, "Inherit", None),
            (None, "  ", None),
        ];
        for (kind, name, expected) in cases {
            assert_eq!(
                aliases.resolve(kind, name).as_deref(),
                expected,
                "{kind:?} {name}"
            );
        }
    }
}
