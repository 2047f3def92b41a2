//! Permissions: rules, modes, and the broker that answers `ask`.
//!
//! Order of evaluation for one call: `plan` mode refuses every tool that is not read-only →
//! deny rules → ask rules → allow rules → the mode's default (read-only and harness tools are
//! allowed in every mode; `accept-edits` allows edits; `bypass` allows everything; `default`
//! asks; `dont-ask` denies) → an `ask` goes to the [`PermissionBroker`], except in a background
//! run, which never asks: it is denied.
//!
//! An allow rule with a subject pattern allows one command of an `Execute` tool, never a command
//! line that chains, substitutes or redirects beyond it (`;`, `&`, `|`, `` ` ``, `$(`, `>`, `<`,
//! a newline), unless its pattern spells that operator itself.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use subagent_core::PermissionMode;
use subagent_core::agents::wildcard_match;

use crate::{Error, Result};

/// What a tool does, for permissions and read-only modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolKind {
    /// Reads only (ls, read_file, glob, grep).
    ReadOnly,
    /// Changes files (write_file, edit_file, delete).
    Edit,
    /// Runs commands (bash).
    Execute,
    /// Starts another agent (the delegation tool). Its child has its own permissions.
    Delegate,
    /// Part of the harness (structured output capture): always allowed.
    Internal,
}

impl ToolKind {
    /// Whether `plan` mode (read-only) keeps the tool.
    pub fn is_read_only(self) -> bool {
        matches!(self, Self::ReadOnly | Self::Delegate | Self::Internal)
    }
}

/// What a rule (or the broker) decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The call runs.
    Allow,
    /// The call is refused with an error result.
    Deny,
    /// Someone is asked.
    Ask,
}

/// One rule: a tool name pattern, optionally a pattern on the call's subject (a path, a
/// command), both with `*` wildcards. Written `tool` or `tool(subject)`, e.g. `bash(git *)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PermissionRule {
    /// Tool name pattern.
    pub tool: String,
    /// Subject pattern; `None` matches every call of the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What the rule decides.
    pub decision: Decision,
}

impl PermissionRule {
    /// Parses `tool` or `tool(subject)`.
    pub fn parse(text: &str, decision: Decision) -> Result<Self> {
        let text = text.trim();
        let (tool, subject) = match text.split_once('(') {
            Some((tool, rest)) => {
                let Some(subject) = rest.strip_suffix(')') else {
                    return Err(Error::Config(format!(
                        "permission rule {text:?}: missing closing parenthesis"
                    )));
                };
                (tool.trim(), Some(subject.to_owned()))
            }
            None => (text, None),
        };
        if tool.is_empty() {
            return Err(Error::Config(format!(
                "permission rule {text:?}: no tool name"
            )));
        }
        Ok(Self {
            tool: tool.to_owned(),
            subject,
            decision,
        })
    }

    /// Whether an allow rule may allow this command: a pattern like `git *` stands for one
    /// command, so a command line that chains, substitutes or redirects (`git status; rm -rf
    /// ~`, `git $(…)`, `git log > f`) is not covered unless the pattern itself spells that
    /// operator. Such a call falls through to the mode's default (ask or deny).
    fn allows_command(&self, command: &str) -> bool {
        let Some(pattern) = &self.subject else {
            return true;
        };
        SHELL_OPERATORS
            .iter()
            .all(|op| !command.contains(op) || pattern.contains(op))
    }

    /// Whether the rule covers a call of `tool` whose subject is spelled any of `subjects`
    /// (one call can have several spellings of one subject: a path as given, relative to the
    /// working directory, absolute).
    fn matches(&self, tool: &str, subjects: &[&str]) -> bool {
        wildcard_match(&self.tool, tool)
            && match &self.subject {
                None => true,
                Some(pattern) => subjects.iter().any(|s| wildcard_match(pattern, s)),
            }
    }
}

/// What makes one command line run more than the command an allow rule names.
const SHELL_OPERATORS: &[&str] = &[";", "&", "|", "`", "$(", ">", "<", "\n", "\r"];

