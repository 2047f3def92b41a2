//! Tools: the trait, the ordered tool set the model sees, and the built-in tools.

mod bash;
mod fs;
mod replace;
mod search;
mod skill;
pub(crate) mod snapshot;
mod tasks;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use subagent_core::{CancellationToken, RunEvent, ToolFilter};
use subagent_model::ToolSpec;

pub use crate::paths::Roots;
pub use crate::permissions::ToolKind;
pub use bash::{BashConfig, BashTool};
pub use fs::{DeleteTool, EditFileTool, LsTool, MAX_READ_BYTES, ReadFileTool, WriteFileTool};
pub use search::{GlobTool, GrepTool};
pub use skill::SkillTool;
pub use tasks::{DEFAULT_WAIT_MS, MAX_WAIT_MS, TaskOutputTool, TaskStopTool, describe, task_tools};

use crate::env::RunEnv;
use crate::{Error, Result};
use snapshot::ParentSnapshot;

/// What a tool returns to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    /// The result text.
    pub content: String,
    /// Whether it is an error result.
    pub is_error: bool,
    /// Texts that follow the call's results in the same message, each a text block of its own
    /// (a loaded skill's body, where Claude Code puts it). Usually none.
    pub attached: Vec<String>,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: false,
            attached: Vec::new(),
        }
    }

    /// An error result.
    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: true,
            attached: Vec::new(),
        }
    }
}

/// Where a tool reports events into its run's stream (the delegation tool forwards its
/// foreground child's text, tool calls and results). Cloning shares the sink. Events sent after
/// the run's tool calls ended are dropped.
#[derive(Clone, Debug, Default)]
pub struct EventSink(Option<futures::channel::mpsc::UnboundedSender<RunEvent>>);

impl EventSink {
    /// A sink and the receiver its events arrive at.
    pub fn channel() -> (Self, futures::channel::mpsc::UnboundedReceiver<RunEvent>) {
        let (sender, receiver) = futures::channel::mpsc::unbounded();
        (Self(Some(sender)), receiver)
    }

    /// A sink that drops everything.
    pub fn none() -> Self {
        Self(None)
    }

    /// Reports `event` into the run's stream. Never blocks.
    pub fn emit(&self, event: RunEvent) {
        if let Some(sender) = &self.0 {
            let _ = sender.unbounded_send(event);
        }
    }
}

/// The tools a background run may use, by name (Claude Code's async agents have such a fixed
/// list): reading, searching, editing, writing, running commands, and reading and stopping its
/// own background tasks, and loading a skill (`Skill`: a skill that needs permission is
/// denied, as every question of a background run is). Besides these, a background run keeps its delegation tools (its depth
/// cap decides whether it may delegate: nesting is opt-in), the harness's own tools
/// ([`ToolKind::Internal`]: structured output) and the MCP servers' tools (`mcp__…`: a server's
/// tool answers without a person; one that is not read-only is denied unless a rule allows it,
/// since nobody can be asked). Nothing else: an embedder's tool may wait on a
/// person, and nobody waits on a background run. A background run is not offered the others
/// ([`ToolSet::for_background`]) and a call to one anyway (a fork keeps its parent's list for
/// the prompt cache) is refused with an error result the model can read.
pub const BACKGROUND_TOOLS: [&str; 11] = [
    "ls",
    "read_file",
    "glob",
    "grep",
    "write_file",
    "edit_file",
    "delete",
    "bash",
    "task_output",
    "task_stop",
    "Skill",
];

/// Whether a background run may use the tool `name` of `kind` (see [`BACKGROUND_TOOLS`]).
pub fn background_allows(name: &str, kind: ToolKind) -> bool {
    matches!(kind, ToolKind::Delegate | ToolKind::Internal)
        || BACKGROUND_TOOLS.contains(&name)
        || name.starts_with("mcp__")
}

/// The answer to a background run's call of a tool it may not use.
pub(crate) fn background_refusal(name: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "{name} is not available to a background agent (it runs with {} and delegation when allowed to nest); do without it",
        BACKGROUND_TOOLS.join(", ")
    ))
}

/// What a tool call knows about its run.
#[derive(Clone)]
pub struct ToolContext {
    /// The call's id.
    pub call_id: String,
    /// Cancelled when the run is cancelled: long tools must watch it.
    pub cancel: CancellationToken,
    /// The run's environment (roots, depth, permissions, background tasks).
    pub env: Arc<RunEnv>,
    /// The run's state at this call (system prompt, tools, log up to the calling assistant
    /// message): what the delegation tool hands to a fork.
    pub snapshot: Arc<ParentSnapshot>,
    /// The run's event stream, for tools with progress of their own to report.
    pub events: EventSink,
    /// The run's cap on a tool result, in bytes: a longer result reaches the model cut (see
    /// [`crate::cut_result`]). The delegation tool hands it on to the child.
    pub max_result_bytes: usize,
}

