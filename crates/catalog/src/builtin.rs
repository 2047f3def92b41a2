//! The built-in agents: `general-purpose`, `explore`, `plan`.
//!
//! `explore` and `plan` are read-only by an *allow* list (`ls`, `read_file`, `glob`, `grep`, plus
//! Claude Code's names for them), not by a deny list of the writing tools: a tool added later
//! (an MCP tool, a web fetch, the delegation tool itself) is then excluded until someone decides
//! it is read-only, instead of silently included. `plan` also runs in the `plan` permission
//! mode, which the resolution keeps (read-only ∩ anything = read-only).
//!
//! `explore` asks for a small model only when the caller names one
//! ([`BuiltinOptions::small_model`]): a model alias means something to one provider only (`haiku`
//! to Anthropic, nothing to a local server), so without it `explore` inherits the parent's model.

use subagent_core::PermissionMode;

use crate::definition::Definition;
use crate::source::{Origin, Source};

/// The names of the built-ins, in listing order.
pub const BUILTIN_NAMES: [&str; 3] = ["general-purpose", "explore", "plan"];

/// The tools the read-only built-ins may use (our runtime's names; Claude Code's are added when
/// the filter is built).
pub const READ_ONLY_TOOLS: [&str; 4] = ["ls", "read_file", "glob", "grep"];

/// The turn limit of `explore`.
pub const EXPLORE_MAX_TURNS: u32 = 8;

/// Deployment choices for the built-ins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BuiltinOptions {
    /// The model `explore` runs (an alias or id its provider resolves, e.g. `haiku` for Anthropic
    /// or a small local model); `None` = inherit the parent's.
    pub small_model: Option<String>,
    /// The model of each built-in by name (a preset's `builtin_models:`), before `small_model`;
    /// a built-in not named inherits the parent's.
    pub models: std::collections::BTreeMap<String, String>,
}

impl BuiltinOptions {
    /// Options with `explore` on that model.
    pub fn with_small_model(model: impl Into<String>) -> Self {
        Self {
            small_model: Some(model.into()),
            models: std::collections::BTreeMap::new(),
        }
    }

    /// Options with these built-ins on these models (name → model).
    pub fn with_models(models: std::collections::BTreeMap<String, String>) -> Self {
        Self {
            small_model: None,
            models,
        }
    }
}

const GENERAL_PURPOSE_PROMPT: &str = "You are an agent that completes the task you are given \
on behalf of another agent. Use the tools you have to research, read and change what the task \
needs; do what was asked, nothing more. When you are done, answer with a concise report: what \
you did, what you found, and anything the caller must know (file paths, open questions). The \
caller sees only your final message.";

const EXPLORE_PROMPT: &str = "You are a read-only exploration agent. Find and read what the \
task asks about: search with glob and grep, read the relevant files, and follow references \
until you can answer. You cannot change files or run commands. Be quick: prefer a few targeted \
searches over reading everything. Answer with the facts found, citing file paths and line \
numbers, and say plainly what you could not find.";

const PLAN_PROMPT: &str = "You are a read-only planning agent. Study the code the task is \
about (you can list, read, glob and grep, but not change anything or run commands) and produce \
an implementation plan: the files to change and how, the order of the steps, the risks, and how \
to test the result. Cite file paths. Do not write code beyond short illustrative snippets.";

/// The built-in definitions, in [`BUILTIN_NAMES`] order.
pub fn builtins(options: &BuiltinOptions) -> Vec<Definition> {
    let read_only = || Some(READ_ONLY_TOOLS.iter().map(|t| (*t).to_owned()).collect());
    let builtin = |name: &str, description: &str, prompt: &str| Definition {
        source: Source::Builtin,
        origin: Origin::Builtin,
        model: options.models.get(name).cloned(),
        ..Definition::new(name, description, prompt)
    };
    let mut builtins = vec![
        builtin(
            "general-purpose",
            "General-purpose agent for multi-step tasks: researching questions, searching code \
             and making changes. Has the same tools and model as you.",
            GENERAL_PURPOSE_PROMPT,
        ),
        Definition {
            tools: read_only(),
            max_turns: Some(EXPLORE_MAX_TURNS),
            ..builtin(
                "explore",
                "Fast read-only agent for exploring a codebase: finding files, searching code, \
                 answering questions about how something works. Cannot change files or run \
                 commands.",
                EXPLORE_PROMPT,
            )
        },
        Definition {
            tools: read_only(),
            permission_mode: Some(PermissionMode::Plan),
            ..builtin(
                "plan",
                "Read-only planning agent: studies the code and returns a step-by-step \
                 implementation plan (files, steps, risks, tests). Cannot change files or run \
                 commands.",
                PLAN_PROMPT,
            )
        },
    ];
    if let Some(explore) = builtins.get_mut(1)
        && explore.model.is_none()
    {
        explore.model.clone_from(&options.small_model);
    }
    builtins
}
