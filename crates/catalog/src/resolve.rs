//! Effective-config resolution: what a child actually runs with, from four layers.
//!
//! | setting | rule |
//! |---|---|
//! | `model`, `effort` | first set of request > definition > persona > parent (`inherit` = unset) |
//! | `max_turns` | first set of request > definition > persona (a parent's limit is its own) |
//! | `isolation` | first set of request > definition > persona, else none |
//! | `permission_mode` | intersection of every layer that sets one: the strictest wins, so read-only (`plan`) ∩ anything = read-only and a request cannot loosen its definition or its parent |
//! | `tool_filter` | intersection of every layer that sets one: allowed by all, denied by any |
//! | `background` | true when the request, the definition or the persona says so |
//!
//! Pure functions over values: no I/O, no catalog needed.

use serde::Serialize;
use subagent_core::agents::{AgentProfile, wildcard_match};
use subagent_core::{PermissionMode, ToolFilter};

use crate::definition::{Definition, Isolation};

/// One layer's settings; `None` = this layer says nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Settings {
    /// Model alias or id (`inherit` counts as unset).
    pub model: Option<String>,
    /// Reasoning effort.
    pub effort: Option<String>,
    /// Tools.
    pub tool_filter: Option<ToolFilter>,
    /// Permission mode.
    pub permission_mode: Option<PermissionMode>,
    /// Turn limit.
    pub max_turns: Option<u32>,
    /// Isolation.
    pub isolation: Option<Isolation>,
    /// Run in the background.
    pub background: Option<bool>,
}

impl Settings {
    /// The settings of a definition (its tool filter with aliases, see
    /// [`Definition::tool_filter`]).
    pub fn from_definition(definition: &Definition) -> Self {
        Self {
            model: definition.model.clone(),
            effort: definition.effort.map(|effort| effort.as_str().to_owned()),
            tool_filter: definition.tool_filter(),
            permission_mode: definition.permission_mode,
            max_turns: definition.max_turns,
            isolation: definition.isolation,
            background: definition.background.then_some(true),
        }
    }

    /// The settings of a resolved profile (which carries no effort or isolation).
    pub fn from_profile(profile: &AgentProfile) -> Self {
        Self {
            model: profile.model.clone(),
            effort: None,
            tool_filter: profile.tool_filter.clone(),
            permission_mode: profile.permission_mode,
            max_turns: profile.max_turns,
            isolation: None,
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
    pub fn effort(mut self, effort: impl Into<String>) -> Self {
        self.effort = Some(effort.into());
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
    pub fn isolation(mut self, isolation: Isolation) -> Self {
        self.isolation = Some(isolation);
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
    /// The persona's defaults (from the preset row).
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
    pub effort: Option<String>,
    /// Tools; `None` = unrestricted.
    pub tool_filter: Option<ToolFilter>,
    /// Permission mode; `None` = the provider's default.
    pub permission_mode: Option<PermissionMode>,
    /// Turn limit; `None` = the provider's default.
    pub max_turns: Option<u32>,
    /// Isolation; `None` = the parent's working directory.
    pub isolation: Option<Isolation>,
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
    let named = |pick: fn(&Settings) -> Option<&String>, layers: &[&Settings]| {
        layers
            .iter()
            .filter_map(|layer| pick(layer))
            .map(|value| value.trim())
            .find(|value| !value.is_empty() && !value.eq_ignore_ascii_case("inherit"))
            .map(str::to_owned)
    };
    Effective {
        model: named(|s| s.model.as_ref(), &all),
        effort: named(|s| s.effort.as_ref(), &all),
        tool_filter: all
            .iter()
            .filter_map(|layer| layer.tool_filter.as_ref())
            .fold(None, |acc: Option<ToolFilter>, filter| {
                Some(match acc {
                    None => filter.clone(),
                    Some(acc) => intersect_filters(&acc, filter),
                })
            }),
        permission_mode: all
            .iter()
            .filter_map(|layer| layer.permission_mode)
            .reduce(PermissionMode::intersect),
        max_turns: own.iter().find_map(|layer| layer.max_turns),
        isolation: own.iter().find_map(|layer| layer.isolation),
        background: own.iter().any(|layer| layer.background == Some(true)),
    }
}

/// Both filters at once: a tool passes only if it passes both.
///
/// The allow lists are intersected pattern-wise: a pattern of one list stays when the other list
/// has a pattern covering it (`read_*` ∩ `*` = `read_*`, `*` ∩ `[read_file]` = `[read_file]`).
/// Two overlapping patterns neither of which covers the other (`read_*` ∩ `*_file`) keep
/// neither: the result may allow less than the exact intersection, never more. Deny lists are
/// united.
pub fn intersect_filters(a: &ToolFilter, b: &ToolFilter) -> ToolFilter {
    let allow = match (&a.allow, &b.allow) {
        (None, None) => None,
        (Some(only), None) | (None, Some(only)) => Some(only.clone()),
        (Some(left), Some(right)) => {
            let covered = |pattern: &String, by: &[String]| {
                by.iter().any(|other| wildcard_match(other, pattern))
            };
            let mut allow: Vec<String> = Vec::new();
            for pattern in left
                .iter()
                .filter(|p| covered(p, right))
                .chain(right.iter().filter(|p| covered(p, left)))
            {
                if !allow.contains(pattern) {
                    allow.push(pattern.clone());
                }
            }
            Some(allow)
        }
    };
    let mut deny = a.deny.clone();
    for pattern in &b.deny {
        if !deny.contains(pattern) {
            deny.push(pattern.clone());
        }
    }
    ToolFilter { allow, deny }
}
