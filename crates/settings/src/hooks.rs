//! Hook configuration in Claude Code's shape:
//! `{"PreToolUse": [{"matcher": "Bash|Write", "hooks": [{"type": "command", "command": "…",
//! "timeout": 30}]}]}`. Configuration only: running a hook is the runtime's.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::scope::Scope;
use crate::tools;

/// A hook's timeout when its entry gives none (Claude Code's).
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The events a hook can be configured for. An unknown name is kept as [`HookEvent::Other`]
/// (with a warning), not refused: a newer Claude Code's settings file still loads.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookEvent {
    /// Before a tool call; may block it or decide its permission.
    PreToolUse,
    /// After a tool call.
    PostToolUse,
    /// When a call would ask for permission.
    PermissionRequest,
    /// When the user's prompt is submitted.
    UserPromptSubmit,
    /// When the agent stops.
    Stop,
    /// When a subagent starts.
    SubagentStart,
    /// When a subagent stops.
    SubagentStop,
    /// When a session starts.
    SessionStart,
    /// When a session ends.
    SessionEnd,
    /// When a notification is shown.
    Notification,
    /// A name this crate does not know, kept as written.
    Other(String),
}

impl HookEvent {
    /// The known events.
    pub const KNOWN: [HookEvent; 10] = [
        Self::PreToolUse,
        Self::PostToolUse,
        Self::PermissionRequest,
        Self::UserPromptSubmit,
        Self::Stop,
        Self::SubagentStart,
        Self::SubagentStop,
        Self::SessionStart,
        Self::SessionEnd,
        Self::Notification,
    ];

    /// The event named `name` (Claude Code's spelling).
    pub fn parse(name: &str) -> Self {
        Self::KNOWN
            .into_iter()
            .find(|event| event.name() == name)
            .unwrap_or_else(|| Self::Other(name.to_owned()))
    }

    /// Claude Code's name of the event.
    pub fn name(&self) -> &str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PermissionRequest => "PermissionRequest",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::Stop => "Stop",
            Self::SubagentStart => "SubagentStart",
            Self::SubagentStop => "SubagentStop",
            Self::SessionStart => "SessionStart",
            Self::SessionEnd => "SessionEnd",
            Self::Notification => "Notification",
            Self::Other(name) => name,
        }
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for HookEvent {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// One command hook.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HookCommand {
    /// The command line (run by the runtime through the process owner).
    pub command: String,
    /// How long it may run ([`DEFAULT_HOOK_TIMEOUT`] unless the entry says `timeout`).
    #[serde(serialize_with = "seconds")]
    pub timeout: Duration,
    /// Where it was configured.
    pub source: Scope,
    /// The file that configured it; `None` for a preset, `--settings JSON` or an inline value.
    pub file: Option<PathBuf>,
}

fn seconds<S: Serializer>(
    timeout: &Duration,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_f64(timeout.as_secs_f64())
}

/// Hooks under one matcher.
#[derive(Clone, Debug, Serialize)]
pub struct HookGroup {
    /// The matcher as written; `None`, empty or `*`: every tool (and every event without one).
    pub matcher: Option<String>,
    /// Its commands.
    pub hooks: Vec<HookCommand>,
    #[serde(skip)]
    compiled: Matcher,
}

#[derive(Clone, Debug)]
enum Matcher {
    All,
    /// `Edit|Write`: exact names (Claude Code compares a plain `a|b` matcher exactly).
    Names(Vec<String>),
    /// Anything else: a regular expression, searched in the name (unanchored, as Claude Code).
    Regex(Regex),
}

impl HookGroup {
    /// Whether the group applies to `target` (a Claude tool name; for an event without a tool,
    /// `None`, which only a match-all group takes).
    fn applies(&self, target: Option<&str>) -> bool {
        match (&self.compiled, target) {
            (Matcher::All, _) => true,
            (_, None) => false,
            (Matcher::Names(names), Some(target)) => names.iter().any(|n| n == target),
            (Matcher::Regex(regex), Some(target)) => regex.is_match(target),
        }
    }
}

/// Hooks by event, in precedence order of their sources.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Hooks {
    /// The groups of each event.
    #[serde(flatten)]
    pub events: BTreeMap<HookEvent, Vec<HookGroup>>,
    /// What was kept but looks wrong (an unknown event, a hook type other than `command`).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

