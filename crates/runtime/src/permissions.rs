//! Permissions: rules, modes, and the broker that answers `ask`.
//!
//! Order of evaluation for one call: `plan` mode refuses every tool that is not read-only →
//! deny rules → ask rules → allow rules → the mode's default (read-only and harness tools are
//! allowed in every mode; `accept-edits` allows edits; `bypass` allows everything; `default`
//! asks; `dont-ask` denies) → an `ask` goes to the [`PermissionBroker`], except in a background
//! run, which never asks: it is denied.
//!
//! Rules from settings files and flags ([`SettingsRules`], Claude Code's syntax:
//! `Bash(npm run test:*)`, `Read(./.env)`) count with the run's own: a deny of either beats an
//! ask of either beats an allow of either.
//!
//! An allow rule with a subject pattern allows one command of an `Execute` tool, never a command
//! line that chains, substitutes or redirects beyond it (`;`, `&`, `|`, `` ` ``, `$(`, `>`, `<`,
//! a newline), unless its pattern spells that operator itself.

use std::path::{Path, PathBuf};
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
    /// The run's working directory, which settings rules' relative paths (`Read(./.env)`)
    /// resolve against; `None`: the project root of the [`SettingsRules`].
    pub cwd: Option<PathBuf>,
}

/// Answers `ask` decisions (the CLI prompts the user). Must answer `Allow` or `Deny`; anything
/// else is taken as `Deny`.
#[async_trait]
pub trait PermissionBroker: Send + Sync {
    /// Decides one call.
    async fn ask(&self, request: PermissionRequest) -> Decision;
}

/// The tools whose calls on a memory directory's Markdown files need nobody's permission.
const MEMORY_WRITERS: [&str; 2] = ["write_file", "edit_file"];

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
    /// Rules from settings files and flags; a child inherits them with the policy.
    pub settings: Option<Arc<SettingsRules>>,
    /// Why the run is in plan mode when someone else holds it there and will lift it (a team's
    /// teammate whose plan awaits its leader's approval): said in every plan-mode refusal, so
    /// the model knows what to do. A child inherits it with the policy.
    pub plan_reason: Option<Arc<str>>,
    /// The run's agent memory directories (canonical): writing or editing a Markdown file in
    /// one is allowed without asking, unless a deny rule or plan mode says no, as Claude Code
    /// allows an agent its memory files. A run's own: the provider sets it for each child.
    pub memory_dirs: Vec<PathBuf>,
}

/// Permission rules from Claude Code's settings files and the command line
/// ([`subagent_settings::Permissions`]), with the directories their path rules resolve against.
#[derive(Clone, Debug)]
pub struct SettingsRules {
    /// The merged rules.
    pub permissions: subagent_settings::Permissions,
    /// The project root (`/x` rules; `./x` rules when the call names no directory).
    pub project_root: PathBuf,
    /// The user's home (`~/x` rules).
    pub home: Option<PathBuf>,
    /// The hooks of the settings files: every in-process run calls them around its tool calls.
    pub hooks: subagent_settings::Hooks,
    /// The variables the settings' `env` sets: every command (`bash`) and hook an in-process
    /// run starts gets them.
    pub env: Vec<(String, String)>,
    /// The settings' `additionalDirectories`, absolute: a run's file tools reach them beside its
    /// working directory (never an isolated child's).
    pub additional_dirs: Vec<PathBuf>,
}

impl SettingsRules {
    /// What the rules say about a call of `tool` whose subject is spelled any of `subjects`:
    /// for a file tool the path (its absolute spelling counts), for `bash` the command line,
    /// for another tool its subject. Deny beats ask beats allow over every spelling.
    pub fn decide(
        &self,
        tool: &str,
        kind: ToolKind,
        subjects: &[&str],
        cwd: Option<&Path>,
    ) -> Option<Decision> {
        let cwd = cwd.unwrap_or(&self.project_root);
        let context = subagent_settings::MatchContext {
            cwd,
            project_root: &self.project_root,
            home: self.home.as_deref(),
        };
        let paths: Vec<PathBuf> = match kind {
            ToolKind::ReadOnly | ToolKind::Edit if takes_path(tool) => {
                subjects.iter().map(|s| cwd.join(s)).collect()
            }
            _ => Vec::new(),
        };
        let calls: Vec<subagent_settings::ToolCall<'_>> = if !paths.is_empty() {
            paths
                .iter()
                .map(|p| subagent_settings::ToolCall::new(tool).path(p))
                .collect()
        } else if subjects.is_empty() {
            vec![subagent_settings::ToolCall::new(tool)]
        } else if matches!(tool, "web_fetch" | "WebFetch") {
            // A fetch's subject is its host: `WebFetch(domain:…)` rules match it.
            subjects
                .iter()
                .map(|s| subagent_settings::ToolCall::new(tool).domain(s))
                .collect()
        } else {
            subjects
                .iter()
                .map(|s| subagent_settings::ToolCall::new(tool).command(s))
                .collect()
        };
        let decisions: Vec<Decision> = calls
            .iter()
            .filter_map(|call| self.permissions.decide(call, &context))
            .map(|(decision, _)| match decision {
                subagent_settings::Decision::Allow => Decision::Allow,
                subagent_settings::Decision::Deny => Decision::Deny,
                subagent_settings::Decision::Ask => Decision::Ask,
            })
            .collect();
        [Decision::Deny, Decision::Ask, Decision::Allow]
            .into_iter()
            .find(|wanted| decisions.contains(wanted))
    }
}

