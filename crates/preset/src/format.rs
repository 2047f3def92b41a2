//! The preset file format: the types serde reads and schemars describes.
//!
//! [`Document`] is the file as written (with source positions); the public row types are what
//! a loaded [`crate::Preset`] holds.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_saphyr::Spanned;
use subagent_core::ToolFilter;

use crate::Position;

/// The protocol of the default model: the model crate's own type, so a kind the preset accepts
/// is always one the model clients speak.
pub use subagent_model::ModelKind;

/// Timeouts of model requests in milliseconds; an absent field keeps the model client's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelTimeouts {
    /// Connecting (TCP + TLS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_ms: Option<u64>,
    /// From sending a request to the first event of the answer (keep-alives do not count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_ms: Option<u64>,
    /// The longest wait for the next event of an answer that has started (keep-alives do not
    /// count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_ms: Option<u64>,
    /// The longest a whole request may take, retries included, however steadily its answer
    /// streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_ms: Option<u64>,
}

/// Retries of failed model requests; an absent field keeps the model client's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelRetry {
    /// Retries after the first attempt (0 = none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// The first backoff; it doubles on each retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_base_ms: Option<u64>,
    /// The longest wait between two attempts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_backoff_ms: Option<u64>,
}

/// The default model of in-process agents (`model:`). Secrets are never in it: only the name of
/// the variable holding the key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// The protocol: `anthropic`, `openai-responses`, `openai-chat` or `scripted`.
    pub kind: ModelKind,
    /// The model id sent to the server (for `scripted`, a name echoed back).
    pub name: String,
    /// The server's base URL, without `/v1` (default: the protocol's public API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The environment variable holding the API key (default: `ANTHROPIC_API_KEY` or
    /// `OPENAI_API_KEY`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// `scripted` only: the scenario file, relative to the preset's directory (default: the
    /// built-in offline demo). A loaded preset holds it resolved against that directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<PathBuf>,
    /// Request timeouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<ModelTimeouts>,
    /// Retries before the first streamed byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<ModelRetry>,
    /// The most bytes one answer may have: its text, thinking and tool calls together (default
    /// 8 MiB, 8388608). Past it the answer's stream is stopped and the run fails with
    /// `ANSWER_TOO_LARGE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_answer_bytes: Option<u64>,
    /// `openai-chat` only: the server takes `reasoning_effort` (OpenAI's does, and vLLM's and
    /// Ollama's for reasoning models), so an agent's `effort` is sent to it. Default `false`.
    /// (`anthropic` and `openai-responses` always take an effort.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reasoning_effort: bool,
    /// The model's price in US dollars per million tokens, for cost budgets
    /// (`--max-budget-usd`); absent, no cost budget can be set on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<ModelPrice>,
}

/// A model's price, in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Input tokens not read from the cache.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from the prompt cache (default: a tenth of `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Input tokens written to the prompt cache (default: `input` × 1.25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

/// The most each child of a delegation row may spend (`budget:`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RowBudget {
    /// The most tokens a child may use (input, cache reads and writes included, and output);
    /// past it the child is stopped `budget_exceeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

/// One provider row (`providers:`): a provider built by the factory of `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderRow {
    /// The name tool rows and requests use (unique in the preset).
    pub name: String,
    /// Which factory builds it (`spawn`, `fork`, `claude-code`, `codex`, …).
    pub kind: String,
    /// A disabled row is checked (kind, config) and listed, but not built; no tool row may use
    /// it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// The kind's configuration, validated against its factory's config schema (absent = `{}`).
    #[serde(default = "empty_object")]
    #[schemars(extend("default" = {}))]
    pub config: Value,
    /// Where the row starts in the file.
    #[serde(skip)]
    #[schemars(skip)]
    pub location: Position,
}

/// Whether delegations of a tool row may, must or must not run in the background (the same
/// type the runtime's delegation tool takes).
pub use subagent_core::agents::BackgroundMode as Background;

/// The tool name used when a tool row has none.
pub const DEFAULT_TOOL_NAME: &str = "subagent";

