//! Who is working in a run's event stream: the run itself, or one of the nested agents whose
//! events a delegation forwarded into it (tagged with `parent_tool_use_id`, the id of the call
//! that started them), and the tool uses and tokens of each side.
//!
//! A nested agent is named from the call that started it: a teammate by its `name`, another
//! by its `subagent_type`, else what the delegation tool runs untyped calls on (the fork
//! provider, say), else the tool's name; a grandchild's name is the path from the run
//! (`general-purpose › explore`).
//!
//! Deliberately not here: printing (that is `render`).

use std::collections::HashMap;

use subagent_core::{RunEvent, Usage};

/// The longest chain of nested agents followed when naming one (ids come from providers).
const MAX_NESTING: usize = 32;

/// A tool call still open: what a nested agent it started is called.
#[derive(Clone)]
struct Call {
    /// The agent type it asked for (`subagent_type`), or the tool's name.
    label: String,
    /// The call that started the agent which made this call.
    parent: Option<String>,
}

/// Counts of a run and of its nested agents, and their names.
#[derive(Default)]
pub(crate) struct Activity {
    /// Open tool calls by id, oldest first (a call's entry goes when its result arrives). Ids
    /// are unique in one conversation only: a child's call may carry the id of the call that
    /// started the child, which is then the older entry (an open ancestor's call).
    calls: HashMap<String, Vec<Call>>,
    /// Delegation tool name → the name of what its untyped calls run on.
    untyped: HashMap<String, String>,
    own_tool_uses: u64,
    nested_tool_uses: u64,
    own_usage: Usage,
    /// Each nested agent's latest cumulative usage, by the id of the call that started it.
    nested_usage: HashMap<String, Usage>,
    /// The run's own calls whose delegation went to the background (a `task_started` event
    /// named them): their result does not close them, their task's events come later.
    backgrounded: std::collections::HashSet<String>,
}

/// The tokens a usage counts, input (cache reads and writes included) and output.
pub(crate) fn tokens(usage: &Usage) -> u64 {
    input_tokens(usage).saturating_add(usage.output_tokens)
}

