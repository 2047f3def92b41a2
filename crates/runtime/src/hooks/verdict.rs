//! What one hook's exit and output mean ([`Outcome`]) and what the hooks of one event decide
//! together ([`HookVerdict`]), in Claude Code's protocol.

use serde_json::{Map, Value};
use subagent_settings::HookEvent;

/// A permission decision a `PreToolUse` or `PermissionRequest` hook gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookDecision {
    /// The call runs without asking (rules that deny or ask still apply: the caller's order).
    Allow,
    /// Someone is asked.
    Ask,
    /// The call is refused; the reason goes to the model.
    Deny,
}

impl HookDecision {
    /// Claude Code's spelling (`allow`, `ask`, `deny`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "allow" => Some(Self::Allow),
            "ask" => Some(Self::Ask),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
}

/// What the hooks of one event decided together (the commands ran in parallel; their results
/// are folded in configuration order). The default — nothing ran or nothing was said — lets
/// everything go on as if no hook were configured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookVerdict {
    /// How many commands matched and were run (those that failed to start or timed out included).
    pub ran: usize,
    /// The event is blocked (exit 2, JSON `decision: "block"`, or `continue: false`), with the
    /// text to feed back (for exit 2 Claude Code's `<Event>:<Tool> hook error: [<command>]:
    /// <stderr>`; several blocking hooks' texts joined by newlines). What "blocked" means is the
    /// event's: a `PreToolUse` call does not run, a `Stop` does not stop, a prompt is dropped.
    pub blocked: Option<String>,
    /// A permission decision and its reason (`PreToolUse`'s `permissionDecision` or the older
    /// `decision: approve|block`; `PermissionRequest`'s `decision.behavior`, or its exit 2 as
    /// a deny). Across hooks deny beats ask beats allow; the reason is the first hook's that
    /// gave the winning decision.
    pub permission: Option<(HookDecision, String)>,
    /// A replacement for the tool's input (`updatedInput`; the last hook that gave one wins).
    pub updated_input: Option<Value>,
    /// Context for the model: `additionalContext`, and the plain stdout of exit-0 hooks of
    /// `UserPromptSubmit` and `SessionStart`.
    pub additional_context: Vec<String>,
    /// The whole run should stop (`continue: false`), with the reason for the user
    /// (`stopReason`, or a default naming the hook).
    pub stop: Option<String>,
    /// A hook asked that its output be kept out of the transcript (`suppressOutput`).
    pub suppress_output: bool,
    /// Messages for the user (`systemMessage`).
    pub system_messages: Vec<String>,
    /// Non-blocking errors for the user, never the model: another exit code, a timeout, a
    /// hook that could not start, JSON that does not parse. Execution goes on.
    pub errors: Vec<String>,
}

/// How one hook command ended, as the runner saw it.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It exited with this code; its output (stdout cut at the bound, stderr cut at its own).
    Exited {
        code: i32,
        stdout: String,
        stdout_truncated: bool,
        stderr: String,
    },
    /// It did not end by itself (timeout, signal, cancellation) or could not start: a
    /// non-blocking error with this text.
    Failed(String),
}

/// What the runner passes to [`HookVerdict::absorb`] about the hook.
pub(crate) struct Context<'a> {
    pub(crate) event: &'a HookEvent,
    pub(crate) tool: Option<&'a str>,
    pub(crate) command: &'a str,
}

impl HookVerdict {
    /// Folds one hook's outcome in (hooks are absorbed in configuration order).
    pub(crate) fn absorb(&mut self, context: &Context<'_>, outcome: Outcome) {
        self.ran += 1;
        let (code, stdout, stdout_truncated, stderr) = match outcome {
            Outcome::Failed(error) => return self.errors.push(error),
            Outcome::Exited {
                code,
                stdout,
                stdout_truncated,
                stderr,
            } => (code, stdout, stdout_truncated, stderr),
        };
        let command = context.command;
        match code {
            0 => self.absorb_stdout(context, &stdout, stdout_truncated),
            2 => {
                // `SessionStart`'s matcher target (its source) is no tool: only the tool
                // events name one.
                let tool_event = matches!(
                    context.event,
                    HookEvent::PreToolUse | HookEvent::PostToolUse | HookEvent::PermissionRequest
                );
                let label = match context.tool.filter(|_| tool_event) {
                    Some(tool) => format!("{}:{tool}", context.event),
                    None => context.event.to_string(),
                };
                let text = format!("{label} hook error: [{command}]: {stderr}");
                if *context.event == HookEvent::PermissionRequest {
                    self.decide(HookDecision::Deny, text.clone());
                }
                push_line(&mut self.blocked, text);
            }
            code => {
                let stderr = stderr.trim_end();
                let detail = if stderr.is_empty() {
                    String::new()
                } else {
                    format!(": {stderr}")
                };
                self.errors.push(format!(
                    "{} hook [{command}] failed with exit code {code}{detail}",
                    context.event
                ));
            }
        }
    }

