//! Checking definitions against what their providers can do, so that a definition that could
//! never start, or would start without the tools it names, is reported when the catalog loads
//! rather than when the model first calls it.

use std::collections::BTreeMap;

use subagent_core::{Capabilities, Capability};

use crate::definition::Definition;
use crate::location::Location;
use crate::parse::edit_distance;
use crate::tools::TOOL_ALIASES;
use crate::warning::{Warning, WarningKind};

/// The providers a catalog's definitions can run on: name → capabilities, and the provider a
/// definition without `provider:` runs on (the delegation tool's own). The preset layer builds
/// it from its registry: `registry.providers()` → `(name(), capabilities())`, plus the tools of
/// the providers whose tools it knows ([`ProviderTable::with_tools`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProviderTable {
    /// The provider of definitions that name none; `None` = do not check those.
    pub default_provider: Option<String>,
    /// Every registered provider.
    pub providers: BTreeMap<String, Capabilities>,
    /// The tools of the providers whose tools are known (see [`tool_warnings`]).
    pub tools: BTreeMap<String, Vec<String>>,
}

impl ProviderTable {
    /// A table with that default provider and no providers yet.
    pub fn new(default_provider: Option<String>) -> Self {
        Self {
            default_provider,
            providers: BTreeMap::new(),
            tools: BTreeMap::new(),
        }
    }

    /// Adds a provider.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, capabilities: Capabilities) -> Self {
        self.providers.insert(name.into(), capabilities);
        self
    }

    /// Records the tools a provider gives a child (before any filter), so that definitions can
    /// be checked against them (see [`tool_warnings`]).
    #[must_use]
    pub fn with_tools<I, S>(mut self, name: impl Into<String>, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools
            .insert(name.into(), tools.into_iter().map(Into::into).collect());
        self
    }

    /// The warnings for these definitions: [`capability_warnings`], then [`tool_warnings`].
    pub fn check<'a>(
        &self,
        definitions: impl IntoIterator<Item = &'a Definition> + Clone,
    ) -> Vec<Warning> {
        let mut warnings = capability_warnings(
            definitions.clone(),
            self.default_provider.as_deref(),
            |name| self.providers.get(name).copied(),
        );
        warnings.extend(tool_warnings(
            definitions,
            self.default_provider.as_deref(),
            &self.tools,
        ));
        warnings
    }
}

/// The warnings about the tools definitions name, given the tools of the providers whose tools
/// are known (`tools`: provider → tool names):
/// - a name in `tools` or `disallowedTools` that is no tool of any of those providers nor one of
///   the names [`TOOL_ALIASES`] knows ([`WarningKind::UnknownTool`], with the closest known name
///   when it is close enough to be a typo). Patterns (`read_*`), Claude Code rules
///   (`Bash(git:*)`) and MCP tools (`mcp__…`) are not checked;
/// - a definition whose filter leaves it none of its provider's tools ([`WarningKind::NoTools`];
///   not for an explicit `tools: []`).
///
/// Nothing is checked when no provider's tools are known.
pub fn tool_warnings<'a>(
    definitions: impl IntoIterator<Item = &'a Definition>,
    default_provider: Option<&str>,
    tools: &BTreeMap<String, Vec<String>>,
) -> Vec<Warning> {
    if tools.is_empty() {
        return Vec::new();
    }
    let mut known: Vec<&str> = Vec::new();
    let names = tools.values().flatten().map(String::as_str);
    let aliases = TOOL_ALIASES
        .iter()
        .flat_map(|(ours, theirs)| [*ours, *theirs]);
    for name in names.chain(aliases) {
        if !known.contains(&name) {
            known.push(name);
        }
    }
    let mut warnings = Vec::new();
    for definition in definitions {
        let warning = |kind, field: &str, message: String| {
            let location = definition.field_location(field).unwrap_or(Location::NONE);
            match definition.origin.path() {
                Some(path) => Warning::new(kind, path, location, message),
                None => Warning::unplaced(kind, message),
            }
        };
        let lists = [
            ("tools", definition.tools.as_deref().unwrap_or_default()),
            ("disallowedTools", definition.disallowed_tools.as_slice()),
        ];
        for (field, names) in lists {
            for name in names {
                let checked = !name.contains(['*', '(']) && !name.starts_with("mcp__");
                if !checked || known.contains(&name.as_str()) {
                    continue;
                }
                let guess = closest(name, &known)
                    .map(|guess| format!(" (did you mean `{guess}`?)"))
                    .unwrap_or_default();
                warnings.push(warning(
                    WarningKind::UnknownTool,
                    field,
                    format!(
                        "agent `{}`: unknown tool `{name}` in {field}{guess}",
                        definition.name
                    ),
                ));
            }
        }
        let provider = definition.provider.as_deref().or(default_provider);
        let (Some(provider), Some(filter)) = (provider, definition.tool_filter()) else {
            continue;
        };
        let Some(available) = tools.get(provider) else {
            continue;
        };
        let deliberate = definition.tools.as_ref().is_some_and(Vec::is_empty);
        if deliberate || available.is_empty() || available.iter().any(|t| filter.permits(t)) {
            continue;
        }
        let field = if definition.tools.is_some() {
            "tools"
        } else {
            "disallowedTools"
        };
        warnings.push(warning(
            WarningKind::NoTools,
            field,
            format!(
                "agent `{}` would run with no tools on provider `{provider}`: its \
                 tools/disallowedTools leave none of {}",
                definition.name,
                available.join(", ")
            ),
        ));
    }
    warnings
}

