//! A product child's permission questions, answered for the parent as the parent's own tool
//! calls are decided (issue 28): [`PolicyAsker`], the [`ParentAsker`] the delegation tool hands
//! every child.
//!
//! Order, as for an in-process call (`crate::agent`'s tool loop): the parent's rules (its own
//! and its settings', deny beats ask beats allow) and mode; a call they leave to someone goes to
//! the parent's `PermissionRequest` hooks; then, for a child in the foreground, to the parent's
//! [`PermissionBroker`](crate::PermissionBroker) (the user); a background child's question
//! nothing decides is denied with Claude Code's words for a background agent.
//!
//! The question names the tool in Claude Code's vocabulary (`Bash`, `Write`, `mcp__x__y`): it
//! is mapped onto our tool name where we have one (so the run's own rules like `bash(git *)`
//! apply), onto a [`ToolKind`] (so the mode decides as for our tools) and onto the subject rules
//! match (the command, the file's path, a fetch's host).
//!
//! Deliberately not here: talking to a product (its provider turns its questions into
//! [`ToolQuestion`]s), the parent's `PreToolUse` hooks (the product runs its own; a question is
//! only what the product would ask a user).

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use subagent_core::{CancellationToken, ParentAsker, ToolAnswer, ToolQuestion};
use subagent_process::Secrets;
use subagent_settings::HookEvent;

use crate::hooks::{HookBase, HookDecision, HookRunner};
use crate::permissions::{Decision, PermissionPolicy, PermissionRequest, claude_mode};
use crate::tools::ToolKind;

/// What Claude Code tells the model of a background agent whose call would need a prompt
/// (`Permission to use <tool> has been denied.` and this), as the pinned `claude` 2.1.197
/// words it.
pub const CLAUDE_DENIAL_ADVICE: &str = "IMPORTANT: You *may* attempt to accomplish this action using other tools that might naturally be used to accomplish this goal, e.g. using head instead of cat. But you *should not* attempt to work around this denial in malicious ways, e.g. do not use your ability to run tests to execute non-test actions. You should only try to work around this restriction in reasonable ways that do not attempt to bypass the intent behind this denial. If you believe this capability is essential to complete the user's request, STOP and explain to the user what you were trying to do and why you need this permission. Let the user decide how to proceed.";

/// Claude Code's denial of a call nobody can be asked about, in a background agent.
pub fn background_denial(tool: &str) -> String {
    format!("Permission to use {tool} has been denied. {CLAUDE_DENIAL_ADVICE}")
}

/// A question mapped onto our terms: the tool name our rules use, its kind, and the subjects
/// rules match (several spellings of one path count).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mapped {
    pub tool: String,
    pub kind: ToolKind,
    pub subjects: Vec<String>,
    /// A file tool's path lies outside the question's working directory.
    pub outside: bool,
}

/// Maps Claude Code's tool and input onto ours (`Bash` → `bash` with its command, `Write` →
/// `write_file` with its path relative to `cwd` and absolute, `WebFetch` → `web_fetch` with its
/// host). A tool we do not know is an [`ToolKind::Execute`] without a subject: the mode decides
/// it unless a rule names it.
pub(crate) fn map_question(question: &ToolQuestion) -> Mapped {
    let claude = question.tool.as_str();
    let tool = subagent_settings::our_tool_name(claude)
        .unwrap_or(claude)
        .to_owned();
    let field = |key: &str| question.input.get(key).and_then(Value::as_str);
    let (kind, subjects) = match claude {
        "Bash" => (
            ToolKind::Execute,
            field("command").map(str::to_owned).into_iter().collect(),
        ),
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "Glob" | "Grep" | "LS" => {
            let kind = if matches!(claude, "Read" | "Glob" | "Grep" | "LS") {
                ToolKind::ReadOnly
            } else {
                ToolKind::Edit
            };
            let given = field("file_path")
                .or_else(|| field("notebook_path"))
                .or_else(|| field("path"));
            let subjects = match given {
                Some(path) => path_spellings(Path::new(path), &question.cwd),
                // Glob, Grep and LS without a path search the working directory.
                None if kind == ToolKind::ReadOnly => vec![".".to_owned()],
                None => Vec::new(),
            };
            (kind, subjects)
        }
        "WebFetch" => (
            ToolKind::Execute,
            field("url").and_then(host).into_iter().collect(),
        ),
        _ => (ToolKind::Execute, Vec::new()),
    };
    // A path inside the working directory has a relative spelling first (`path_spellings`).
    let outside = matches!(kind, ToolKind::ReadOnly | ToolKind::Edit)
        && subjects
            .first()
            .is_some_and(|first| Path::new(first).is_absolute());
    Mapped {
        tool,
        kind,
        subjects,
        outside,
    }
}

