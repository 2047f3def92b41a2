//! The delegation vocabulary: agent types as the delegation tool sees them (resolved
//! [`AgentProfile`]s and the [`AgentDirectory`] that lists them), the [`PermissionMode`]s a child
//! runs under, the [`BackgroundMode`] of a delegation tool, and [`ToolFilter`]s with their
//! [`wildcard_match`] patterns. `subagent-catalog` builds profiles from definition files; the
//! in-process runtime's delegation tool reads them through [`AgentDirectory`], so neither
//! depends on the other. [`PermissionMode`] and [`ToolFilter`] are also at the crate root: they
//! are the types of two [`StartRequest`](crate::StartRequest) fields.
//!
//! The effective configuration of a child is resolved here too ([`resolve`]: explicit request >
//! agent definition > persona > parent, modes and filters intersected), and
//! [`StartRequestBuilder::agent_with`](crate::StartRequestBuilder::agent_with) makes a request
//! of it: the catalog re-exports the resolver, the delegation tool and the CLI start through it.

use serde::{Deserialize, Serialize};

mod resolve;

pub use crate::filter::{ToolFilter, wildcard_match};
pub use resolve::{Effective, Layers, Settings, intersect_filters, resolve};

/// The model name that means "the parent's model": never sent as an override.
pub const INHERIT_MODEL: &str = "inherit";

/// How a child's tool calls are permitted. Written as ours (kebab-case: `accept-edits`) or as
/// Claude Code writes it (camelCase: `acceptEdits`, `bypassPermissions`), wherever a mode is read
/// ([`PermissionMode::SPELLINGS`]); always serialized kebab-case.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum PermissionMode {
    /// Rules decide; what no rule decides is asked (or denied in the background).
    #[default]
    Default,
    /// File edits inside the run's roots are allowed without asking.
    AcceptEdits,
    /// Read-only tools only.
    Plan,
    /// Never ask: what no rule allows is denied.
    DontAsk,
    /// Everything is allowed.
    Bypass,
}

impl PermissionMode {
    /// Every mode, in order.
    pub const ALL: [PermissionMode; 5] = [
        Self::Default,
        Self::AcceptEdits,
        Self::Plan,
        Self::DontAsk,
        Self::Bypass,
    ];

    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "accept-edits",
            Self::Plan => "plan",
            Self::DontAsk => "dont-ask",
            Self::Bypass => "bypass",
        }
    }

    /// Every accepted spelling and its mode, in the order [`PermissionMode::ALL`] lists the
    /// modes: ours (kebab-case) first, then Claude Code's (camelCase).
    pub const SPELLINGS: [(&'static str, PermissionMode); 9] = [
        ("default", Self::Default),
        ("accept-edits", Self::AcceptEdits),
        ("acceptEdits", Self::AcceptEdits),
        ("plan", Self::Plan),
        ("dont-ask", Self::DontAsk),
        ("dontAsk", Self::DontAsk),
        ("bypass", Self::Bypass),
        ("bypass-permissions", Self::Bypass),
        ("bypassPermissions", Self::Bypass),
    ];

    /// Parses any of [`PermissionMode::SPELLINGS`].
    pub fn parse(text: &str) -> Option<Self> {
        Self::SPELLINGS
            .iter()
            .find(|(spelling, _)| *spelling == text)
            .map(|(_, mode)| *mode)
    }

    /// The valid spellings, for an error message: `default, accept-edits, acceptEdits, …`.
    pub fn valid_spellings() -> String {
        Self::SPELLINGS
            .iter()
            .map(|(spelling, _)| *spelling)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The stricter of two modes (`plan` is the strictest, `bypass` the loosest), so that
    /// combining a read-only source with anything stays read-only.
    #[must_use]
    pub fn intersect(self, other: Self) -> Self {
        fn rank(mode: PermissionMode) -> u8 {
            match mode {
                PermissionMode::Plan => 0,
                PermissionMode::DontAsk => 1,
                PermissionMode::Default => 2,
                PermissionMode::AcceptEdits => 3,
                PermissionMode::Bypass => 4,
            }
        }
        if rank(self) <= rank(other) {
            self
        } else {
            other
        }
    }
}

impl std::fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for PermissionMode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown permission mode {text:?} (valid: {})",
                Self::valid_spellings()
            ))
        })
    }
}

/// A string with every spelling as an `enum`, inlined where it is used, so that a validator
/// accepts both spellings and its error for a bad value lists them.
impl schemars::JsonSchema for PermissionMode {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PermissionMode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let spellings: Vec<&str> = Self::SPELLINGS.iter().map(|(s, _)| *s).collect();
        schemars::json_schema!({
            "type": "string",
            "enum": spellings,
            "description": "How a child's tool calls are permitted: `default` (rules decide; what no \
                rule decides is asked, or denied in the background), `accept-edits` (file edits \
                inside the run's roots are allowed without asking), `plan` (read-only tools only), \
                `dont-ask` (never ask: what no rule allows is denied), `bypass` (everything is \
                allowed). Claude Code's spellings work too: `acceptEdits`, `dontAsk`, \
                `bypassPermissions` (and `bypass-permissions`)."
        })
    }
}