/// A call waiting for a decision.
#[derive(Clone, Debug, PartialEq)]
pub struct PermissionRequest {
    /// The tool.
    pub tool: String,
    /// The call's arguments.
    pub input: Value,
    /// The subject rules match (a path, a command). For a file tool: the path as the roots
    /// resolve it (relative to the working directory when inside it).
    pub subject: Option<String>,
    /// Other spellings of the same subject rules are matched against as well (a path as the
    /// model gave it, its absolute form), so a rule holds whichever spelling the model uses.
    pub aliases: Vec<String>,
    /// The asking run's depth (0 = the top-level agent).
    pub depth: u32,
}

/// Answers `ask` decisions (the CLI prompts the user). Must answer `Allow` or `Deny`; anything
/// else is taken as `Deny`.
#[async_trait]
pub trait PermissionBroker: Send + Sync {
    /// Decides one call.
    async fn ask(&self, request: PermissionRequest) -> Decision;
}

/// How a run's tool calls are permitted.
#[derive(Clone, Default)]
pub struct PermissionPolicy {
    /// The mode.
    pub mode: PermissionMode,
    /// Rules, in any order (deny beats ask beats allow).
    pub rules: Vec<PermissionRule>,
    /// Who answers `ask`; without one, `ask` is denied.
    pub broker: Option<Arc<dyn PermissionBroker>>,
    /// The agent types the run's delegation tools may start (`Agent(explore, plan)` in its
    /// definition's tools, [`StartRequest::agent_types`](subagent_core::StartRequest)); `None`:
    /// any. Others are refused with `AGENT_TYPE_NOT_ALLOWED`. A run's own: a child does not
    /// inherit it.
    pub agent_types: Option<Vec<String>>,
}

impl std::fmt::Debug for PermissionPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionPolicy")
            .field("mode", &self.mode)
            .field("rules", &self.rules)
            .field("broker", &self.broker.is_some())
            .field("agent_types", &self.agent_types)
            .finish()
    }
}

impl PermissionPolicy {
    /// A policy with this mode, no rules and no broker.
    pub fn new(mode: PermissionMode) -> Self {
        Self {
            mode,
            rules: Vec::new(),
            broker: None,
            agent_types: None,
        }
    }

    /// Everything allowed.
    pub fn bypass() -> Self {
        Self::new(PermissionMode::Bypass)
    }