/// A path's spellings: relative to `cwd` when inside it, and absolute (`..` and `.` removed
/// lexically; symlinks resolved where the path, or its directory, exists).
fn path_spellings(path: &Path, cwd: &Path) -> Vec<String> {
    let absolute = normalize(&cwd.join(path));
    let resolved = std::fs::canonicalize(&absolute).ok().or_else(|| {
        let parent = absolute.parent()?;
        let name = absolute.file_name()?;
        std::fs::canonicalize(parent).ok().map(|dir| dir.join(name))
    });
    let absolute = resolved.unwrap_or(absolute);
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| normalize(cwd));
    let mut spellings = Vec::new();
    if let Ok(relative) = absolute.strip_prefix(&cwd) {
        let relative = relative.to_string_lossy();
        spellings.push(if relative.is_empty() {
            ".".to_owned()
        } else {
            relative.into_owned()
        });
    }
    spellings.push(absolute.to_string_lossy().into_owned());
    spellings
}

/// `..` and `.` removed without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The host of `url` (`https://example.com:8080/x` → `example.com`).
fn host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => authority.split(':').next()?,
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Answers a product child's questions as its parent's own calls are decided (see the module
/// docs). Built by the delegation tool for every child it starts ([`PolicyAsker::for_child`]),
/// or by hand for a parent that is not an in-process run.
#[derive(Clone, Debug)]
pub struct PolicyAsker {
    policy: PermissionPolicy,
    /// Whether the child runs in the background: set when a foreground child moves there.
    background: Arc<AtomicBool>,
    depth: u32,
    session_id: String,
    project_dir: Option<PathBuf>,
    secrets: Secrets,
    cancel: CancellationToken,
}

impl PolicyAsker {
    /// Answers by `policy` (its rules, mode, settings hooks and broker) for a child in the
    /// background or not; `cancel` ends a question still waiting (a hook, the broker) with a
    /// deny.
    pub fn new(policy: PermissionPolicy, background: bool, cancel: CancellationToken) -> Self {
        Self {
            policy,
            background: Arc::new(AtomicBool::new(background)),
            depth: 1,
            session_id: String::new(),
            project_dir: None,
            secrets: Secrets::new(),
            cancel,
        }
    }

    /// The asker of a child of the run `env` (its policy, secrets and id), at depth
    /// `env.depth + 1`.
    pub fn for_child(env: &crate::RunEnv, background: bool, cancel: CancellationToken) -> Self {
        let mut asker = Self::new(env.permissions.clone(), background, cancel);
        asker.depth = env.depth.saturating_add(1);
        asker.session_id = env.run_id.to_string();
        asker.secrets = env.secrets.clone();
        asker.project_dir = Some(env.roots.cwd().to_path_buf());
        asker
    }

    /// Shares `flag` as the child's background flag: whoever moves the child to the background
    /// sets it, and from then on nobody is asked.
    #[must_use]
    pub(crate) fn with_background_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.background = flag;
        self
    }

    /// Answering no looser than `ceiling` (the child's permission ceiling): a `plan` ceiling
    /// refuses every call that is not read-only before any rule, hook or user is asked.
    #[must_use]
    pub fn under(mut self, ceiling: subagent_core::PermissionMode) -> Self {
        self.policy = self.policy.restricted_to(ceiling);
        self
    }

    /// Keeping `secrets` out of the hooks it runs, as a run's own hooks keep them out.
    #[must_use]
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    /// With `dir` as the project's directory its hooks are told (`CLAUDE_PROJECT_DIR`) when the
    /// policy has no settings to name one.
    #[must_use]
    pub fn in_project(mut self, dir: PathBuf) -> Self {
        self.project_dir = Some(dir);
        self
    }

    /// With the `session_id` the parent's hooks are told.
    #[must_use]
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = id.into();
        self
    }

    /// The hooks' runner for a question asked in `cwd`; `None` without hooks.
    fn hooks(&self, cwd: &Path) -> Option<HookRunner> {
        let hooks = self.policy.hooks()?;
        let project_dir = self
            .policy
            .settings
            .as_ref()
            .map(|settings| settings.project_root.clone())
            .or_else(|| self.project_dir.clone())
            .unwrap_or_else(|| cwd.to_path_buf());
        Some(
            HookRunner::new(
                hooks.clone(),
                HookBase {
                    session_id: self.session_id.clone(),
                    transcript_path: None,
                    cwd: cwd.to_path_buf(),
                    project_dir,
                    permission_mode: claude_mode(self.policy.mode).to_owned(),
                    secrets: self.secrets.clone(),
                },
            )
            .with_env(self.policy.settings_env().to_vec()),
        )
    }

    /// What the rules alone (the run's own and its settings') say about a mapped question.
    fn rule_allows(&self, mapped: &Mapped, subjects: &[&str], cwd: &Path) -> Option<Decision> {
        let settings = self
            .policy
            .settings
            .as_ref()
            .and_then(|rules| rules.decide(&mapped.tool, mapped.kind, subjects, Some(cwd)));
        let own = self.policy.own_rules(&mapped.tool, mapped.kind, subjects);
        [Decision::Deny, Decision::Ask, Decision::Allow]
            .into_iter()
            .find(|wanted| settings == Some(*wanted) || own == Some(*wanted))
    }

    /// The parent's `Notification` hooks, as its user is about to be asked (Claude Code's
    /// `permission_prompt`): they can tell the user elsewhere; what they answer changes nothing.
    async fn notify(&self, question: &ToolQuestion) {
        let Some(runner) = self.hooks(&question.cwd) else {
            return;
        };
        let mut input = Map::new();
        input.insert(
            "message".into(),
            json!(format!(
                "Claude needs your permission to use {}",
                question.tool
            )),
        );
        input.insert("notification_type".into(), json!("permission_prompt"));
        let verdict = runner
            .run(
                &HookEvent::Notification,
                Some("permission_prompt"),
                input,
                &self.cancel,
            )
            .await;
        for error in &verdict.errors {
            tracing::warn!(target: "subagent::hooks", "{error}");
        }
    }

    /// The parent's `PermissionRequest` hooks on the question: `None` when none decides.
    async fn permission_hooks(&self, question: &ToolQuestion) -> Option<ToolAnswer> {
        let runner = self.hooks(&question.cwd)?;
        let mut input = Map::new();
        input.insert("tool_name".into(), json!(question.tool));
        input.insert("tool_input".into(), question.input.clone());
        let verdict = runner
            .run(
                &HookEvent::PermissionRequest,
                Some(&question.tool),
                input,
                &self.cancel,
            )
            .await;
        for error in &verdict.errors {
            tracing::warn!(target: "subagent::hooks", "{error}");
        }
        if let Some(text) = verdict.blocked {
            return Some(ToolAnswer::Deny { message: text });
        }
        match verdict.permission {
            Some((HookDecision::Allow, _)) => Some(ToolAnswer::Allow {
                updated_input: verdict.updated_input,
            }),
            Some((HookDecision::Deny, reason)) => Some(ToolAnswer::Deny {
                message: format!("permission denied by a PermissionRequest hook: {reason}"),
            }),
            _ => None,
        }
    }
}