/// A tool the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name, description and input schema the model sees. Must be the same on every call
    /// for a given tool value: [`ToolSet`] computes it once.
    fn spec(&self) -> ToolSpec;

    /// What the tool does.
    fn kind(&self) -> ToolKind;

    /// What this call of the tool does, for its permission: [`Tool::kind`] unless a tool's
    /// calls differ (the `Skill` tool's call of a skill that names `allowed-tools` needs
    /// permission; others do not).
    fn call_kind(&self, input: &Value) -> ToolKind {
        let _ = input;
        self.kind()
    }

    /// The argument holding the path the call works on, for tools whose permission subject is a
    /// path (file and search tools say `Some("path")`). Rules then see every spelling of it.
    fn path_argument(&self) -> Option<&'static str> {
        None
    }

    /// The text permission rule patterns are matched against (a path, a command), if any. By
    /// default the [`Tool::path_argument`] as given.
    fn permission_subject(&self, input: &Value) -> Option<String> {
        let name = self.path_argument()?;
        input.get(name).and_then(Value::as_str).map(str::to_owned)
    }

    /// Every spelling of the call's subject rules are matched against, the main one first (what
    /// a broker is shown). For a path argument, the path as `roots` resolve it as well, so
    /// `./x`, `/abs/x` and a symlink to `x` all meet a rule written for `x`; otherwise
    /// [`Tool::permission_subject`] alone.
    fn permission_subjects(&self, input: &Value, roots: &Roots) -> Vec<String> {
        match (self.path_argument(), self.permission_subject(input)) {
            (Some(_), Some(given)) => roots.permission_subjects(&given),
            (_, subject) => subject.into_iter().collect(),
        }
    }

    /// What the model is told to do to see the rest of a result cut at the run's cap
    /// ([`AgentConfig::max_tool_result_bytes`](crate::AgentConfig::max_tool_result_bytes)): the
    /// words after "To see the rest, ". By default: ask for less at a time.
    fn cut_hint(&self) -> &str {
        crate::result_cap::DEFAULT_CUT_HINT
    }

    /// Runs the call. `Err` becomes an error result with the error's text.
    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput>;
}

/// Tools a host adds to every in-process agent it builds, known only once the host has
/// started what offers them (an MCP server's tools are listed when a run starts, after the
/// providers were built): the host puts one handle in the build context's extensions, the
/// providers keep it, and the host fills it once ([`HostTools::set`]) before its first run.
/// Cloning shares the handle.
#[derive(Clone, Default)]
pub struct HostTools(Arc<std::sync::OnceLock<ToolSet>>);

impl std::fmt::Debug for HostTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("HostTools").field(&self.0.get()).finish()
    }
}

impl HostTools {
    /// An empty handle.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fills the handle with `tools`, once: a second call changes nothing and returns `false`.
    pub fn set(&self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> bool {
        self.0.set(ToolSet::new(tools)).is_ok()
    }

    /// The tools, empty until [`HostTools::set`].
    pub fn tools(&self) -> ToolSet {
        self.0.get().cloned().unwrap_or_default()
    }
}

/// The tools of a run, in the order the model sees them. Specs are computed once, so cloning a
/// set (as a fork does) keeps descriptions byte-identical. Cloning is O(1).
#[derive(Clone, Default)]
pub struct ToolSet {
    tools: Arc<[Arc<dyn Tool>]>,
    specs: Arc<[ToolSpec]>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.specs.iter().map(|s| &s.name))
            .finish()
    }
}

impl ToolSet {
    /// A set of these tools, in this order. A later tool with the name of an earlier one is
    /// dropped (names are unique in what the model sees).
    pub fn new(tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        let mut kept: Vec<Arc<dyn Tool>> = Vec::new();
        let mut specs: Vec<ToolSpec> = Vec::new();
        for tool in tools {
            let spec = tool.spec();
            if specs.iter().any(|s| s.name == spec.name) {
                continue;
            }
            kept.push(tool);
            specs.push(spec);
        }
        Self {
            tools: kept.into(),
            specs: specs.into(),
        }
    }