fn input_tokens(usage: &Usage) -> u64 {
    usage
        .input_tokens
        .saturating_add(usage.cache_read_tokens)
        .saturating_add(usage.cache_write_tokens)
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

impl Activity {
    /// Names the nested agents that calls of the delegation tool `tool` without a
    /// `subagent_type` start (e.g. `fork`, or the tool's provider).
    pub(crate) fn name_untyped(&mut self, tool: impl Into<String>, label: impl Into<String>) {
        self.untyped.insert(tool.into(), label.into());
    }

    /// Takes one event into account; returns the name of the nested agent it belongs to, or
    /// `None` when it is the run's own.
    pub(crate) fn note(&mut self, event: &RunEvent) -> Option<String> {
        let tag = match event {
            RunEvent::ToolCall {
                id,
                name,
                input,
                parent_tool_use_id,
            } => {
                if parent_tool_use_id.is_some() {
                    self.nested_tool_uses += 1;
                } else {
                    self.own_tool_uses += 1;
                }
                let text = |key: &str| {
                    input
                        .get(key)
                        .and_then(|value| value.as_str())
                        .filter(|value| !value.is_empty())
                        .map(str::to_owned)
                };
                // A teammate by its name; another agent by its type, else what the tool runs
                // untyped calls on.
                let label = text("name")
                    .filter(|_| input.get("team_name").is_some())
                    .or_else(|| text("subagent_type"))
                    .or_else(|| self.untyped.get(name).cloned())
                    .unwrap_or_else(|| name.clone());
                self.calls.entry(id.clone()).or_default().push(Call {
                    label,
                    parent: parent_tool_use_id.clone(),
                });
                parent_tool_use_id
            }
            RunEvent::ToolResult {
                id,
                parent_tool_use_id,
                ..
            } => {
                // A delegation that went to the background keeps its name: its task's events
                // come later, tagged with this call.
                if parent_tool_use_id.is_none() && self.backgrounded.contains(id) {
                    return parent_tool_use_id.as_deref().map(|id| self.name(id));
                }
                if let Some(open) = self.calls.get_mut(id) {
                    if let Some(at) = open
                        .iter()
                        .position(|call| call.parent == *parent_tool_use_id)
                    {
                        open.remove(at);
                    }
                    if open.is_empty() {
                        self.calls.remove(id);
                    }
                }
                parent_tool_use_id
            }
            RunEvent::TaskStarted { tool_use_id, .. } => {
                self.backgrounded.insert(tool_use_id.clone());
                &None
            }
            RunEvent::Text {
                parent_tool_use_id, ..
            }
            | RunEvent::Summary {
                parent_tool_use_id, ..
            }
            | RunEvent::Progress {
                parent_tool_use_id, ..
            } => parent_tool_use_id,
            RunEvent::Usage {
                usage,
                parent_tool_use_id,
            } => {
                match parent_tool_use_id {
                    Some(id) => {
                        self.nested_usage.insert(id.clone(), *usage);
                    }
                    None => self.own_usage = *usage,
                }
                parent_tool_use_id
            }
            _ => &None,
        };
        tag.as_deref().map(|id| self.name(id))
    }

    /// The name of the nested agent started by call `id` (the oldest open call of that id): the
    /// path of names from the run.
    fn name(&self, id: &str) -> String {
        let mut names = Vec::new();
        let mut visited: Vec<&str> = Vec::new();
        let mut next = Some(id);
        while let Some(id) = next {
            if names.len() == MAX_NESTING {
                names.push("…".to_owned());
                break;
            }
            if visited.contains(&id) {
                // A call tagged with its own id (ids repeat across conversations): no further.
                break;
            }
            visited.push(id);
            match self.calls.get(id).and_then(|open| open.first()) {
                Some(call) => {
                    names.push(call.label.clone());
                    next = call.parent.as_deref();
                }
                None => {
                    names.push("subagent".to_owned());
                    next = None;
                }
            }
        }
        names.reverse();
        names.join(" › ")
    }

    fn nested_total(&self) -> Usage {
        let mut total = Usage::default();
        for usage in self.nested_usage.values() {
            total.add(usage);
        }
        total
    }

    /// `4 tool uses (+2 in subagents)`, from the events seen.
    pub(crate) fn tool_uses_live(&self) -> String {
        tool_uses_text(self.own_tool_uses, self.nested_tool_uses)
    }

    /// `1.2k tokens (+800 in subagents)`, from the events seen.
    pub(crate) fn tokens_live(&self) -> String {
        let nested = tokens(&self.nested_total());
        let mut text = format!("{} tokens", human_tokens(tokens(&self.own_usage)));
        if nested > 0 {
            text.push_str(&format!(" (+{} in subagents)", human_tokens(nested)));
        }
        text
    }

    /// The counts of the summary line once the run ended: the outcome's own, and the nested
    /// agents' as the live line counted them, so both lines agree. A provider whose outcome
    /// counts its nested agents' tool calls too (claude-code) is not counted twice: the run's
    /// own are what the outcome counts beyond the nested ones seen (never fewer than the own
    /// calls seen).
    pub(crate) fn summary(&self, usage: &Usage) -> String {
        let own_tool_uses = usage
            .tool_uses
            .max(self.own_tool_uses + self.nested_tool_uses)
            .saturating_sub(self.nested_tool_uses);
        let nested = self.nested_total();
        let mut text = format!(
            "{} · {} in / {} out tokens",
            tool_uses_text(own_tool_uses, self.nested_tool_uses),
            input_tokens(usage),
            usage.output_tokens
        );
        if tokens(&nested) > 0 {
            text.push_str(&format!(
                " (+{} in / +{} out in subagents)",
                input_tokens(&nested),
                nested.output_tokens
            ));
        }
        text
    }
}

fn tool_uses_text(own: u64, nested: u64) -> String {
    let mut text = format!("{own} tool use{}", plural(own));
    if nested > 0 {
        text.push_str(&format!(" (+{nested} in subagents)"));
    }
    text
}

/// `950`, `1.2k`, `34k`.
pub(crate) fn human_tokens(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.0}k", n as f64 / 1000.0)
    } else if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn call(id: &str, name: &str, input: serde_json::Value, parent: Option<&str>) -> RunEvent {
        RunEvent::ToolCall {
            id: id.into(),
            name: name.into(),
            input,
            parent_tool_use_id: parent.map(str::to_owned),
        }
    }

    fn result(id: &str, parent: Option<&str>) -> RunEvent {
        RunEvent::ToolResult {
            id: id.into(),
            output: "ok".into(),
            is_error: false,
            parent_tool_use_id: parent.map(str::to_owned),
        }
    }

    fn usage(input: u64, output: u64, parent: Option<&str>) -> RunEvent {
        RunEvent::Usage {
            usage: Usage {
                input_tokens: input,
                output_tokens: output,
                ..Usage::default()
            },
            parent_tool_use_id: parent.map(str::to_owned),
        }
    }

    /// A delegation that went to the background returns at once; its task's events, tagged
    /// with the call, come later and are still named after it. Known from the typed
    /// `task_started` event: what the tool result says the model may read in any words.
    #[test]
    fn a_background_task_keeps_its_name_after_its_call_returned() {
        let mut activity = Activity::default();
        let typed = json!({"subagent_type": "explore", "prompt": "p"});
        let task = |call: &str, id: &str| RunEvent::TaskStarted {
            task_id: id.parse().unwrap(),
            tool_use_id: call.into(),
            kind: subagent_core::TaskKind::Agent,
            description: "p".into(),
        };
        let reworded = |call: &str| RunEvent::ToolResult {
            id: call.into(),
            output: "Off it went, in words no runtime ever wrote.".into(),
            is_error: false,
            parent_tool_use_id: None,
        };
        let seen: Vec<Option<String>> = [
            call("c1", "subagent", typed, None),
            task("c1", "5f0c0000-0000-0000-0000-000000000000"),
            reworded("c1"),
            call("c2", "subagent", json!({"subagent_type": "plan"}), None),
            task("c2", "77ab0000-0000-0000-0000-000000000000"),
            reworded("c2"),
            call("k1", "ls", json!({}), Some("c1")),
            result("k1", Some("c1")),
            call("k2", "ls", json!({}), Some("c2")),
        ]
        .iter()
        .map(|event| activity.note(event))
        .collect();
        assert_eq!(
            seen,
            [
                None,
                None,
                None,
                None,
                None,
                None,
                Some("explore".to_owned()),
                Some("explore".to_owned()),
                Some("plan".to_owned())
            ]
        );
    }

    #[test]
    fn nested_agents_are_named_from_the_calls_that_started_them() {
        let mut activity = Activity::default();
        activity.name_untyped("subagent", "fork");
        let typed = json!({"subagent_type": "general-purpose", "prompt": "p"});
        let seen: Vec<Option<String>> = [
            call("c1", "subagent", typed, None),
            call("k1", "read_file", json!({}), Some("c1")),
            call(
                "c2",
                "Task",
                json!({"subagent_type": "explore"}),
                Some("c1"),
            ),
            call("k2", "grep", json!({}), Some("c2")),
            result("k2", Some("c2")),
            result("c2", Some("c1")),
            result("c1", None),
            call("f1", "subagent", json!({"prompt": "p"}), None),
            call("k3", "ls", json!({}), Some("f1")),
            call("t1", "other_tool", json!({}), None),
            call("k4", "ls", json!({}), Some("t1")),
            call("k5", "ls", json!({}), Some("unknown")),
            // A product child's own progress, forwarded under its call: its line, its name.
            RunEvent::Progress {
                message: "codex event thread.started".into(),
                parent_tool_use_id: Some("f1".into()),
            },
        ]
        .iter()
        .map(|event| activity.note(event))
        .collect();
        let name = |s: &str| Some(s.to_owned());
        assert_eq!(
            seen,
            [
                None,
                name("general-purpose"),
                name("general-purpose"),
                name("general-purpose › explore"),
                name("general-purpose › explore"),
                name("general-purpose"),
                None,
                None,
                name("fork"),
                None,
                name("other_tool"),
                name("subagent"),
                name("fork"),
            ]
        );
    }

    /// A teammate is named by its name, not by the tool or an untyped label.
    #[test]
    fn a_teammate_is_named_by_its_name() {
        let mut activity = Activity::default();
        activity.name_untyped("subagent", "fork");
        let teammate =
            json!({"name": "alice", "team_name": "t", "subagent_type": "explore", "prompt": "p"});
        activity.note(&call("c1", "subagent", teammate, None));
        let seen = activity.note(&call("k1", "ls", json!({}), Some("c1")));
        assert_eq!(seen.as_deref(), Some("alice"));
        // A `name` without a team is not a teammate's.
        activity.note(&call(
            "c2",
            "subagent",
            json!({"name": "x", "prompt": "p"}),
            None,
        ));
        let seen = activity.note(&call("k2", "ls", json!({}), Some("c2")));
        assert_eq!(seen.as_deref(), Some("fork"));
    }

    /// Ids are unique in one conversation, not across them (the scripted model numbers each
    /// conversation's calls alike): a child's call may carry its delegation's id.
    #[test]
    fn a_childs_call_with_its_delegations_id_does_not_hide_the_delegation() {
        let mut activity = Activity::default();
        let typed = json!({"subagent_type": "general-purpose"});
        let text = |parent: &str| RunEvent::Text {
            text: "t".into(),
            parent_tool_use_id: Some(parent.into()),
        };
        let seen: Vec<Option<String>> = [
            call("x", "subagent", typed, None),
            call("x", "read_file", json!({}), Some("x")),
            result("x", Some("x")),
            text("x"),
            call(
                "y",
                "subagent",
                json!({"subagent_type": "explore"}),
                Some("x"),
            ),
            call("x", "grep", json!({}), Some("y")),
            result("x", Some("y")),
            result("y", Some("x")),
            result("x", None),
            text("x"),
            call("x", "ls", json!({}), Some("x")),
        ]
        .iter()
        .map(|event| activity.note(event))
        .collect();
        let name = |s: &str| Some(s.to_owned());
        assert_eq!(
            seen,
            [
                None,
                name("general-purpose"),
                name("general-purpose"),
                name("general-purpose"),
                name("general-purpose"),
                name("general-purpose › explore"),
                name("general-purpose › explore"),
                name("general-purpose"),
                None,
                name("subagent"),
                name("ls"),
            ]
        );
    }

    #[test]
    fn live_and_summary_counts_agree_and_keep_nested_work_apart() {
        let mut activity = Activity::default();
        for event in [
            usage(100, 50, None),
            call("c1", "subagent", json!({"subagent_type": "explore"}), None),
            usage(7, 3, Some("c1")),
            call("k1", "read_file", json!({}), Some("c1")),
            result("k1", Some("c1")),
            usage(18, 5, Some("c1")),
            call("k2", "grep", json!({}), Some("c1")),
            result("k2", Some("c1")),
            result("c1", None),
            call("b1", "bash", json!({}), None),
            result("b1", None),
            usage(300, 110, None),
        ] {
            activity.note(&event);
        }
        assert_eq!(
            (activity.tool_uses_live(), activity.tokens_live()),
            (
                "2 tool uses (+2 in subagents)".to_owned(),
                "410 tokens (+23 in subagents)".to_owned()
            )
        );
        let outcome = Usage {
            input_tokens: 300,
            output_tokens: 110,
            tool_uses: 2,
            ..Usage::default()
        };
        assert_eq!(
            activity.summary(&outcome),
            "2 tool uses (+2 in subagents) · 300 in / 110 out tokens (+18 in / +5 out in subagents)"
        );
        // An outcome that counts its nested agents' calls too is not counted twice.
        let counts_all = Usage {
            tool_uses: 4,
            ..outcome
        };
        assert_eq!(
            activity.summary(&counts_all),
            "2 tool uses (+2 in subagents) · 300 in / 110 out tokens (+18 in / +5 out in subagents)"
        );
    }

    #[test]
    fn a_run_without_nested_agents_says_nothing_of_them() {
        let mut activity = Activity::default();
        activity.note(&call("b1", "bash", json!({}), None));
        activity.note(&usage(1200, 34, None));
        let outcome = Usage {
            input_tokens: 1200,
            output_tokens: 34,
            tool_uses: 1,
            ..Usage::default()
        };
        assert_eq!(
            (
                activity.tool_uses_live(),
                activity.tokens_live(),
                activity.summary(&outcome)
            ),
            (
                "1 tool use".to_owned(),
                "1.2k tokens".to_owned(),
                "1 tool use · 1200 in / 34 out tokens".to_owned()
            )
        );
    }
}