#[async_trait]
impl ParentAsker for PolicyAsker {
    async fn ask(&self, question: ToolQuestion) -> ToolAnswer {
        let mapped = map_question(&question);
        let subjects: Vec<&str> = mapped.subjects.iter().map(String::as_str).collect();
        let mut decision =
            self.policy
                .evaluate_in(&mapped.tool, mapped.kind, &subjects, Some(&question.cwd));
        // A file outside the child's directory and the settings' additional directories: the
        // parent's own file tools could not reach it, so only a rule allows it, as in Claude
        // Code; the mode alone does not.
        let outside = mapped.outside
            && !mapped.subjects.last().is_some_and(|path| {
                self.policy
                    .additional_dirs()
                    .iter()
                    .any(|dir| Path::new(path).starts_with(dir))
            });
        if decision == Decision::Allow
            && outside
            && self.rule_allows(&mapped, &subjects, &question.cwd) != Some(Decision::Allow)
        {
            decision = Decision::Ask;
        }
        match decision {
            Decision::Allow => {
                return ToolAnswer::Allow {
                    updated_input: None,
                };
            }
            Decision::Deny => {
                return ToolAnswer::Deny {
                    message: self.policy.refusal(&question.tool, mapped.kind),
                };
            }
            Decision::Ask => {}
        }
        if let Some(answer) = self.permission_hooks(&question).await {
            return answer;
        }
        if self.background.load(Ordering::Relaxed) {
            return ToolAnswer::Deny {
                message: background_denial(&question.tool),
            };
        }
        if self.policy.broker.is_some() {
            self.notify(&question).await;
        }
        let mut subjects = mapped.subjects.into_iter();
        let request = PermissionRequest {
            tool: mapped.tool,
            input: question.input.clone(),
            subject: subjects.next(),
            aliases: subjects.collect(),
            depth: self.depth,
            cwd: Some(question.cwd.clone()),
        };
        let answer = tokio::select! {
            answer = self.policy.ask(request, false) => answer,
            () = self.cancel.cancelled() => Err("cancelled while waiting for permission".to_owned()),
        };
        match answer {
            Ok(()) => ToolAnswer::Allow {
                updated_input: None,
            },
            Err(message) => ToolAnswer::Deny { message },
        }
    }
}

#[cfg(test)]
mod tests;
