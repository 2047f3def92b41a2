//! Checking definitions against what their providers can do, so that a definition that could
//! never start is reported when the catalog loads rather than when the model first calls it.

use std::collections::BTreeMap;

use subagent_core::{Capabilities, Capability};

use crate::definition::Definition;
use crate::warning::{Location, Warning, WarningKind};

/// The providers a catalog's definitions can run on: name → capabilities, and the provider a
/// definition without `provider:` runs on (the delegation tool's own). The preset layer builds
/// it from its registry: `registry.providers()` → `(name(), capabilities())`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProviderTable {
    /// The provider of definitions that name none; `None` = do not check those.
    pub default_provider: Option<String>,
    /// Every registered provider.
    pub providers: BTreeMap<String, Capabilities>,
}

impl ProviderTable {
    /// A table with that default provider and no providers yet.
    pub fn new(default_provider: Option<String>) -> Self {
        Self {
            default_provider,
            providers: BTreeMap::new(),
        }
    }

    /// Adds a provider.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, capabilities: Capabilities) -> Self {
        self.providers.insert(name.into(), capabilities);
        self
    }

    /// The warnings for these definitions (see [`capability_warnings`]).
    pub fn check<'a>(&self, definitions: impl IntoIterator<Item = &'a Definition>) -> Vec<Warning> {
        capability_warnings(definitions, self.default_provider.as_deref(), |name| {
            self.providers.get(name).copied()
        })
    }
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
        _ => &[],
    }
}