impl Hooks {
    /// Parses a `hooks` value (a settings file's key or an agent definition's `hooks:`
    /// frontmatter) from `source` (`file` when it came from one; `label` names it in errors).
    ///
    /// # Errors
    /// [`Error::Key`] (`SETTINGS_INVALID`) for a value of the wrong shape, [`Error::HookMatcher`]
    /// (`HOOK_MATCHER_INVALID`) for a matcher that is not a valid regular expression.
    pub fn from_value(
        value: &Value,
        source: Scope,
        file: Option<&Path>,
        label: &str,
    ) -> Result<Self> {
        let key_error = |key: String, message: &str| Error::Key {
            path: label.to_owned(),
            key,
            message: message.to_owned(),
        };
        let mut hooks = Self::default();
        if value.is_null() {
            return Ok(hooks);
        }
        let Some(events) = value.as_object() else {
            return Err(key_error("hooks".into(), "must be an object of events"));
        };
        for (name, groups) in events {
            let event = HookEvent::parse(name);
            if let HookEvent::Other(name) = &event {
                hooks.warnings.push(format!(
                    "{label}: hooks.{name}: unknown hook event, kept but never fired"
                ));
            }
            let Some(groups) = groups.as_array() else {
                return Err(key_error(
                    format!("hooks.{name}"),
                    "must be an array of {\"matcher\", \"hooks\"} entries",
                ));
            };
            let mut parsed = Vec::new();
            for (index, group) in groups.iter().enumerate() {
                let at = format!("hooks.{name}[{index}]");
                let Some(group) = group.as_object() else {
                    return Err(key_error(at, "must be an object"));
                };
                let matcher = match group.get("matcher") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(m)) => Some(m.clone()),
                    Some(_) => return Err(key_error(format!("{at}.matcher"), "must be a string")),
                };
                let compiled =
                    compile(matcher.as_deref()).map_err(|message| Error::HookMatcher {
                        path: label.to_owned(),
                        event: name.clone(),
                        matcher: matcher.clone().unwrap_or_default(),
                        message,
                    })?;
                let Some(entries) = group.get("hooks").and_then(Value::as_array) else {
                    return Err(key_error(
                        format!("{at}.hooks"),
                        "must be an array of hooks",
                    ));
                };
                let mut commands = Vec::new();
                for (i, entry) in entries.iter().enumerate() {
                    let at = format!("{at}.hooks[{i}]");
                    let kind = entry.get("type").and_then(Value::as_str);
                    if kind != Some("command") {
                        hooks.warnings.push(format!(
                            "{label}: {at}: hook type {} is not supported (only \"command\"); skipped",
                            kind.map_or_else(|| "(none)".to_owned(), |k| format!("{k:?}"))
                        ));
                        continue;
                    }
                    let Some(command) = entry.get("command").and_then(Value::as_str) else {
                        return Err(key_error(format!("{at}.command"), "must be a string"));
                    };
                    let timeout = match entry.get("timeout") {
                        None | Some(Value::Null) => DEFAULT_HOOK_TIMEOUT,
                        Some(t) => t
                            .as_f64()
                            .filter(|s| s.is_finite() && *s > 0.0)
                            .and_then(|s| Duration::try_from_secs_f64(s).ok())
                            .ok_or_else(|| {
                                key_error(
                                    format!("{at}.timeout"),
                                    "must be a positive number of seconds",
                                )
                            })?,
                    };
                    commands.push(HookCommand {
                        command: command.to_owned(),
                        timeout,
                        source,
                        file: file.map(Path::to_path_buf),
                    });
                }
                parsed.push(HookGroup {
                    matcher,
                    hooks: commands,
                    compiled,
                });
            }
            hooks.events.entry(event).or_default().extend(parsed);
        }
        Ok(hooks)
    }

    /// Adds `other`'s groups after this one's (`other` ranks lower).
    pub fn extend(&mut self, other: Hooks) {
        for (event, groups) in other.events {
            self.events.entry(event).or_default().extend(groups);
        }
        self.warnings.extend(other.warnings);
    }

    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        self.events
            .values()
            .all(|groups| groups.iter().all(|g| g.hooks.is_empty()))
    }

    /// Whether any hook is configured for `event`, whatever its matcher.
    pub fn has(&self, event: &HookEvent) -> bool {
        self.events
            .get(event)
            .is_some_and(|groups| groups.iter().any(|group| !group.hooks.is_empty()))
    }

    /// The commands to run for `event` on a call of `tool_name` (ours or Claude Code's; mapped
    /// to Claude Code's before matching), in source order, a command configured twice once.
    /// For an event without a tool pass `None`: only groups without a matcher (or `*`) apply;
    /// for an event whose matcher selects something else (`SessionStart`'s source, `startup`)
    /// pass that.
    pub fn for_event(&self, event: &HookEvent, tool_name: Option<&str>) -> Vec<&HookCommand> {
        let target = tool_name.map(tools::canonical);
        let mut out: Vec<&HookCommand> = Vec::new();
        for group in self.events.get(event).into_iter().flatten() {
            if !group.applies(target) {
                continue;
            }
            for hook in &group.hooks {
                if !out.iter().any(|h| h.command == hook.command) {
                    out.push(hook);
                }
            }
        }
        out
    }
}

fn compile(matcher: Option<&str>) -> std::result::Result<Matcher, String> {
    let Some(matcher) = matcher
        .map(str::trim)
        .filter(|m| !m.is_empty() && *m != "*")
    else {
        return Ok(Matcher::All);
    };
    if matcher
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
    {
        return Ok(Matcher::Names(
            matcher
                .split('|')
                .map(|name| tools::canonical(name).to_owned())
                .collect(),
        ));
    }
    Regex::new(matcher)
        .map(Matcher::Regex)
        .map_err(|e| e.to_string())
}