    fn absorb_stdout(&mut self, context: &Context<'_>, stdout: &str, truncated: bool) {
        let text = stdout.trim();
        if !text.starts_with('{') {
            let plain = matches!(
                context.event,
                HookEvent::UserPromptSubmit | HookEvent::SessionStart
            );
            if plain && !text.is_empty() {
                self.additional_context.push(text.to_owned());
            }
            return;
        }
        let command = context.command;
        let json = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(json)) => json,
            Ok(_) => return,
            Err(e) => {
                let cut = if truncated {
                    " (its output was cut at the bound)"
                } else {
                    ""
                };
                return self.errors.push(format!(
                    "{} hook [{command}] printed JSON that does not parse{cut}: {e}",
                    context.event
                ));
            }
        };
        self.absorb_json(context, &json);
    }

    fn absorb_json(&mut self, context: &Context<'_>, json: &Map<String, Value>) {
        let text = |key: &str| json.get(key).and_then(Value::as_str).map(str::to_owned);
        if json.get("suppressOutput").and_then(Value::as_bool) == Some(true) {
            self.suppress_output = true;
        }
        if let Some(message) = text("systemMessage") {
            self.system_messages.push(message);
        }
        let specific = json.get("hookSpecificOutput").and_then(Value::as_object);
        let specific_text = |key: &str| {
            specific
                .and_then(|s| s.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        if let Some(extra) = specific_text("additionalContext") {
            self.additional_context.push(extra);
        }
        let reason = text("reason").unwrap_or_default();
        match context.event {
            HookEvent::PreToolUse => {
                let decision = specific_text("permissionDecision")
                    .as_deref()
                    .and_then(HookDecision::parse);
                if let Some(decision) = decision {
                    let why = specific_text("permissionDecisionReason").unwrap_or_default();
                    self.decide(decision, why);
                } else {
                    match text("decision").as_deref() {
                        Some("approve") => self.decide(HookDecision::Allow, reason),
                        Some("block") => self.decide(HookDecision::Deny, reason),
                        _ => {}
                    }
                }
                if let Some(input) = specific.and_then(|s| s.get("updatedInput")) {
                    self.updated_input = Some(input.clone());
                }
            }
            HookEvent::PermissionRequest => {
                let decision = specific
                    .and_then(|s| s.get("decision"))
                    .and_then(Value::as_object);
                if let Some(decision) = decision {
                    let behavior = decision.get("behavior").and_then(Value::as_str);
                    let message = decision
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    match behavior {
                        Some("allow") => self.decide(HookDecision::Allow, message.clone()),
                        Some("deny") => self.decide(HookDecision::Deny, message.clone()),
                        _ => {}
                    }
                    if let Some(input) = decision.get("updatedInput") {
                        self.updated_input = Some(input.clone());
                    }
                    if behavior == Some("deny")
                        && decision.get("interrupt").and_then(Value::as_bool) == Some(true)
                    {
                        self.stop.get_or_insert(message);
                    }
                }
            }
            _ => {
                if text("decision").as_deref() == Some("block") {
                    let reason = if reason.is_empty() {
                        format!("{} hook [{}] blocked", context.event, context.command)
                    } else {
                        reason
                    };
                    push_line(&mut self.blocked, reason);
                }
            }
        }
        if json.get("continue").and_then(Value::as_bool) == Some(false) {
            let why = text("stopReason").unwrap_or_else(|| {
                format!(
                    "{} hook [{}] stopped the run",
                    context.event, context.command
                )
            });
            push_line(&mut self.blocked, why.clone());
            self.stop.get_or_insert(why);
        }
    }

    /// Deny beats ask beats allow; the first hook to give the winning decision names the reason.
    fn decide(&mut self, decision: HookDecision, reason: String) {
        match &self.permission {
            Some((current, _)) if *current >= decision => {}
            _ => self.permission = Some((decision, reason)),
        }
    }
}

fn push_line(slot: &mut Option<String>, text: String) {
    match slot {
        Some(existing) => {
            existing.push('\n');
            existing.push_str(&text);
        }
        None => *slot = Some(text),
    }
}
