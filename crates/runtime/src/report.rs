//! How what ran below a run is shown to it: a child's events in the parent's stream (tagged
//! with the delegation call's id, secrets redacted), a kept worktree, and a command's report
//! (the bash tool's result, a background command task's). Below the tools, tasks and delegation
//! that all show these.

use std::borrow::Cow;

use subagent_core::{RunEvent, WorktreeReport};
use subagent_process::{Captured, Secrets, StopCause};

/// The child's event as the parent reports it: its text, tool calls, tool results and usage,
/// tagged with the delegation call's id (a grandchild's keep the id of the call nearest to
/// them), so a live view can say who is working and count a child's tokens apart from the
/// parent's. Lifecycle, task and thinking events stay the child's own.
pub(crate) fn forwarded(event: RunEvent, call_id: &str) -> Option<RunEvent> {
    let tag = |id: Option<String>| Some(id.unwrap_or_else(|| call_id.to_owned()));
    match event {
        RunEvent::Text {
            text,
            parent_tool_use_id,
        } => Some(RunEvent::Text {
            text,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        RunEvent::ToolCall {
            id,
            name,
            input,
            parent_tool_use_id,
        } => Some(RunEvent::ToolCall {
            id,
            name,
            input,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        RunEvent::ToolResult {
            id,
            output,
            is_error,
            parent_tool_use_id,
        } => Some(RunEvent::ToolResult {
            id,
            output,
            is_error,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        RunEvent::Usage {
            usage,
            parent_tool_use_id,
        } => Some(RunEvent::Usage {
            usage,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        RunEvent::Summary {
            text,
            parent_tool_use_id,
        } => Some(RunEvent::Summary {
            text,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        // A child's own progress (a product CLI's retry, a plan, a lost attempt): its line in
        // the parent's view, under the child's name.
        RunEvent::Progress {
            message,
            parent_tool_use_id,
        } => Some(RunEvent::Progress {
            message,
            parent_tool_use_id: tag(parent_tool_use_id),
        }),
        _ => None,
    }
}

/// `forwarded`, with the configured secrets redacted from what the event carries as text (the
/// child's text, its tool results and its summaries): for a child's events that reach the
/// parent's stream without passing through a redacting emitter (a background task's, a
/// teammate's).
pub fn forwarded_clean(event: RunEvent, call_id: &str, secrets: &Secrets) -> Option<RunEvent> {
    forwarded(event, call_id).map(|event| redacted(secrets, event))
}

/// `event` with the secrets' values redacted from its text (a forwarded child's events: a
/// provider that does not redact its own output must not show a secret in this run's stream).
pub(crate) fn redacted(secrets: &Secrets, event: RunEvent) -> RunEvent {
    if secrets.is_empty() {
        return event;
    }
    let clean = |text: String| match secrets.redact(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(clean) => clean,
    };
    match event {
        RunEvent::Text {
            text,
            parent_tool_use_id,
        } => RunEvent::Text {
            text: clean(text),
            parent_tool_use_id,
        },
        RunEvent::Thinking { text } => RunEvent::Thinking { text: clean(text) },
        RunEvent::ToolResult {
            id,
            output,
            is_error,
            parent_tool_use_id,
        } => RunEvent::ToolResult {
            id,
            output: clean(output),
            is_error,
            parent_tool_use_id,
        },
        RunEvent::Progress {
            message,
            parent_tool_use_id,
        } => RunEvent::Progress {
            message: clean(message),
            parent_tool_use_id,
        },
        RunEvent::Summary {
            text,
            parent_tool_use_id,
        } => RunEvent::Summary {
            text: clean(text),
            parent_tool_use_id,
        },
        other => other,
    }
}

/// What a kept worktree looks like to the parent's model: where, which branch, the diffstat.
pub fn worktree_lines(worktree: &WorktreeReport) -> String {
    format!(
        "<worktree>\npath: {}\nbranch: {}\nchanges:\n{}\n</worktree>",
        worktree.path.display(),
        worktree.branch,
        worktree.diffstat
    )
}

/// What the model reads of a command that ended: how (exit code, timeout, stop), stdout (`lines`
/// read one by one before, then the rest of `output`), stderr; and whether that is an error.
pub(crate) fn command_report(
    output: &Captured,
    timeout: Option<u64>,
    limit: usize,
    lines: &str,
) -> (String, bool) {
    let mut text = String::new();
    let mut stdout = lines.to_owned();
    stdout.push_str(&String::from_utf8_lossy(&output.stdout));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let (code, is_error) = match (output.exit.stopped, timeout) {
        (Some(StopCause::OverallTimeout), Some(timeout)) => {
            (format!("timed out after {timeout} ms; killed"), true)
        }
        (Some(StopCause::Cancelled), _) => ("cancelled; killed".to_owned(), true),
        (Some(other), _) => (format!("stopped ({}); killed", other.describe()), true),
        (None, _) => match output.exit.code() {
            Some(code) => (format!("exit code {code}"), code != 0),
            None => ("killed by a signal".to_owned(), true),
        },
    };
    text.push_str(&code);
    if !stdout.is_empty() {
        text.push_str("\n<stdout>\n");
        text.push_str(&stdout);
        text.push_str("\n</stdout>");
    }
    if !stderr.is_empty() {
        text.push_str("\n<stderr>\n");
        text.push_str(&stderr);
        text.push_str("\n</stderr>");
    }
    if output.stdout_truncated || output.stderr_truncated {
        text.push_str(&format!("\n(output cut at {limit} bytes per stream)"));
    }
    (text, is_error)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// A child's own progress (a product CLI's retry, a plan) reaches the parent's stream under
    /// the delegation's call, so `subagent run` gives it a line named after the child; a
    /// grandchild's keeps its own call.
    #[test]
    fn a_childs_progress_is_forwarded_under_its_call() {
        assert_eq!(
            forwarded(RunEvent::progress("codex event turn.started"), "c1"),
            Some(RunEvent::Progress {
                message: "codex event turn.started".into(),
                parent_tool_use_id: Some("c1".into()),
            })
        );
        let nested = RunEvent::Progress {
            message: "plan: read".into(),
            parent_tool_use_id: Some("g1".into()),
        };
        assert_eq!(forwarded(nested.clone(), "c1"), Some(nested));
        assert_eq!(
            forwarded(
                RunEvent::Finished {
                    status: subagent_core::StopReason::Completed
                },
                "c1"
            ),
            None
        );
    }
}
