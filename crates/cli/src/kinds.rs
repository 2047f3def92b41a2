//! The provider kinds built into `subagent`: the one list of them. The registry's factories
//! ([`built_in_factories`], which `setup::factories` extends with an embedder's own), the
//! refusal of a kind a lean build left out (`features::kind_not_built`) and the fuzz target
//! that parses presets against every kind's schema all read it. And what the CLI asks of a row's
//! kind, through its factory, never by its name ([`placement`]).

use std::sync::Arc;

use subagent_core::{Placement, ProviderFactory};
use subagent_preset::Preset;

/// A provider kind built into `subagent`.
#[derive(Clone)]
pub struct BuiltInKind {
    /// The kind, as a preset's `kind:` names it.
    pub kind: &'static str,
    /// The cargo feature of `subagent-cli` that brings it, when not every build has it.
    pub feature: Option<&'static str>,
    /// Its factory, when this build has it.
    pub factory: Option<Arc<dyn ProviderFactory>>,
}

impl std::fmt::Debug for BuiltInKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltInKind")
            .field("kind", &self.kind)
            .field("feature", &self.feature)
            .field("built", &self.factory.is_some())
            .finish()
    }
}

/// A kind every build has.
fn always(factory: Arc<dyn ProviderFactory>, kind: &'static str) -> BuiltInKind {
    BuiltInKind {
        kind,
        feature: None,
        factory: Some(factory),
    }
}

/// Every provider kind built into `subagent`, in the order the registry lists them: those behind
/// a feature this build left out have no factory.
pub fn built_in_kinds() -> Vec<BuiltInKind> {
    vec![
        always(Arc::new(subagent_spawn::SpawnFactory), subagent_spawn::KIND),
        always(Arc::new(subagent_fork::ForkFactory), subagent_fork::KIND),
        always(
            Arc::new(subagent_claude_code::ClaudeCodeFactory),
            subagent_claude_code::KIND,
        ),
        always(Arc::new(subagent_codex::CodexFactory), subagent_codex::KIND),
        BuiltInKind {
            kind: "acp",
            feature: Some("acp"),
            #[cfg(feature = "acp")]
            factory: Some(Arc::new(subagent_acp::AcpFactory)),
            #[cfg(not(feature = "acp"))]
            factory: None,
        },
        always(Arc::new(subagent_a2a::A2aFactory), subagent_a2a::KIND),
        BuiltInKind {
            kind: "nats",
            feature: Some("nats"),
            #[cfg(feature = "nats")]
            factory: Some(Arc::new(subagent_nats::NatsFactory)),
            #[cfg(not(feature = "nats"))]
            factory: None,
        },
    ]
}

/// The factories of the kinds this build has ([`built_in_kinds`]).
pub fn built_in_factories() -> Vec<Arc<dyn ProviderFactory>> {
    built_in_kinds()
        .into_iter()
        .filter_map(|kind| kind.factory)
        .collect()
}

/// Where an enabled row's children run, as its kind's factory says
/// ([`ProviderFactory::placement`]); a disabled row, or one of a kind not among `factories`,
/// runs nowhere here ([`Placement::Elsewhere`]).
pub(crate) fn placement(
    row: &subagent_preset::ProviderRow,
    factories: &[Arc<dyn ProviderFactory>],
) -> Placement {
    if row.disabled {
        return Placement::Elsewhere;
    }
    factories
        .iter()
        .find(|factory| factory.kind() == row.kind)
        .map_or(Placement::Elsewhere, |factory| {
            factory.placement(&row.config)
        })
}

/// Whether `row` is enabled and runs an in-process agent (a `spawn` or `fork` row): one whose
/// sessions this directory's session store keeps.
pub(crate) fn in_process(
    row: &subagent_preset::ProviderRow,
    factories: &[Arc<dyn ProviderFactory>],
) -> bool {
    placement(row, factories).in_process()
}

/// Whether an enabled row (only `provider`'s, when given) runs an in-process agent on the
/// preset's default model: a `spawn` or `fork` row without a `model` of its own. Such a row
/// cannot run when that model's key is missing ([`crate::setup::ChosenModel::require`]).
pub(crate) fn uses_default_model(
    preset: &Preset,
    factories: &[Arc<dyn ProviderFactory>],
    provider: Option<&str>,
) -> bool {
    preset.providers.iter().any(|row| {
        provider.is_none_or(|name| row.name == name) && placement(row, factories).on_default_model()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_its_factorys_and_given_once() {
        let kinds = built_in_kinds();
        for kind in &kinds {
            if let Some(factory) = &kind.factory {
                assert_eq!(factory.kind(), kind.kind);
            }
            assert_eq!(
                kinds.iter().filter(|other| other.kind == kind.kind).count(),
                1,
                "{kind:?}"
            );
        }
        assert_eq!(
            kinds.iter().map(|kind| kind.kind).collect::<Vec<_>>(),
            [
                "spawn",
                "fork",
                "claude-code",
                "codex",
                "acp",
                "a2a",
                "nats"
            ]
        );
    }
}
