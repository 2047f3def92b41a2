//! `subagent-conformance`: the checks every provider passes.
//!
//! A provider crate runs the kit from its own tests in a few lines: it writes an [`Adapter`]
//! (how to build its provider pointed at a fake model server, and the few tool calls its child's
//! model makes; or, for a provider whose children call no model, the [`ModelFree`] inputs that
//! make its child answer, fail, hang and write), then
//!
//! ```text
//! subagent_conformance::suite!(MyAdapter::new());
//! ```
//!
//! expands to one `#[test]` per [`Check`]. Every check starts a fresh
//! [`FakeServer`](subagent_test_support::FakeServer) scripted by the kit's own scenarios, builds
//! the provider with the adapter, registers it in a fresh
//! [`Registry`](subagent_core::registry::Registry) and starts its runs through the registry's
//! gates, as every caller does. What is checked is behaviour, read from the outcome, the events
//! and the model requests the server recorded (for a [`ModelFree`] provider: the outcome, the
//! events and the files, never a model request):
//!
//! - the factory declares the provider's capabilities, the provider's table is stable, every
//!   declared capability passes the registry's gate and every other one is refused, each
//!   declared capability shows its effect in a run, and a run whose sender is dropped ends
//!   `failed` ([`Check::Capabilities`]);
//! - every run reports exactly one `Started` (first) and one `Finished` (last, with the outcome's
//!   status) — checked on every run of every check;
//! - a plain run completes with the model's answer ([`Check::Lifecycle`]); a cancel while the
//!   model is answering ends the run `cancelled` within [`TIMEOUT`] ([`Check::Cancel`]); a model
//!   error ends it `failed` with the server's message ([`Check::ChildFailure`]);
//! - a `plan` permission ceiling keeps a write the same provider performs without it from
//!   happening ([`Check::PermissionCeiling`]);
//! - each declared capability is honoured: structured output that validates (and none that does
//!   not), a depth cap the child cannot nest past, a tool filter the model request obeys, the
//!   persona in the instructions, the model name, the turn limit, a resumed session that sees
//!   the first run's conversation, the reasoning effort asked of the model (a low and a high
//!   one, each in the protocol's own spelling: [`recorded::effort`]), a deny rule on writing that
//!   keeps the child from writing ([`Check::PermissionRules`]); and one request using every declared capability at once runs
//!   to completion and shows each one's effect ([`Check::AllDeclared`]), `isolation` excepted. The kit's registry has an
//!   isolator that runs an isolated child in a fresh empty directory (not a git worktree): for
//!   `isolation` the kit checks the gate; that edits land in a real worktree and not in the
//!   parent's checkout is each provider's own test, with `subagent-worktree` and real git.
//!
//! A check of a capability the provider does not declare passes as [`Verdict::NotDeclared`]; a
//! declared capability is checked, always, and one the kit can see only in a model request
//! (`tool_filter`, `persona`, `model`, `max_turns`, `resume`, `effort`) fails every check of a
//! [`ModelFree`] provider that declares it. A failed check is a [`Failure`]: its verdict in one
//! line. "Promptly" is always a generous bound ([`TIMEOUT`]), never a timed assertion of speed.
//!
//! Deliberately not here: anything a provider's own tests prove better (its argv, its event
//! parsing, processes left behind after a cancel), and any provider: the kit depends on `core`,
//! `model` (scenario types) and `test-support` only.

#![deny(missing_docs)]

mod apart;
mod asks;
mod bench;
mod checks;
mod failure;
mod features;
mod mcp;
mod recorded;
mod rules;
pub mod runtime_tools;
mod scenarios;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use subagent_core::{
    BuildContext, ProviderFactory, StartRequest, StartRequestBuilder, SubagentProvider,
};
use subagent_test_support::FakeServer;

pub use failure::Failure;
pub use recorded::{effort, genuine_prompt, instructions, model_name, offered_tools};
pub use scenarios::SCHEMA;

/// The bound on anything the kit waits for: a run's outcome, a model request. Generous on
/// purpose (real CLIs start slowly on a loaded machine); it is a hang detector, not a speed goal.
pub const TIMEOUT: Duration = Duration::from_secs(180);

/// The provider `factory` builds as the row `name` of `config` (serialized as a preset's row
/// holds it) in the default build context: what an [`Adapter::provider`] of a product provider
/// returns.
///
/// # Panics
/// When `config` does not serialize or the factory refuses it.
pub fn built(
    factory: &dyn ProviderFactory,
    name: &str,
    config: &impl serde::Serialize,
) -> Arc<dyn SubagentProvider> {
    let config = serde_json::to_value(config)
        .unwrap_or_else(|e| panic!("the config of {name} does not serialize: {e}"));
    factory
        .build(name, &config, &BuildContext::default())
        .unwrap_or_else(|e| panic!("{} refuses the config of {name}: {e}", factory.kind()))
}

