//! Building a loaded preset: providers into a [`Registry`], and the listing of every row.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use subagent_core::registry::Registry;
use subagent_core::{BuildContext, Capabilities, Extensions, ProviderFactory};

use crate::format::{ModelSection, ToolRow};
use crate::{Error, Position, Preset, Result, Site};

/// What [`Preset::build`] returns: everything the CLI (or a server) runs with.
#[derive(Debug)]
pub struct Built {
    /// The enabled providers, in row order, behind a registry capped at the preset's
    /// `max_depth`.
    pub registry: Registry,
    /// The delegation-tool rows, in order (each refers to a registered provider).
    pub tools: Vec<ToolRow>,
    /// The default model of in-process agents, if the preset names one.
    pub model: Option<ModelSection>,
    /// The agent definition directories, resolved against the preset's directory.
    pub agents: Vec<PathBuf>,
}

/// One provider row as `subagent providers` shows it (disabled rows included).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProviderListing {
    /// The row's name.
    pub name: String,
    /// The row's kind.
    pub kind: String,
    /// Whether the row is disabled (listed, not built).
    pub disabled: bool,
    /// The factory's one-line summary.
    pub summary: String,
    /// What the row honours: what its built provider declares ([`Preset::built_listing`]), else
    /// (a disabled row, [`Preset::listing`]) what providers of its kind can honour.
    pub capabilities: Capabilities,
    /// Why the built provider lacks a capability its kind can have, by capability name
    /// ([`SubagentProvider::capability_reason`](subagent_core::SubagentProvider::capability_reason)).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub reasons: std::collections::BTreeMap<String, String>,
    /// Why an enabled row could not be built (an unreachable card or server, a missing CLI is
    /// not one: that shows when it starts); its kind's table is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Where the row starts in the preset.
    pub location: Position,
}

fn factory<'f>(
    factories: &'f [Arc<dyn ProviderFactory>],
    kind: &str,
) -> Option<&'f Arc<dyn ProviderFactory>> {
    factories.iter().find(|factory| factory.kind() == kind)
}

impl Preset {
    /// A build context for this preset: its directory as `base_dir` (where relative paths in
    /// provider configs resolve) and the caller's shared services. Its model aliases go in too (a [`ModelAliases`](subagent_model::ModelAliases) with the
    /// default model's protocol), for the in-process providers. No secrets: the caller sets
    /// [`BuildContext::secrets`] to the ones it configured.
    pub fn build_context(&self, mut extensions: Extensions) -> BuildContext {
        extensions.insert(subagent_model::ModelAliases::new(
            self.model_aliases.clone(),
            self.model.as_ref().map(|model| model.kind),
        ));
        BuildContext {
            base_dir: self.base_dir.clone(),
            extensions,
            ..BuildContext::default()
        }
    }

    /// Every provider row, disabled ones included, with its kind's summary and capabilities.
    /// A row whose kind is not among `factories` (possible only with other factories than the
    /// preset was loaded with) is listed with no capabilities and an empty summary.
    pub fn listing(&self, factories: &[Arc<dyn ProviderFactory>]) -> Vec<ProviderListing> {
        self.providers
            .iter()
            .map(|row| {
                let factory = factory(factories, &row.kind);
                ProviderListing {
                    name: row.name.clone(),
                    kind: row.kind.clone(),
                    disabled: row.disabled,
                    summary: factory.map(|f| f.summary().to_owned()).unwrap_or_default(),
                    capabilities: factory.map_or(Capabilities::NONE, |f| f.capabilities()),
                    reasons: std::collections::BTreeMap::new(),
                    unavailable: None,
                    location: row.location,
                }
            })
            .collect()
    }

    /// [`Preset::listing`] with each enabled row built (with `context`, as
    /// [`Preset::build`] builds it): its table is what the built provider declares (spawn on a
    /// model without reasoning effort, an A2A agent's card, the tables NATS workers announce),
    /// with the reason for each capability it lacks where it says one. A row that cannot be
    /// built keeps its kind's table and says why in `unavailable`.
    pub fn built_listing(
        &self,
        factories: &[Arc<dyn ProviderFactory>],
        context: &BuildContext,
    ) -> Vec<ProviderListing> {
        let mut listing = self.listing(factories);
        for (entry, row) in listing.iter_mut().zip(&self.providers) {
            if row.disabled {
                continue;
            }
            let Some(factory) = factory(factories, &row.kind) else {
                continue;
            };
            match factory.build(&row.name, &row.config, context) {
                Ok(provider) => {
                    entry.capabilities = provider.capabilities();
                    entry.reasons = subagent_core::Capability::ALL
                        .into_iter()
                        .filter(|capability| !entry.capabilities.supports(*capability))
                        .filter_map(|capability| {
                            provider
                                .capability_reason(capability)
                                .map(|why| (capability.as_str().to_owned(), why))
                        })
                        .collect();
                }
                Err(error) => entry.unavailable = Some(error.to_string()),
            }
        }
        listing
    }

    /// Builds every enabled provider row with its factory (in row order) into a registry capped
    /// at the preset's `max_depth`.
    ///
    /// `context` is passed to every factory as is; [`Preset::build_context`] makes one whose
    /// `base_dir` is the preset's directory. `factories` should be the ones the preset was
    /// loaded with; a row whose kind is missing is reported as [`Error::UnknownKind`]. A
    /// factory's or the registry's refusal is [`Error::Build`] at the row.
    pub fn build(
        &self,
        factories: &[Arc<dyn ProviderFactory>],
        context: &BuildContext,
    ) -> Result<Built> {
        let registry = Registry::with_max_depth(self.max_depth);
        for (i, row) in self.providers.iter().enumerate() {
            if row.disabled {
                continue;
            }
            let site = |key: &str| {
                Box::new(Site {
                    file: self.path.clone(),
                    position: row.location,
                    key: format!("providers[{i}]{key}"),
                })
            };
            let Some(factory) = factory(factories, &row.kind) else {
                return Err(Error::UnknownKind {
                    site: site(".kind"),
                    kind: row.kind.clone(),
                    known: factories.iter().map(|f| f.kind().to_owned()).collect(),
                });
            };
            let provider = factory
                .build(&row.name, &row.config, context)
                .map_err(|source| Error::Build {
                    site: site(""),
                    provider: row.name.clone(),
                    source,
                })?;
            registry.register(provider).map_err(|source| Error::Build {
                site: site(""),
                provider: row.name.clone(),
                source,
            })?;
        }
        Ok(Built {
            registry,
            tools: self.tools.clone(),
            model: self.model.clone(),
            agents: self.agents.clone(),
        })
    }
}
