//! The merged permission rules of every source and the decision they give one call.

use serde::Serialize;

use crate::mode::PermissionMode;
use crate::rule::{MatchContext, Rule, ToolCall};
use crate::scope::Sourced;

/// What the rules decide for a call. The runtime has its own enum and maps this one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The call runs without asking.
    Allow,
    /// The call is refused.
    Deny,
    /// Someone is asked (or, where nobody can be, `PermissionRequest` hooks, then deny).
    Ask,
}

/// A rule and where it came from.
pub type SourcedRule = Sourced<Rule>;

/// The permission settings of every source, merged: the lists combined over scopes (highest
/// scope first), the mode from the highest scope that sets one.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Permissions {
    /// Allow rules that count (a project's only once it is trusted).
    pub allow: Vec<SourcedRule>,
    /// Ask rules.
    pub ask: Vec<SourcedRule>,
    /// Deny rules.
    pub deny: Vec<SourcedRule>,
    /// The default mode, from the highest scope that sets one.
    pub default_mode: Option<Sourced<PermissionMode>>,
    /// Extra directories the run may reach, as written.
    pub additional_directories: Vec<Sourced<String>>,
}

impl Permissions {
    /// What the rules say about `call`: deny beats ask beats allow, over every source; the rule
    /// returned is the first of that list (highest scope) to match. `None`: no rule matches, the
    /// mode decides. Deny and ask rules catch a Bash command line any of whose commands they
    /// match ([`Rule::catches`]); an allow rule must cover it whole ([`Rule::matches`]).
    pub fn decide(
        &self,
        call: &ToolCall<'_>,
        ctx: &MatchContext<'_>,
    ) -> Option<(Decision, &SourcedRule)> {
        if let Some(rule) = self.deny.iter().find(|r| r.value.catches(call, ctx)) {
            return Some((Decision::Deny, rule));
        }
        if let Some(rule) = self.ask.iter().find(|r| r.value.catches(call, ctx)) {
            return Some((Decision::Ask, rule));
        }
        self.allow
            .iter()
            .find(|r| r.value.matches(call, ctx))
            .map(|rule| (Decision::Allow, rule))
    }

    /// Whether a bare deny rule names `tool` (ours or Claude Code's): Claude Code then removes
    /// the tool from the model's view altogether.
    pub fn denies_tool(&self, tool: &str) -> bool {
        let call = ToolCall::new(tool);
        let ctx = MatchContext {
            cwd: std::path::Path::new("/"),
            project_root: std::path::Path::new("/"),
            home: None,
        };
        self.deny
            .iter()
            .any(|r| r.value.is_bare() && r.value.catches(&call, &ctx))
    }
}