/// The `write_call` of an adapter whose child runs codex's tools (codex, codex through ACP): a
/// command through `exec_command`.
pub fn codex_write_call(file: &str, text: &str) -> Option<ToolCall> {
    Some(ToolCall::new(
        "exec_command",
        serde_json::json!({"cmd": format!("printf '%s' '{text}' > {file}")}),
    ))
}

/// A tool call the fake model makes, in the shape of a scenario step's `tool_calls` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The tool's name, as the child's model sees it.
    pub name: String,
    /// The arguments.
    pub input: Value,
    /// OpenAI Responses: the tool's namespace (codex's `multi_agent_v1`).
    pub namespace: Option<String>,
}

impl ToolCall {
    /// A call of `name` with `input`.
    pub fn new(name: impl Into<String>, input: Value) -> Self {
        Self {
            name: name.into(),
            input,
            namespace: None,
        }
    }

    /// The same call of a tool in `namespace`.
    #[must_use]
    pub fn in_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }
}

/// How the child's model hands over structured output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StructuredAnswer {
    /// It calls this tool with the value (spawn's `structured_output`, Claude Code's
    /// `StructuredOutput`), then ends with a short text.
    Tool(String),
    /// Its final answer is the value as JSON text (fork, codex).
    FinalText,
}

/// How the kit drives a provider whose children call no model (a shell command, a service of
/// your own): the input, in the provider's own terms, that makes a child do what a check needs.
/// Each method returns the prompt of the request (the rest of it is [`Adapter::request`]'s);
/// the kit then judges the child by its outcome, its events and the files it leaves, never by
/// model requests.
pub trait ModelFree: Send + Sync {
    /// A prompt whose child completes with exactly `text` as the outcome's text (for
    /// `output_schema`, `text` is JSON: a provider declaring it hands the value back as the
    /// structured output when it validates, and does not complete when it does not).
    fn answer(&self, text: &str) -> String;

    /// A prompt whose child fails: the run ends `failed`, its diagnostic containing `message`.
    fn fail(&self, message: &str) -> String;

    /// A prompt whose child runs until it is stopped: it must not end on its own within
    /// [`TIMEOUT`]. The cancel check cancels it once `start` has returned (so the child exists)
    /// and expects `cancelled`.
    fn hang(&self) -> String;

    /// A prompt whose child tries to write `text` into `file` (a bare file name, relative to
    /// [`Adapter::workdir`]), or `None` when the provider's children cannot write at all. The
    /// permission check runs it without a ceiling (the file must appear) and under a `plan`
    /// ceiling (it must not: keep the child from writing, or refuse the request).
    fn write(&self, file: &str, text: &str) -> Option<String>;
}

/// What the kit needs to know about one provider. Keep it small: everything generic (the
/// scenarios, reading recorded requests of the three protocols) is the kit's.
pub trait Adapter: Send + Sync {
    /// The factory the CLI registers for this kind of provider.
    fn factory(&self) -> Arc<dyn ProviderFactory>;

    /// A provider whose children ask the model at `server` (`server.url()`; one fresh server per
    /// check; a [`ModelFree`] provider ignores it). Configure it so that, without a permission
    /// ceiling, a child may write files in [`Adapter::workdir`]: the ceiling check's control run
    /// writes one.
    fn provider(&self, server: &FakeServer) -> Arc<dyn SubagentProvider>;

    /// How to drive the provider when its children call no model; `None` (the default) when
    /// they ask the model at the kit's server, whose scenarios then drive them.
    fn model_free(&self) -> Option<&dyn ModelFree> {
        None
    }

    /// The directory the child works in; the files of [`Adapter::write_call`] land there.
    fn workdir(&self) -> PathBuf;

    /// The request a check starts from: a top-level parent in [`Adapter::workdir`]. A provider
    /// that needs more from its parent (fork: the parent's conversation) adds it here; the kit
    /// then sets the fields it checks.
    fn request(&self, server: &FakeServer, prompt: &str) -> StartRequestBuilder {
        let _ = server;
        StartRequest::builder(prompt).cwd(self.workdir())
    }

    /// The call with which the child's model writes `text` into `file` (a bare file name,
    /// relative to [`Adapter::workdir`]), or `None` (the default) when the provider's children
    /// have no tool that writes (the kit then checks that they are offered none). Not asked of
    /// a [`ModelFree`] provider: [`ModelFree::write`] says how its child writes.
    fn write_call(&self, file: &str, text: &str) -> Option<ToolCall> {
        let _ = (file, text);
        None
    }

    /// How the child's model hands over structured output (asked when `output_schema` is
    /// declared).
    fn structured_answer(&self) -> StructuredAnswer {
        StructuredAnswer::FinalText
    }