/// Whether delegations of a tool row may, must or must not run in the background.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundMode {
    /// The model chooses with `run_in_background`.
    #[default]
    Allowed,
    /// Every delegation runs in the background.
    Always,
    /// `run_in_background` is ignored: the parent waits (forks still run in the background).
    Never,
}

/// One agent type, resolved: what the delegation tool needs to start it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct AgentProfile {
    /// The type name (`subagent_type`).
    pub name: String,
    /// When to use it (shown to the model in the delegation tool's description).
    pub description: String,
    /// The provider that runs it; `None` = the delegation tool's own provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Instructions for the child (a definition's body, plus its persona), sent as the request's
    /// `persona`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Tools the child may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_filter: Option<ToolFilter>,
    /// The model; `None` = inherit the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Turn limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Permission mode; `None` = inherit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<PermissionMode>,
    /// Always run in the background.
    #[serde(default)]
    pub background: bool,
    /// Isolation, as the definition writes it (`worktree`); read with
    /// [`Isolation::resolve`](crate::Isolation::resolve), which refuses other values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    /// Reasoning effort; `None` = the model's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<crate::Effort>,
    /// The agent types it may start in turn (`Agent(explore, plan)` in a definition's tools);
    /// `None` = any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_types: Option<Vec<String>>,
    /// The most tokens a run of it may use (`maxTokensBudget`); past it the run is stopped
    /// `budget_exceeded`. `None` = no budget of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_budget: Option<u64>,
    /// The definition's `hooks:`, in Claude Code's settings shape: they run in this agent's
    /// runs only, beside the settings' hooks, where it runs in process (spawn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<serde_json::Value>,
    /// The skills preloaded into its context (`skills:`): each one's body is in the child's
    /// first message, as Claude Code puts it there. Names no skill has are left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
    /// Its memory (`memory:`): a directory that survives its runs, whose index is loaded into
    /// each child's instructions and which its file tools may write (an in-process provider
    /// does both; a product CLI reads the definition's field itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::memory::AgentMemory>,
    /// Its `mcpServers:`: names of configured servers and servers defined for it alone (each
    /// of its children gets those started, or handed to its product, and stopped with it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<crate::mcp::AgentMcpServer>,
    /// Where the definition came from (for listings), e.g. `builtin` or a file path.
    #[serde(default)]
    pub source: String,
}

impl AgentProfile {
    /// A profile with a name and description and nothing else set.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            ..Self::default()
        }
    }
}

/// The agent type a child runs (an extension of its request, put there with its profile's
/// parts by `AgentProfile::give`): what a record of the run names it by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentType(pub String);

/// A child's name in a team (an extension of its request, put there by whoever starts
/// teammates): what a record of the run names it by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Teammate(pub String);

/// The agent types a delegation tool offers. Implementations may reload: callers ask each time.
pub trait AgentDirectory: Send + Sync {
    /// Every type, in the order they are listed to the model.
    fn agents(&self) -> Vec<AgentProfile>;

    /// The type of that name.
    fn get(&self, name: &str) -> Option<AgentProfile> {
        self.agents().into_iter().find(|agent| agent.name == name)
    }
}

/// A fixed list of profiles.
#[derive(Clone, Debug, Default)]
pub struct StaticAgents(pub Vec<AgentProfile>);

impl AgentDirectory for StaticAgents {
    fn agents(&self) -> Vec<AgentProfile> {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_intersected_with_anything_stays_read_only() {
        for mode in PermissionMode::ALL {
            assert_eq!(PermissionMode::Plan.intersect(mode), PermissionMode::Plan);
            assert_eq!(mode.intersect(PermissionMode::Plan), PermissionMode::Plan);
            assert_eq!(PermissionMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(
            PermissionMode::Bypass.intersect(PermissionMode::AcceptEdits),
            PermissionMode::AcceptEdits
        );
        assert_eq!(
            PermissionMode::parse("bypassPermissions"),
            Some(PermissionMode::Bypass)
        );
    }

    #[test]
    fn every_spelling_reads_from_json_and_writes_kebab_case() {
        for (spelling, mode) in PermissionMode::SPELLINGS {
            let read: PermissionMode = serde_json::from_value(spelling.into()).unwrap();
            assert_eq!(read, mode, "{spelling}");
            assert_eq!(
                serde_json::to_value(read).unwrap(),
                serde_json::Value::from(mode.as_str())
            );
        }
        let error = serde_json::from_value::<PermissionMode>("yolo".into())
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "unknown permission mode \"yolo\" (valid: default, accept-edits, acceptEdits, plan, \
             dont-ask, dontAsk, bypass, bypass-permissions, bypassPermissions)"
        );
    }

    #[test]
    fn the_schema_lists_every_spelling_and_allows_null_when_optional() {
        let schema = schemars::schema_for!(Option<PermissionMode>);
        assert_eq!(
            schema.get("enum"),
            Some(&serde_json::json!([
                "default",
                "accept-edits",
                "acceptEdits",
                "plan",
                "dont-ask",
                "dontAsk",
                "bypass",
                "bypass-permissions",
                "bypassPermissions",
                null
            ]))
        );
    }
}