    /// Adds a rule.
    #[must_use]
    pub fn rule(mut self, rule: PermissionRule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Sets the broker.
    #[must_use]
    pub fn with_broker(mut self, broker: Arc<dyn PermissionBroker>) -> Self {
        self.broker = Some(broker);
        self
    }

    /// The same policy with the stricter of the two modes.
    #[must_use]
    pub fn restricted_to(&self, mode: PermissionMode) -> Self {
        let mut policy = self.clone();
        policy.mode = policy.mode.intersect(mode);
        policy
    }

    /// What rules and mode say, before anyone is asked.
    pub fn evaluate(&self, tool: &str, kind: ToolKind, subject: Option<&str>) -> Decision {
        let subjects: Vec<&str> = subject.into_iter().collect();
        self.evaluate_subjects(tool, kind, &subjects)
    }

    /// What rules and mode say about a call whose subject has several spellings: a rule
    /// matching any of them applies (deny beats ask beats allow, over all spellings).
    pub fn evaluate_subjects(&self, tool: &str, kind: ToolKind, subjects: &[&str]) -> Decision {
        if self.mode == PermissionMode::Plan && !kind.is_read_only() {
            return Decision::Deny;
        }
        if kind == ToolKind::Internal {
            return Decision::Allow;
        }
        for wanted in [Decision::Deny, Decision::Ask, Decision::Allow] {
            if self.rules.iter().any(|r| {
                r.decision == wanted
                    && r.matches(tool, subjects)
                    && (wanted != Decision::Allow
                        || kind != ToolKind::Execute
                        || subjects.iter().all(|s| r.allows_command(s)))
            }) {
                return wanted;
            }
        }
        if kind.is_read_only() {
            return Decision::Allow;
        }
        match self.mode {
            PermissionMode::Bypass => Decision::Allow,
            PermissionMode::AcceptEdits if kind == ToolKind::Edit => Decision::Allow,
            PermissionMode::DontAsk | PermissionMode::Plan => Decision::Deny,
            _ => Decision::Ask,
        }
    }

    /// Decides one call: `Ok(())` to run it, `Err(reason)` to refuse it.
    pub async fn check(
        &self,
        request: PermissionRequest,
        kind: ToolKind,
        background: bool,
    ) -> std::result::Result<(), String> {
        let subjects: Vec<&str> = request
            .subject
            .iter()
            .chain(&request.aliases)
            .map(String::as_str)
            .collect();
        let decision = self.evaluate_subjects(&request.tool, kind, &subjects);
        let tool = request.tool.clone();
        match decision {
            Decision::Allow => Ok(()),
            Decision::Deny if self.mode == PermissionMode::Plan && !kind.is_read_only() => Err(
                format!("permission denied: {tool} is not read-only and this run is in plan mode"),
            ),
            Decision::Deny => Err(format!(
                "permission denied: a rule or the {} permission mode refuses {tool}",
                self.mode
            )),
            Decision::Ask if background => Err(format!(
                "permission denied: {tool} needs approval, and a background run never asks (auto-denied)"
            )),
            Decision::Ask => match &self.broker {
                None => Err(format!(
                    "permission denied: {tool} needs approval and no one can be asked"
                )),
                Some(broker) => match broker.ask(request).await {
                    Decision::Allow => Ok(()),
                    _ => Err(format!(
                        "permission denied: approval for {tool} was refused"
                    )),
                },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_and_modes() {
        let policy = PermissionPolicy::new(PermissionMode::Default)
            .rule(PermissionRule::parse("bash(git *)", Decision::Allow).unwrap())
            .rule(PermissionRule::parse("bash(git push*)", Decision::Deny).unwrap());
        let bash = ToolKind::Execute;
        assert_eq!(
            policy.evaluate("bash", bash, Some("git status")),
            Decision::Allow
        );
        assert_eq!(
            policy.evaluate("bash", bash, Some("git push -f")),
            Decision::Deny
        );
        assert_eq!(
            policy.evaluate("bash", bash, Some("rm -rf /")),
            Decision::Ask
        );
        assert_eq!(
            policy.evaluate("read_file", ToolKind::ReadOnly, None),
            Decision::Allow
        );
        let plan = policy.restricted_to(PermissionMode::Plan);
        assert_eq!(
            plan.evaluate("bash", bash, Some("git status")),
            Decision::Deny
        );
        assert_eq!(
            plan.evaluate("write_file", ToolKind::Edit, None),
            Decision::Deny
        );
        let edits = PermissionPolicy::new(PermissionMode::AcceptEdits);
        assert_eq!(
            edits.evaluate("write_file", ToolKind::Edit, None),
            Decision::Allow
        );
        assert_eq!(edits.evaluate("bash", bash, None), Decision::Ask);
        let dont = PermissionPolicy::new(PermissionMode::DontAsk);
        assert_eq!(dont.evaluate("bash", bash, None), Decision::Deny);
        assert!(PermissionRule::parse("bash(x", Decision::Allow).is_err());
    }

    #[tokio::test]
    async fn background_never_asks() {
        struct Yes;
        #[async_trait]
        impl PermissionBroker for Yes {
            async fn ask(&self, _: PermissionRequest) -> Decision {
                Decision::Allow
            }
        }
        let policy = PermissionPolicy::new(PermissionMode::Default).with_broker(Arc::new(Yes));
        let request = PermissionRequest {
            tool: "bash".into(),
            input: Value::Null,
            subject: Some("ls".into()),
            aliases: Vec::new(),
            depth: 1,
        };
        assert!(
            policy
                .check(request.clone(), ToolKind::Execute, false)
                .await
                .is_ok()
        );
        let denied = policy
            .check(request, ToolKind::Execute, true)
            .await
            .unwrap_err();
        assert!(denied.contains("background run never asks"), "{denied}");
    }
}