/// An agent definition's `hooks:`, parsed, for the child that runs it: an in-process provider
/// adds them to the child's settings hooks (`StartRequest.parent.extensions`).
#[derive(Clone, Debug)]
pub struct AgentHooks(pub subagent_settings::Hooks);

impl AgentHooks {
    /// The hooks of `profile`, parsed (`None` when it has none). A value that does not parse is
    /// an error naming the agent and the key.
    pub fn of(
        profile: &subagent_core::agents::AgentProfile,
    ) -> std::result::Result<Option<Self>, String> {
        let Some(value) = &profile.hooks else {
            return Ok(None);
        };
        let label = format!("agent {}'s hooks ({})", profile.name, profile.source);
        subagent_settings::Hooks::from_value(value, subagent_settings::Scope::Agent, None, &label)
            .map(|hooks| (!hooks.is_empty()).then_some(Self(hooks)))
            .map_err(|error| error.to_string())
    }

    /// `policy` with these hooks beside its settings' (a policy without settings gets them
    /// alone, their path rules resolving in `cwd`).
    pub fn apply(&self, policy: &mut PermissionPolicy, cwd: &Path) {
        let mut rules = match &policy.settings {
            Some(settings) => SettingsRules::clone(settings),
            None => SettingsRules {
                permissions: subagent_settings::Permissions::default(),
                project_root: cwd.to_path_buf(),
                home: None,
                hooks: subagent_settings::Hooks::default(),
                env: Vec::new(),
                additional_dirs: Vec::new(),
            },
        };
        rules.hooks.extend(self.0.clone());
        policy.settings = Some(Arc::new(rules));
    }
}

/// Whether `tool` (ours, or a Claude Code file tool we have no name for: a product child's
/// question) names a file: its subjects are paths.
fn takes_path(tool: &str) -> bool {
    matches!(
        tool,
        "read_file"
            | "write_file"
            | "edit_file"
            | "delete"
            | "ls"
            | "glob"
            | "grep"
            | "MultiEdit"
            | "NotebookEdit"
    )
}

/// A mode as Claude Code names it (a hook's `permission_mode`).
pub(crate) fn claude_mode(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::AcceptEdits => "acceptEdits",
        PermissionMode::Plan => "plan",
        PermissionMode::DontAsk => "dontAsk",
        PermissionMode::Bypass => "bypassPermissions",
        _ => "default",
    }
}

