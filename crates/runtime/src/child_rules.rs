//! The permission rules a parent hands its children through the request
//! ([`StartRequest::permission_rules`](subagent_core::StartRequest)), and an in-process child
//! held to the rules its request carries.
//!
//! A parent's rules are its settings' (files and flags), written in Claude Code's spelling so a
//! product child reads them as its own. A child started outside an in-process parent (the
//! CLI's `delegate`, a served caller) gets them only from its request: [`PermissionPolicy::holding`]
//! adds those it does not hold already. Also here: what a rule refuses before any hook runs
//! ([`PermissionPolicy::refuses_before_hooks`]).

use std::path::Path;
use std::sync::Arc;

use subagent_core::PermissionRules;
use subagent_settings::{Rule, Scope, Sourced, SourcedRule};

use subagent_core::PermissionMode;

use crate::tools::ToolKind;
use crate::{Decision, PermissionPolicy, PermissionRequest, SettingsRules};

impl SettingsRules {
    /// These rules in Claude Code's spelling, each once, as a child's request carries them.
    pub fn child_rules(&self) -> PermissionRules {
        let texts = |rules: &[SourcedRule]| -> Vec<String> {
            let mut texts: Vec<String> = Vec::new();
            for rule in rules {
                let text = rule.value.claude_text();
                if !texts.contains(&text) {
                    texts.push(text);
                }
            }
            texts
        };
        let permissions = &self.permissions;
        PermissionRules {
            deny: texts(&permissions.deny),
            ask: texts(&permissions.ask),
            allow: texts(&permissions.allow),
        }
    }
}

impl PermissionPolicy {
    /// The rules a child must hold to: this policy's settings rules
    /// ([`SettingsRules::child_rules`]; none without settings).
    pub fn child_rules(&self) -> PermissionRules {
        self.settings
            .as_deref()
            .map(SettingsRules::child_rules)
            .unwrap_or_default()
    }

    /// Whether a rule (or plan mode) refuses `request` outright, before any hook runs: a call
    /// the `dontAsk` mode refuses only for want of an allow rule is not, as a `PreToolUse`
    /// hook's allow still lets it through in Claude Code.
    pub fn refuses_before_hooks(&self, request: &PermissionRequest, kind: ToolKind) -> bool {
        if self.decide(request, kind) != Decision::Deny {
            return false;
        }
        if self.mode != PermissionMode::DontAsk {
            return true;
        }
        let mut asking = self.clone();
        asking.mode = PermissionMode::Default;
        asking.decide(request, kind) == Decision::Deny
    }

    /// This policy also holding to `rules` (a request's): each rule it does not hold already is
    /// added beside its settings' (a policy without settings gets them alone, their path rules
    /// resolving in `cwd`). A rule that does not parse is an error naming it: a child never runs
    /// without a rule it was given.
    pub fn holding(mut self, rules: &PermissionRules, cwd: &Path) -> Result<Self, String> {
        if rules.is_empty() {
            return Ok(self);
        }
        let mut settings = match &self.settings {
            Some(settings) => SettingsRules::clone(settings),
            None => SettingsRules {
                permissions: subagent_settings::Permissions::default(),
                project_root: cwd.to_path_buf(),
                home: std::env::var_os("HOME").map(std::path::PathBuf::from),
                hooks: subagent_settings::Hooks::default(),
                env: Vec::new(),
                additional_dirs: Vec::new(),
            },
        };
        let permissions = &mut settings.permissions;
        for (texts, held) in [
            (&rules.deny, &mut permissions.deny),
            (&rules.ask, &mut permissions.ask),
            (&rules.allow, &mut permissions.allow),
        ] {
            for text in texts {
                let rule = Rule::parse(text).map_err(|error| {
                    format!("the parent's permission rule {text:?} does not parse: {error}")
                })?;
                if !held
                    .iter()
                    .any(|h| h.value.claude_text() == rule.claude_text())
                {
                    // Handed down like a command-line flag: by whoever started the child.
                    held.push(Sourced::new(rule, Scope::Flags, None));
                }
            }
        }
        self.settings = Some(Arc::new(settings));
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(deny: &[&str], ask: &[&str], allow: &[&str]) -> PermissionRules {
        let owned = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
        PermissionRules {
            deny: owned(deny),
            ask: owned(ask),
            allow: owned(allow),
        }
    }

    #[test]
    fn a_policy_held_to_a_requests_rules_hands_them_on_unchanged_and_once() {
        let given = rules(
            &["Bash(rm -rf:*)", "Read(./.env)"],
            &["Edit"],
            &["Bash(ls:*)"],
        );
        let policy = PermissionPolicy::new(PermissionMode::Default)
            .holding(&given, Path::new("/project"))
            .unwrap();
        assert_eq!(policy.child_rules(), given);
        let again = policy.holding(&given, Path::new("/project")).unwrap();
        assert_eq!(again.child_rules(), given);
    }

    #[test]
    fn a_rule_that_does_not_parse_is_an_error_naming_it() {
        let error = PermissionPolicy::new(PermissionMode::Default)
            .holding(&rules(&["Bash(unclosed"], &[], &[]), Path::new("/"))
            .unwrap_err();
        assert!(error.contains("\"Bash(unclosed\""), "{error}");
    }

    #[test]
    fn dont_ask_leaves_a_call_no_rule_decides_to_the_hooks_but_a_deny_rule_does_not() {
        let call = |command: &str| PermissionRequest {
            tool: "bash".into(),
            input: serde_json::json!({"command": command}),
            subject: Some(command.into()),
            aliases: Vec::new(),
            depth: 1,
            cwd: None,
        };
        let policy = PermissionPolicy::new(PermissionMode::DontAsk)
            .holding(&rules(&["Bash(rm:*)"], &[], &[]), Path::new("/project"))
            .unwrap();
        assert_eq!(
            policy.decide(&call("touch made"), ToolKind::Execute),
            Decision::Deny
        );
        assert!(!policy.refuses_before_hooks(&call("touch made"), ToolKind::Execute));
        assert!(policy.refuses_before_hooks(&call("rm -rf x"), ToolKind::Execute));
        let plan = PermissionPolicy::new(PermissionMode::Plan);
        assert!(plan.refuses_before_hooks(&call("touch made"), ToolKind::Execute));
    }

    #[test]
    fn a_policy_without_settings_hands_no_rules() {
        assert!(
            PermissionPolicy::new(PermissionMode::Default)
                .child_rules()
                .is_empty()
        );
    }
}