    /// The built-in tools in their fixed order: ls, read_file, write_file, edit_file, delete,
    /// glob, grep, bash.
    pub fn builtin(bash: BashConfig) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(LsTool),
            Arc::new(ReadFileTool),
            Arc::new(WriteFileTool),
            Arc::new(EditFileTool),
            Arc::new(DeleteTool),
            Arc::new(GlobTool),
            Arc::new(GrepTool),
            Arc::new(BashTool::new(bash)),
        ]
    }

    /// The tools passing `filter`, order kept: a filtered tool is absent from what the model
    /// sees (and so cannot be called).
    #[must_use]
    pub fn filtered(&self, filter: &ToolFilter) -> Self {
        self.retain(|_, spec| filter.permits(&spec.name))
    }

    /// The tools a background run is offered: those [`background_allows`], order kept; the
    /// very same set (nothing copied) when every tool is.
    #[must_use]
    pub fn for_background(&self) -> Self {
        let allowed = |tool: &dyn Tool, spec: &ToolSpec| background_allows(&spec.name, tool.kind());
        if self
            .tools
            .iter()
            .zip(self.specs.iter())
            .all(|(tool, spec)| allowed(tool.as_ref(), spec))
        {
            return self.clone();
        }
        self.retain(allowed)
    }

    /// The tools for which `keep` is true, order kept.
    #[must_use]
    pub fn retain(&self, mut keep: impl FnMut(&dyn Tool, &ToolSpec) -> bool) -> Self {
        let mut tools = Vec::new();
        let mut specs = Vec::new();
        for (tool, spec) in self.tools.iter().zip(self.specs.iter()) {
            if keep(tool.as_ref(), spec) {
                tools.push(Arc::clone(tool));
                specs.push(spec.clone());
            }
        }
        Self {
            tools: tools.into(),
            specs: specs.into(),
        }
    }

    /// This set followed by `more` (tools whose name is taken are dropped). Specs already
    /// computed are reused; only the new tools' specs are computed.
    #[must_use]
    pub fn with(&self, more: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.concat(&Self::new(more))
    }

    /// This set followed by the tools of `other` whose names are not taken, reusing both sets'
    /// specs (no spec is recomputed).
    #[must_use]
    pub fn concat(&self, other: &Self) -> Self {
        if other.is_empty() {
            return self.clone();
        }
        let mut tools: Vec<Arc<dyn Tool>> = self.tools.to_vec();
        let mut specs: Vec<ToolSpec> = self.specs.to_vec();
        for (tool, spec) in other.tools.iter().zip(other.specs.iter()) {
            if specs.iter().any(|s| s.name == spec.name) {
                continue;
            }
            tools.push(Arc::clone(tool));
            specs.push(spec.clone());
        }
        Self {
            tools: tools.into(),
            specs: specs.into(),
        }
    }

    /// The tools, in order.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// The specs the model sees, in order.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// Whether both are the very same set (one allocation, not equal copies).
    pub fn same(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.tools, &other.tools) && Arc::ptr_eq(&self.specs, &other.specs)
    }

    /// The specs, shared (what a model request carries: no copy).
    pub fn shared_specs(&self) -> Arc<[ToolSpec]> {
        Arc::clone(&self.specs)
    }

    /// The names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.specs.iter().map(|s| s.name.as_str()).collect()
    }

    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.specs
            .iter()
            .position(|s| s.name == name)
            .and_then(|i| self.tools.get(i))
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// A required string argument.
pub(crate) fn str_arg<'a>(input: &'a Value, key: &str) -> Result<&'a str> {
    match input.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(Error::Arguments(format!(
            "\"{key}\" must be a string, got {other}"
        ))),
        None => Err(Error::Arguments(format!("\"{key}\" is required"))),
    }
}

/// An optional string argument.
pub(crate) fn opt_str<'a>(input: &'a Value, key: &str) -> Result<Option<&'a str>> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(Error::Arguments(format!(
            "\"{key}\" must be a string, got {other}"
        ))),
    }
}

/// An optional non-negative integer argument.
pub(crate) fn opt_u64(input: &Value, key: &str) -> Result<Option<u64>> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value.as_u64().map(Some).ok_or_else(|| {
            Error::Arguments(format!(
                "\"{key}\" must be a non-negative integer, got {value}"
            ))
        }),
    }
}

/// An optional boolean argument.
pub(crate) fn opt_bool(input: &Value, key: &str) -> Result<Option<bool>> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(Error::Arguments(format!(
            "\"{key}\" must be a boolean, got {other}"
        ))),
    }
}

/// Runs blocking file work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::Tool(format!("the tool's worker failed: {e}")))?
}