impl std::fmt::Debug for PermissionPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionPolicy")
            .field("mode", &self.mode)
            .field("rules", &self.rules)
            .field("broker", &self.broker.is_some())
            .field("agent_types", &self.agent_types)
            .field("settings", &self.settings)
            .field("plan_reason", &self.plan_reason)
            .field("memory_dirs", &self.memory_dirs)
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
            settings: None,
            plan_reason: None,
            memory_dirs: Vec::new(),
        }
    }

    /// With rules from settings files and flags.
    #[must_use]
    pub fn with_settings(mut self, settings: Arc<SettingsRules>) -> Self {
        self.settings = Some(settings);
        self
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

    /// [`Self::evaluate_subjects`] for a call made in `cwd` (where settings rules' relative
    /// paths resolve).
    pub fn evaluate_in(
        &self,
        tool: &str,
        kind: ToolKind,
        subjects: &[&str],
        cwd: Option<&Path>,
    ) -> Decision {
        if self.mode == PermissionMode::Plan && !kind.is_read_only() {
            return Decision::Deny;
        }
        if kind == ToolKind::Internal {
            return Decision::Allow;
        }
        let settings = self
            .settings
            .as_ref()
            .and_then(|rules| rules.decide(tool, kind, subjects, cwd));
        let own = self.own_rules(tool, kind, subjects);
        if settings == Some(Decision::Deny) || own == Some(Decision::Deny) {
            return Decision::Deny;
        }
        if self.writes_memory(tool, subjects) {
            return Decision::Allow;
        }
        for wanted in [Decision::Ask, Decision::Allow] {
            if settings == Some(wanted) || own == Some(wanted) {
                return wanted;
            }
        }
        self.mode_default(kind)
    }

    /// Whether a call writes or edits a Markdown file in one of the run's memory directories
    /// (one of its subjects, the resolved absolute path, is there).
    fn writes_memory(&self, tool: &str, subjects: &[&str]) -> bool {
        !self.memory_dirs.is_empty()
            && MEMORY_WRITERS.contains(&tool)
            && subjects.iter().any(|subject| {
                let path = Path::new(subject);
                path.is_absolute()
                    && subject.ends_with(".md")
                    && !subject.contains("/../")
                    && self.memory_dirs.iter().any(|dir| path.starts_with(dir))
            })
    }

    /// What rules and mode say about a call whose subject has several spellings: a rule
    /// matching any of them applies (deny beats ask beats allow, over all spellings).
    pub fn evaluate_subjects(&self, tool: &str, kind: ToolKind, subjects: &[&str]) -> Decision {
        self.evaluate_in(tool, kind, subjects, None)
    }

    /// What the run's own rules say (deny beats ask beats allow); `None`: none matches.
    pub(crate) fn own_rules(
        &self,
        tool: &str,
        kind: ToolKind,
        subjects: &[&str],
    ) -> Option<Decision> {
        [Decision::Deny, Decision::Ask, Decision::Allow]
            .into_iter()
            .find(|&wanted| {
                self.rules.iter().any(|r| {
                    r.decision == wanted
                        && r.matches(tool, subjects)
                        && (wanted != Decision::Allow
                            || kind != ToolKind::Execute
                            || subjects.iter().all(|s| r.allows_command(s)))
                })
            })
    }

    /// What the mode says about a call no rule decides.
    fn mode_default(&self, kind: ToolKind) -> Decision {
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
        match self.decide(&request, kind) {
            Decision::Allow => Ok(()),
            Decision::Deny => Err(self.refusal(&request.tool, kind)),
            Decision::Ask => self.ask(request, background).await,
        }
    }

    /// What rules and mode say about `request`, before anyone is asked.
    pub fn decide(&self, request: &PermissionRequest, kind: ToolKind) -> Decision {
        let subjects: Vec<&str> = request
            .subject
            .iter()
            .chain(&request.aliases)
            .map(String::as_str)
            .collect();
        self.evaluate_in(&request.tool, kind, &subjects, request.cwd.as_deref())
    }

    /// Why a call [`Self::decide`] denied is refused (the model reads it).
    pub fn refusal(&self, tool: &str, kind: ToolKind) -> String {
        if self.mode == PermissionMode::Plan && !kind.is_read_only() {
            match self.plan_note() {
                Some(note) => format!("permission denied: {tool} is not read-only. {note}"),
                None => format!(
                    "permission denied: {tool} is not read-only and this run is in plan mode"
                ),
            }
        } else {
            format!(
                "permission denied: a rule or the {} permission mode refuses {tool}",
                self.mode
            )
        }
    }

    /// What a plan-mode run held there by someone else is told when a call is refused (or a
    /// tool it is not offered in plan mode is called): the [`Self::plan_reason`]; `None` for a
    /// run not in plan mode, or in plan mode for no reason given.
    pub fn plan_note(&self) -> Option<String> {
        let reason = self.plan_reason.as_deref()?;
        (self.mode == PermissionMode::Plan).then(|| {
            format!("This run is in plan mode (read-only: no edits, no commands) {reason}")
        })
    }

    /// Asks about a call [`Self::decide`] left to someone: the broker, when the run has one
    /// and is not in the background (a background run never asks: denied).
    pub async fn ask(
        &self,
        request: PermissionRequest,
        background: bool,
    ) -> std::result::Result<(), String> {
        let tool = request.tool.clone();
        if background {
            return Err(format!(
                "permission denied: {tool} needs approval, and a background run never asks (auto-denied)"
            ));
        }
        match &self.broker {
            None => Err(format!(
                "permission denied: {tool} needs approval and no one can be asked"
            )),
            Some(broker) => match broker.ask(request).await {
                Decision::Allow => Ok(()),
                _ => Err(format!(
                    "permission denied: approval for {tool} was refused"
                )),
            },
        }
    }

    /// The settings' additional directories (none without settings).
    pub fn additional_dirs(&self) -> &[PathBuf] {
        self.settings
            .as_ref()
            .map_or(&[], |settings| &settings.additional_dirs)
    }

    /// The variables the settings' `env` sets (none without settings).
    pub fn settings_env(&self) -> &[(String, String)] {
        self.settings.as_ref().map_or(&[], |settings| &settings.env)
    }

    /// The hooks of the settings (empty without any).
    pub fn hooks(&self) -> Option<&subagent_settings::Hooks> {
        self.settings
            .as_ref()
            .map(|settings| &settings.hooks)
            .filter(|hooks| !hooks.is_empty())
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

    /// Claude Code's rules from settings count beside the run's own, over every spelling of a
    /// path (relative, absolute, through `..`), and a chained command escapes no allow rule.
    #[test]
    fn settings_rules_count_with_the_runs_own() {
        use subagent_settings::{Rule, Scope, Sourced};
        let rule = |text: &str| Sourced::new(Rule::parse(text).unwrap(), Scope::User, None);
        let rules = SettingsRules {
            permissions: subagent_settings::Permissions {
                allow: vec![rule("Bash(npm run test:*)"), rule("Edit(src/**)")],
                deny: vec![rule("Read(./.env)"), rule("Bash(git push:*)")],
                ..Default::default()
            },
            project_root: PathBuf::from("/p"),
            home: None,
            hooks: subagent_settings::Hooks::default(),
            env: Vec::new(),
            additional_dirs: Vec::new(),
        };
        let policy = PermissionPolicy::new(PermissionMode::Default)
            .rule(PermissionRule::parse("bash(git *)", Decision::Allow).unwrap())
            .with_settings(Arc::new(rules));
        let cwd = Some(Path::new("/p"));
        let bash = |command: &str| policy.evaluate_in("bash", ToolKind::Execute, &[command], cwd);
        assert_eq!(bash("npm run test"), Decision::Allow);
        assert_eq!(bash("npm run test -- -w"), Decision::Allow);
        assert_eq!(bash("npm run test; rm -rf ~"), Decision::Ask);
        assert_eq!(bash("git status"), Decision::Allow, "the run's own rule");
        assert_eq!(
            bash("git push origin"),
            Decision::Deny,
            "settings deny beats own allow"
        );
        assert_eq!(bash("ls && git push"), Decision::Deny);
        assert_eq!(bash("make"), Decision::Ask);
        let read = |paths: &[&str]| policy.evaluate_in("read_file", ToolKind::ReadOnly, paths, cwd);
        assert_eq!(read(&[".env"]), Decision::Deny);
        assert_eq!(read(&["/p/.env"]), Decision::Deny);
        assert_eq!(read(&["src/../.env"]), Decision::Deny);
        assert_eq!(read(&["src/main.rs", "/p/src/main.rs"]), Decision::Allow);
        let write = |path: &str| policy.evaluate_in("write_file", ToolKind::Edit, &[path], cwd);
        assert_eq!(write("src/a/b.rs"), Decision::Allow);
        assert_eq!(write("docs/a.md"), Decision::Ask);
        // A child in another directory (its worktree) resolves `./x` there.
        let in_worktree = |path: &str| {
            policy.evaluate_in(
                "read_file",
                ToolKind::ReadOnly,
                &[path],
                Some(Path::new("/w")),
            )
        };
        assert_eq!(in_worktree(".env"), Decision::Deny);
        assert_eq!(in_worktree("/p/.env"), Decision::Allow);
        // Plan mode still refuses what is not read-only, whatever a rule allows.
        let plan = policy.restricted_to(PermissionMode::Plan);
        assert_eq!(
            plan.evaluate_in("bash", ToolKind::Execute, &["npm run test"], cwd),
            Decision::Deny
        );
    }

    /// A run held in plan mode by someone else says why in its refusals; a run not in plan
    /// mode has nothing to say.
    #[test]
    fn a_held_plan_mode_run_says_why_it_refuses() {
        let mut policy = PermissionPolicy::new(PermissionMode::Default);
        policy.plan_reason = Some(Arc::from("until the lead approves your plan"));
        assert_eq!(policy.plan_note(), None);
        let plan = policy.restricted_to(PermissionMode::Plan);
        assert_eq!(
            plan.refusal("write_file", ToolKind::Edit),
            "permission denied: write_file is not read-only. This run is in plan mode (read-only: no edits, no commands) until the lead approves your plan"
        );
        assert_eq!(
            PermissionPolicy::new(PermissionMode::Plan).refusal("bash", ToolKind::Execute),
            "permission denied: bash is not read-only and this run is in plan mode"
        );
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
            cwd: None,
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