fn default_tool_name() -> String {
    DEFAULT_TOOL_NAME.to_owned()
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// One delegation-tool row (`tools:`): a tool the parent model sees, routed to a provider.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolRow {
    /// The tool's name as the model sees it (unique in the preset).
    #[serde(default = "default_tool_name")]
    pub name: String,
    /// The provider row it delegates to (enabled).
    pub provider: String,
    /// The provider that runs calls without a `subagent_type`: an enabled row whose kind
    /// inherits the parent's context (`fork`). Absent: such calls go to `provider` too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<String>,
    /// A tighter depth cap for starts through this tool (at most the preset's `max_depth`).
    /// Only for providers with the `depth_limit` capability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,
    /// Whether children may, must or must not run in the background.
    #[serde(default)]
    pub background: Background,
    /// A foreground child still running after this many milliseconds moves to the background
    /// (the parent gets its task id; the result comes as a `<task-notification>`). Absent: the
    /// parent waits for the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground_timeout_ms: Option<u64>,
    /// Which tools children may use (`allow`/`deny`, `*` wildcards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_filter: Option<ToolFilter>,
    /// Text added to every child's instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// The tool's description for the model (default: the runtime's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The most each child started through this tool may spend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<RowBudget>,
    /// Where the row starts in the file.
    #[serde(skip)]
    #[schemars(skip)]
    pub location: Position,
}

/// A preset file as written.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "subagent preset",
    description = "Providers, delegation-tool rows and the default model of `subagent` (docs/presets.md)."
)]
pub(crate) struct Document {
    /// The format version; this build reads `1`.
    #[schemars(with = "u32", range(min = 1, max = 1))]
    pub version: Spanned<u32>,
    /// The absolute delegation depth cap (a top-level agent is depth 0; default 3).
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub max_depth: Option<Spanned<u32>>,
    /// The most bytes of one tool result an in-process agent's model is given (default
    /// 100000); a longer result reaches it cut, with a marker that says how much was left out
    /// and how to see the rest. Children inherit their parent's.
    #[serde(default)]
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub max_tool_result_bytes: Option<Spanned<u64>>,
    /// Settings in Claude Code's settings.json shape (`permissions`: `allow`, `ask`, `deny`,
    /// `defaultMode`, `additionalDirectories`; `hooks`; `env`), ranked between the command
    /// line and the project's settings files (docs/permissions.md).
    #[serde(default)]
    #[schemars(with = "Option<std::collections::BTreeMap<String, Value>>")]
    pub settings: Option<Spanned<Value>>,
    /// MCP servers every in-process agent of this preset may use, in `.mcp.json`'s
    /// `mcpServers` shape (`name: {command, args, env}` or `name: {type: http, url, headers}`;
    /// `${VAR}` and `${VAR:-default}` expanded when a run starts), beside the user's and the
    /// project's (docs/mcp.md).
    #[serde(default)]
    #[schemars(with = "Option<std::collections::BTreeMap<String, Value>>")]
    pub mcp_servers: Option<Spanned<Value>>,
    /// The default model of in-process agents.
    #[serde(default)]
    #[schemars(with = "Option<ModelSection>")]
    pub model: Option<Spanned<ModelSection>>,
    /// Model aliases of in-process agents: a name an agent definition or a delegation call
    /// gives (`fast`) → the model id it stands for. They come before Claude Code's `haiku`,
    /// `sonnet` and `opus` (which hold on an Anthropic model only); `inherit` is not an alias.
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub model_aliases: Option<Spanned<std::collections::BTreeMap<String, String>>>,
    /// The models of the built-in agents (`general-purpose`, `explore`, `plan`): name → a model
    /// id or alias (`explore: haiku`), as a definition's `model:` names one; absent, a built-in
    /// runs its parent's model.
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub builtin_models: Option<Spanned<std::collections::BTreeMap<String, String>>>,
    /// Directories of agent definitions (Markdown + YAML frontmatter), relative to the preset's
    /// directory.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub agents: Vec<Spanned<String>>,
    /// Provider rows, in registration order.
    #[serde(default)]
    #[schemars(with = "Vec<ProviderRow>")]
    pub providers: Vec<Spanned<ProviderRow>>,
    /// Delegation-tool rows, in the order the model sees the tools.
    #[serde(default)]
    #[schemars(with = "Vec<ToolRow>")]
    pub tools: Vec<Spanned<ToolRow>>,
}
