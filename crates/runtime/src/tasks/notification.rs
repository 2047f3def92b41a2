//! A finished task as the model is told of it: the `<task-notification>` text.

use std::path::Path;

use subagent_core::Outcome;

use super::TaskInfo;
use crate::report::worktree_lines;

/// A finished background run, ready to be told to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskNotification {
    /// The task as it ended.
    pub task: TaskInfo,
}

/// Where the result of a task starts in text the model reads.
fn result_text(outcome: &Outcome) -> String {
    match &outcome.structured {
        Some(value) => value.to_string(),
        None => outcome.text.clone(),
    }
}

impl TaskNotification {
    /// The `<task-notification>` text the model reads.
    pub fn to_text(&self) -> String {
        let task = &self.task;
        let output_file = task
            .output_file
            .as_deref()
            .map(Path::display)
            .map(|path| path.to_string())
            .unwrap_or_default();
        let mut text = format!(
            "<task-notification>\n<task_id>{}</task_id>\n<tool_use_id>{}</tool_use_id>\n<output_file>{output_file}</output_file>\n<status>{}</status>\n<summary>{}</summary>\n",
            task.id,
            task.tool_use_id,
            task.state.status(),
            task.description
        );
        let Some(outcome) = task.state.outcome() else {
            text.push_str("</task-notification>");
            return text;
        };
        text.push_str(&format!("<result>{}</result>\n", result_text(outcome)));
        if let Some(diagnostic) = &outcome.diagnostic {
            text.push_str(&format!("<diagnostic>{diagnostic}</diagnostic>\n"));
        }
        if let Some(session) = &outcome.session {
            text.push_str(&format!("<session_id>{}</session_id>\n", session.id));
        }
        if let Some(worktree) = &outcome.worktree {
            text.push_str(&worktree_lines(worktree));
            text.push('\n');
        }
        let usage = &outcome.usage;
        text.push_str(&format!(
            "<usage><total_tokens>{}</total_tokens><tool_uses>{}</tool_uses><duration_ms>{}</duration_ms></usage>\n</task-notification>",
            usage.input_tokens.saturating_add(usage.output_tokens),
            usage.tool_uses,
            usage.duration_ms
        ));
        text
    }
}
