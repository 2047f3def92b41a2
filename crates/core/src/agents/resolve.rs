//! The effective configuration: what a child runs with, from four layers.
//!
//! | setting | rule |
//! |---|---|
//! | `model`, `effort` | first set of request > definition > persona > parent (`inherit` or blank = unset) |
//! | `max_turns` | first set of request > definition > persona (a parent's limit is its own) |
//! | `isolation` | first set of request > definition > persona, else none (as written; [`Isolation::resolve`](crate::Isolation::resolve) checks the value) |
//! | `permission_mode` | intersection of every layer that sets one: the strictest wins, so read-only (`plan`) ∩ anything = read-only and a request cannot loosen its definition or its parent |
//! | `tool_filter` | intersection of every layer that sets one: allowed by all, denied by any |
//! | `background` | true when the request, the definition or the persona says so |
//!
//! Pure functions over values. [`StartRequestBuilder::agent_with`](crate::StartRequestBuilder::agent_with)
//! turns the result into a request: the one mapping the delegation tool and the CLI use.

use serde::Serialize;

use super::{AgentProfile, INHERIT_MODEL, PermissionMode, ToolFilter};
use crate::Effort;

/// One layer's settings; `None` = this layer says nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Settings {
    /// Model alias or id (`inherit` counts as unset).
    pub model: Option<String>,
    /// Reasoning effort.
    pub effort: Option<Effort>,
    /// Tools.
    pub tool_filter: Option<ToolFilter>,
    /// Permission mode.
    pub permission_mode: Option<PermissionMode>,
    /// Turn limit.
    pub max_turns: Option<u32>,
    /// Isolation, as written (`worktree`).
    pub isolation: Option<String>,
    /// Run in the background.
    pub background: Option<bool>,
}

impl Settings {
    /// The settings of an agent type.
    pub fn from_profile(profile: &AgentProfile) -> Self {
        Self {
            model: profile.model.clone(),
            effort: profile.effort,
            tool_filter: profile.tool_filter.clone(),
            permission_mode: profile.permission_mode,
            max_turns: profile.max_turns,
            isolation: profile.isolation.clone(),
            background: profile.background.then_some(true),
        }
    }

    /// Sets the model.
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the effort.
    #[must_use]
    pub fn effort(mut self, effort: Effort) -> Self {
        self.effort = Some(effort);
        self
    }

    /// Sets the tool filter.
    #[must_use]
    pub fn tool_filter(mut self, filter: ToolFilter) -> Self {
        self.tool_filter = Some(filter);
        self
    }

    /// Sets the permission mode.
    #[must_use]
    pub fn permission_mode(mut self, mode: PermissionMode) -> Self {
        self.permission_mode = Some(mode);
        self
    }

    /// Sets the turn limit.
    #[must_use]
    pub fn max_turns(mut self, max_turns: u32) -> Self {
        self.max_turns = Some(max_turns);
        self
    }

    /// Sets the isolation.
    #[must_use]
    pub fn isolation(mut self, isolation: impl Into<String>) -> Self {
        self.isolation = Some(isolation.into());
        self
    }

    /// Sets the background flag.
    #[must_use]
    pub fn background(mut self, background: bool) -> Self {
        self.background = Some(background);
        self
    }
}

/// The four layers, highest priority first.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Layers {
    /// What the caller asked for explicitly (the delegation tool's arguments, a CLI flag).
    pub request: Settings,
    /// The agent definition.
    pub definition: Settings,
    /// The persona's defaults (the delegation tool's row).
    pub persona: Settings,
    /// The parent run's own settings (what "inherit" inherits).
    pub parent: Settings,
}

/// What a child runs with.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Effective {
    /// Model; `None` = the provider's default.
    pub model: Option<String>,
    /// Reasoning effort; `None` = the provider's default.
    pub effort: Option<Effort>,
    /// Tools; `None` = unrestricted.
    pub tool_filter: Option<ToolFilter>,
    /// Permission mode; `None` = the provider's default.
    pub permission_mode: Option<PermissionMode>,
    /// Turn limit; `None` = the provider's default.
    pub max_turns: Option<u32>,
    /// Isolation, as written; `None` = the parent's working directory.
    pub isolation: Option<String>,
    /// Run in the background.
    pub background: bool,
}

/// Resolves the layers (see the module docs for the rules).
pub fn resolve(layers: &Layers) -> Effective {
    let all = [
        &layers.request,
        &layers.definition,
        &layers.persona,
        &layers.parent,
    ];
    let own = &all[..3];
    Effective {
        model: all
            .iter()
            .filter_map(|layer| layer.model.as_deref())
            .map(str::trim)
            .find(|model| !model.is_empty() && !model.eq_ignore_ascii_case(INHERIT_MODEL))
            .map(str::to_owned),
        effort: all.iter().find_map(|layer| layer.effort),
        tool_filter: all
            .iter()
            .filter_map(|layer| layer.tool_filter.as_ref())
            .fold(None, |acc: Option<ToolFilter>, filter| {
                Some(match acc {
                    None => filter.clone(),
                    Some(acc) => acc.intersect(filter),
                })
            }),
        permission_mode: all
            .iter()
            .filter_map(|layer| layer.permission_mode)
            .reduce(PermissionMode::intersect),
        max_turns: own.iter().find_map(|layer| layer.max_turns),
        isolation: own
            .iter()
            .filter_map(|layer| layer.isolation.as_deref())
            .map(str::trim)
            .find(|isolation| !isolation.is_empty())
            .map(str::to_owned),
        background: own.iter().any(|layer| layer.background == Some(true)),
    }
}

/// Both filters at once (see [`ToolFilter::intersect`]): a tool passes only if it passes both.
pub fn intersect_filters(a: &ToolFilter, b: &ToolFilter) -> ToolFilter {
    a.intersect(b)
}