    /// The call with which the child's model starts an agent of its own on `prompt`, or `None`
    /// when the provider's children never delegate (then only the registry's depth gate is
    /// checked).
    fn delegate_call(&self, prompt: &str) -> Option<ToolCall> {
        let _ = prompt;
        None
    }
}

/// One check of the kit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    /// Factory and provider declare the same table; declared capabilities pass the gate, the
    /// rest are refused; a dropped sender ends the run `failed`.
    Capabilities,
    /// A plain run completes with the model's answer.
    Lifecycle,
    /// A cancel while the model answers ends the run `cancelled`, within [`TIMEOUT`].
    Cancel,
    /// A model error ends the run `failed`, its diagnostic naming the error.
    ChildFailure,
    /// A `plan` ceiling keeps a write from happening that happens without it.
    PermissionCeiling,
    /// `output_schema`: valid structured output, and none that does not validate.
    OutputSchema,
    /// `max_depth`: the child nests without a cap and cannot with one.
    DepthLimit,
    /// `tool_filter`: the model is offered exactly the filtered tools.
    ToolFilter,
    /// `persona`: the persona is in the model request's instructions.
    Persona,
    /// `model`: the model request names the requested model.
    ModelOverride,
    /// `max_turns`: a run that would go on stops at the limit.
    MaxTurns,
    /// `resume`: a resumed run's model request carries the first run's conversation.
    Resume,
    /// `effort`: each model request of a run carries the requested reasoning effort.
    Effort,
    /// `permission_rules`: a deny rule keeps a write from happening.
    PermissionRules,
    /// `mcp_servers`: the request's own MCP server starts for the child, is asked for its
    /// tools, and stops when the child ends.
    McpServers,
    /// One request with every declared capability runs to completion.
    AllDeclared,
}

impl Check {
    /// Every check, in the order [`check_all`] runs them.
    pub const ALL: [Check; 16] = [
        Self::Capabilities,
        Self::Lifecycle,
        Self::Cancel,
        Self::ChildFailure,
        Self::PermissionCeiling,
        Self::OutputSchema,
        Self::DepthLimit,
        Self::ToolFilter,
        Self::Persona,
        Self::ModelOverride,
        Self::MaxTurns,
        Self::Resume,
        Self::Effort,
        Self::PermissionRules,
        Self::McpServers,
        Self::AllDeclared,
    ];
}

/// How a check that did not fail ended (a failed one is a [`Failure`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The provider did what the check asks.
    Passed,
    /// The check is about a capability the provider does not declare (its refusal by the
    /// registry is part of [`Check::Capabilities`]).
    NotDeclared,
}

/// Runs one check against the adapter's provider: its verdict, or the [`Failure`] saying what
/// was expected and what happened.
pub async fn check(adapter: &dyn Adapter, check: Check) -> Result<Verdict, Failure> {
    checks::run(adapter, check).await
}

/// Runs every check, one after the other; returns each one's verdict.
pub async fn check_all(adapter: &dyn Adapter) -> Vec<(Check, Result<Verdict, Failure>)> {
    let mut verdicts = Vec::with_capacity(Check::ALL.len());
    for one in Check::ALL {
        verdicts.push((one, check(adapter, one).await));
    }
    verdicts
}

/// Runs one check on a fresh multi-threaded runtime (what a `#[test]` of [`suite!`] does); the
/// adapter is made inside the runtime.
pub fn check_blocking<A: Adapter>(
    one: Check,
    make: impl FnOnce() -> A,
) -> Result<Verdict, Failure> {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("conformance: cannot start a tokio runtime: {error}"),
    };
    runtime.block_on(async move {
        let adapter = make();
        check(&adapter, one).await
    })
}

/// One `#[test]` per [`Check`], each on its own runtime with its own adapter:
/// `subagent_conformance::suite!(MyAdapter::new());` in a module of the provider's test crate.
/// A test returns the check's [`Failure`], so a failing one prints its verdict in one line.
#[macro_export]
macro_rules! suite {
    ($adapter:expr) => {
        $crate::suite!(@tests $adapter;
            capabilities => Capabilities,
            lifecycle => Lifecycle,
            cancel => Cancel,
            child_failure => ChildFailure,
            permission_ceiling => PermissionCeiling,
            output_schema => OutputSchema,
            depth_limit => DepthLimit,
            tool_filter => ToolFilter,
            persona => Persona,
            model_override => ModelOverride,
            max_turns => MaxTurns,
            resume => Resume,
            effort => Effort,
            permission_rules => PermissionRules,
            mcp_servers => McpServers,
            all_declared => AllDeclared,
        );
    };
    (@tests $adapter:expr; $($test:ident => $check:ident,)*) => {
        $(
            #[test]
            fn $test() -> ::std::result::Result<(), $crate::Failure> {
                $crate::check_blocking($crate::Check::$check, || $adapter).map(|_| ())
            }
        )*
    };
}
