//! Our extension of A2A, under [`EXTENSION_URI`]: what a `subagent serve` adds to the plain
//! protocol so that another `subagents` instance loses nothing across the wire.
//!
//! - The card's extension `params` ([`CardParams`]): each skill's provider and capability table,
//!   and the server's depth cap.
//! - A message's `metadata[EXTENSION_URI]` ([`RequestFields`]): the request fields plain A2A has
//!   no place for (output schema, max turns, tool filter, persona, model, depth, agent type).
//! - A status update's `metadata[EXTENSION_URI]`: `{"event": RunEvent}`, the run's own event;
//!   the final task's: `{"outcome": Outcome}`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use subagent_core::{Capabilities, Effort, PermissionMode, ToolFilter};

use crate::lenient::opt_u32_lenient;
use crate::types::Metadata;

/// The URI of our extension (in the card, in metadata keys, as the domain of our `ErrorInfo`).
pub const EXTENSION_URI: &str = "urn:subagents:a2a:v1";

/// One skill of a `subagent serve` card, as our extension describes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillRow {
    /// The skill's id (a delegation row's tool name or an agent type's name).
    pub skill: String,
    /// `row` or `agent`.
    pub kind: String,
    /// The provider that runs it.
    pub provider: String,
    /// What that provider honours.
    pub capabilities: Capabilities,
}

/// The card extension's `params`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CardParams {
    /// The server's depth cap: a request whose child would run deeper is refused.
    pub max_depth: u32,
    /// Every skill with its provider and capability table.
    pub skills: Vec<SkillRow>,
}

/// The request fields a message carries in `metadata[EXTENSION_URI]`. Every field is optional;
/// numbers are read leniently (`3.0` is 3). A field this version does not know is an error,
/// not dropped: the sender meant something by it (a typo, a newer client's field) that would
/// not be honoured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestFields {
    /// The skill to run (a delegation row or an agent type); absent: the card's first skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    /// The agent type to run (same as naming it as the skill, but also valid beside a row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// A short label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Structured output wanted: an object-rooted JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Turn limit.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_u32_lenient"
    )]
    pub max_turns: Option<u32>,
    /// Which tools the child may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_filter: Option<ToolFilter>,
    /// Instructions added to the child's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// The model the child runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The caller's delegation depth (0 for a top-level caller): the child runs one deeper.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_u32_lenient"
    )]
    pub depth: Option<u32>,
    /// A lower depth cap for the child and its descendants.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_u32_lenient"
    )]
    pub max_depth: Option<u32>,
    /// How hard the child's model reasons (gated by the skill's `effort` capability).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
    /// The loosest permission mode the child may run in (the caller's own mode): the child runs
    /// in its row's mode tightened by it, never looser.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_ceiling: Option<PermissionMode>,
}

impl RequestFields {
    /// The fields in `metadata`, if it has our key. A key whose value does not read is an error
    /// naming what is wrong.
    pub fn from_metadata(metadata: Option<&Metadata>) -> Result<Option<Self>, String> {
        let Some(value) = metadata.and_then(|metadata| metadata.get(EXTENSION_URI)) else {
            return Ok(None);
        };
        serde_json::from_value(value.clone())
            .map(Some)
            .map_err(|error| format!("metadata[\"{EXTENSION_URI}\"]: {error}"))
    }

    /// `metadata` with these fields under our key.
    pub fn into_metadata(self) -> Metadata {
        let mut metadata = Map::new();
        metadata.insert(
            EXTENSION_URI.to_owned(),
            serde_json::to_value(self).unwrap_or(Value::Null),
        );
        metadata
    }
}

/// The key of `SubscribeToTask`'s `metadata[EXTENSION_URI]` asking for the task's events from
/// this index on (the count of events a client has already read from the task's streams, the
/// first `task` event included) instead of a snapshot: a client that lost its stream gets
/// exactly what it missed, nothing twice. Servers without our extension ignore it and send the
/// snapshot first, as A2A says.
pub const FROM_KEY: &str = "from";

/// `{EXTENSION_URI: {key: value}}`.
pub fn metadata_with(key: &str, value: Value) -> Metadata {
    let mut inner = Map::new();
    inner.insert(key.to_owned(), value);
    let mut metadata = Map::new();
    metadata.insert(EXTENSION_URI.to_owned(), Value::Object(inner));
    metadata
}

/// `metadata[EXTENSION_URI][key]`.
pub fn metadata_get<'m>(metadata: Option<&'m Metadata>, key: &str) -> Option<&'m Value> {
    metadata?.get(EXTENSION_URI)?.get(key)
}
