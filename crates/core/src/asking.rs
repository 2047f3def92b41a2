//! A product child's permission questions, answered by its parent's decision chain.
//!
//! A product CLI that can ask before a tool call (claude's `--permission-prompt-tool`, an ACP
//! agent's `session/request_permission`, codex app-server's approval requests) hands each
//! question to the [`ParentAsker`] of its request's [`ParentContext`](crate::ParentContext): the
//! parent answers as it would for its own call (its rules, its `PermissionRequest` hooks, then
//! the user where the parent can ask; a background child's question that nothing decides is
//! denied). A request without an asker runs its child as the row's permission mode says, never
//! asking anyone.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

/// One question: may the child make this tool call?
#[derive(Clone, Debug, PartialEq)]
pub struct ToolQuestion {
    /// The tool, in Claude Code's vocabulary where the product has it (`Bash`, `Write`,
    /// `Edit`, `Read`, `WebFetch`, `mcp__server__tool`), otherwise the product's own name.
    pub tool: String,
    /// The call's arguments, as the product gives them (`{"command": …}` for `Bash`,
    /// `{"file_path": …}` for the file tools).
    pub input: Value,
    /// The product's id of the call, when it gives one.
    pub tool_use_id: Option<String>,
    /// The child's working directory: relative paths in `input` resolve against it.
    pub cwd: PathBuf,
}

/// The parent's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolAnswer {
    /// Make the call, with `updated_input` instead of the asked input when a hook rewrote it.
    Allow {
        /// The arguments to use instead, if any.
        updated_input: Option<Value>,
    },
    /// Do not make it; `message` says why (the child's model reads it).
    Deny {
        /// Why.
        message: String,
    },
}

impl ToolAnswer {
    /// Whether the call may go ahead.
    pub fn is_allow(&self) -> bool {
        matches!(self, Self::Allow { .. })
    }
}

/// Who answers a product child's questions: its parent.
#[async_trait]
pub trait ParentAsker: Send + Sync {
    /// Decides one question. Never fails: whatever cannot be decided is a
    /// [`ToolAnswer::Deny`] that says so.
    async fn ask(&self, question: ToolQuestion) -> ToolAnswer;
}

/// A shared [`ParentAsker`], as a request carries it.
#[derive(Clone)]
pub struct Asker(pub Arc<dyn ParentAsker>);

impl Asker {
    /// Asks the parent.
    pub async fn ask(&self, question: ToolQuestion) -> ToolAnswer {
        self.0.ask(question).await
    }
}

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Asker")
    }
}

/// The permission rules a child must hold to: its parent's, from Claude Code's settings files
/// and the command line (`--allowedTools`, `--disallowedTools`), in Claude Code's spelling
/// (`Bash(npm run test:*)`, `Read(./.env)`, `Edit(src/**)`, `WebFetch(domain:example.com)`,
/// `mcp__github`, a bare tool name). A request that carries `deny` or `ask` rules needs
/// [`Capability::PermissionRules`](crate::Capability::PermissionRules): a provider that cannot
/// hold its child to them refuses before start, never drops them. `allow` rules only widen, so
/// a provider that cannot express them runs its child stricter, which needs no capability.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PermissionRules {
    /// Calls the child must never make.
    pub deny: Vec<String>,
    /// Calls someone must approve first (a background child's are denied unless a hook allows).
    pub ask: Vec<String>,
    /// Calls the child may make without asking.
    pub allow: Vec<String>,
}

impl PermissionRules {
    /// Whether any rule narrows what the child may do (`deny` or `ask`).
    pub fn restricts(&self) -> bool {
        !self.deny.is_empty() || !self.ask.is_empty()
    }

    /// Whether there is no rule at all.
    pub fn is_empty(&self) -> bool {
        !self.restricts() && self.allow.is_empty()
    }
}