/// The known name closest to `name` (a tool's, a provider's), ignoring case (then with case,
/// between equals), if it is close enough to be a typo.
pub fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    known
        .iter()
        .map(|tool| {
            let distance = edit_distance(&lower, &tool.to_ascii_lowercase());
            (distance, edit_distance(name, tool), *tool)
        })
        .filter(|(distance, _, tool)| *distance <= 1.max(tool.chars().count() / 3))
        .min_by_key(|(distance, with_case, _)| (*distance, *with_case))
        .map(|(_, _, tool)| tool)
}

/// One warning per definition whose provider cannot honour what the definition asks for (every
/// missing capability named, with the fields that need it), and one per definition naming a
/// provider `lookup` does not know. Definitions without `provider:` are checked against
/// `default_provider`, or not at all when it is `None`.
pub fn capability_warnings<'a, F>(
    definitions: impl IntoIterator<Item = &'a Definition>,
    default_provider: Option<&str>,
    lookup: F,
) -> Vec<Warning>
where
    F: Fn(&str) -> Option<Capabilities>,
{
    let mut warnings = Vec::new();
    for definition in definitions {
        let Some(provider) = definition.provider.as_deref().or(default_provider) else {
            continue;
        };
        let place = |fields: &[&str]| {
            fields
                .iter()
                .find_map(|field| definition.field_location(field))
                .unwrap_or(Location::NONE)
        };
        let warning = |kind, location, message: String| match definition.origin.path() {
            Some(path) => Warning::new(kind, path, location, message),
            None => Warning::unplaced(kind, message),
        };
        let Some(capabilities) = lookup(provider) else {
            warnings.push(warning(
                WarningKind::UnknownProvider,
                place(&["provider"]),
                format!(
                    "agent `{}` runs on provider `{provider}`, which is not registered: \
                     starting it will fail with UNKNOWN_PROVIDER",
                    definition.name
                ),
            ));
            continue;
        };
        let missing: Vec<Capability> = definition
            .required_capabilities()
            .into_iter()
            .filter(|capability| !capabilities.supports(*capability))
            .collect();
        if missing.is_empty() {
            continue;
        }
        let fields: Vec<&str> = missing
            .iter()
            .flat_map(|c| fields_needing(*c))
            .copied()
            .collect();
        let described: Vec<String> = missing
            .iter()
            .map(|c| format!("{c} (for {})", fields_needing(*c).join("/")))
            .collect();
        warnings.push(warning(
            WarningKind::Unsupported,
            place(&fields),
            format!(
                "agent `{}` asks for {} which provider `{provider}` does not support: starting \
                 it will fail with UNSUPPORTED_CAPABILITY",
                definition.name,
                described.join(", ")
            ),
        ));
    }
    warnings
}

/// The definition fields that need a capability.
fn fields_needing(capability: Capability) -> &'static [&'static str] {
    match capability {
        Capability::ToolFilter => &["tools", "disallowedTools"],
        Capability::Persona => &["persona", "body"],
        Capability::ModelOverride => &["model"],
        Capability::MaxTurns => &["maxTurns"],
        Capability::Isolation => &["isolation"],
        Capability::Effort => &["effort"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guess_is_a_typo_away_not_any_short_name() {
        let known = ["Bash", "Read", "grep", "Grep", "read_file", "ls"];
        for (name, guess) in [
            ("Raed", Some("Read")),
            ("raed_file", Some("read_file")),
            ("grpe", Some("grep")),
            ("GREP", Some("Grep")),
            ("Task", None),
            ("sl", Some("ls")),
            ("frobnicate", None),
        ] {
            assert_eq!(closest(name, &known), guess, "{name}");
        }
    }
}
