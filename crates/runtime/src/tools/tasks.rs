//! The task tools, in Claude Code's vocabulary: `task_output` reads a background task's row
//! (status, progress, output file) and, once it ended, its result, optionally waiting for it up
//! to a timeout; `task_stop` stops one task. Both work on the calling run's own task table
//! ([`crate::TaskTable`]): a run sees and stops only the tasks it started. A result read through
//! either tool counts as told: no `<task-notification>` repeats it.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use subagent_core::RunId;
use subagent_model::ToolSpec;

use super::{Tool, ToolContext, ToolKind, ToolOutput, opt_bool, opt_u64, str_arg};
use crate::Result;
use crate::tasks::{TaskInfo, TaskKind, TaskStatus, TaskTable};

/// How long `task_output` waits when the call says nothing, in milliseconds.
pub const DEFAULT_WAIT_MS: u64 = 30_000;
/// The longest wait `task_output` accepts, in milliseconds.
pub const MAX_WAIT_MS: u64 = 600_000;

/// Reads a background task's output and progress (`task_output`).
#[derive(Debug, Default)]
pub struct TaskOutputTool;

/// Stops a background task (`task_stop`).
#[derive(Debug, Default)]
pub struct TaskStopTool;

/// The task tools, in order: `task_output`, `task_stop`.
pub fn task_tools() -> Vec<std::sync::Arc<dyn Tool>> {
    vec![
        std::sync::Arc::new(TaskOutputTool),
        std::sync::Arc::new(TaskStopTool),
    ]
}

/// The task `input.task_id` names in `tasks` (its id, or the id of the tool call that started
/// it), or the error result saying which tasks there are.
fn find(tasks: &TaskTable, input: &Value) -> Result<std::result::Result<RunId, ToolOutput>> {
    let given = str_arg(input, "task_id")?;
    let known = tasks.list();
    let given_id = given.trim().parse::<RunId>().ok();
    let found = known
        .iter()
        .find(|task| Some(task.id) == given_id || task.tool_use_id == given.trim())
        .map(|task| task.id);
    Ok(found.ok_or_else(|| {
        let ids: Vec<String> = known.iter().map(|task| task.id.to_string()).collect();
        let list = if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.join(", ")
        };
        ToolOutput::error(format!(
            "No task with id {given:?} was started by this run. Its tasks: {list}"
        ))
    }))
}

/// The text the model reads for a task: its row, its progress and, once ended, its result.
pub fn describe(task: &TaskInfo, retrieval: &str) -> String {
    let kind = match task.kind {
        TaskKind::Agent => "agent",
        TaskKind::Bash => "bash",
    };
    let output_file = task
        .output_file
        .as_ref()
        .map(|path| path.display().to_string())
        .unwrap_or_default();
    let progress = &task.progress;
    let mut text = format!(
        "<retrieval_status>{retrieval}</retrieval_status>\n<task_id>{}</task_id>\n<task_type>{kind}</task_type>\n<status>{}</status>\n<description>{}</description>\n<tool_use_id>{}</tool_use_id>\n<output_file>{output_file}</output_file>\n<progress>\ntool_uses: {}\ntokens: {}\nlast_activity: {}\nrecent:",
        task.id,
        task.state.status(),
        task.description,
        task.tool_use_id,
        progress.tool_uses,
        progress.tokens,
        progress.last_activity.as_deref().unwrap_or("none"),
    );
    for activity in &progress.recent {
        text.push_str(&format!("\n- {activity}"));
    }
    if let Some(summary) = &progress.summary {
        text.push_str(&format!("\nsummary: {summary}"));
    }
    text.push_str("\n</progress>");
    if let Some(outcome) = task.state.outcome() {
        let result = match &outcome.structured {
            Some(value) => value.to_string(),
            None => outcome.text.clone(),
        };
        text.push_str(&format!("\n<result>{result}</result>"));
        if let Some(diagnostic) = &outcome.diagnostic {
            text.push_str(&format!("\n<diagnostic>{diagnostic}</diagnostic>"));
        }
        let usage = &outcome.usage;
        text.push_str(&format!(
            "\n<usage><total_tokens>{}</total_tokens><tool_uses>{}</tool_uses><duration_ms>{}</duration_ms></usage>",
            usage.input_tokens.saturating_add(usage.output_tokens),
            usage.tool_uses,
            usage.duration_ms
        ));
    }
    text
}

#[async_trait]
impl Tool for TaskOutputTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "task_output".to_owned(),
            description: "Read a background task of yours (a subagent started with run_in_background, or a fork): its status (running, completed, failed, killed), progress (tool uses, tokens, latest activities), output file and, once it ended, its result. By default waits for it to end, up to timeout milliseconds; set block to false to look without waiting. A result read here is not repeated in a <task-notification>.".to_owned(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "task_id": {"type": "string", "description": "The task's id (from the delegation result or a <task-notification>), or the id of the tool call that started it."},
                    "block": {"type": "boolean", "description": "Wait for the task to end (default true)."},
                    "timeout": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS, "description": "How long to wait, in milliseconds (default 30000, at most 600000)."}
                },
                "required": ["task_id"]
            }),
        }
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Internal
    }

    fn cut_hint(&self) -> &str {
        crate::result_cap::NOTIFICATION_HINT
    }

    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput> {
        let tasks = &context.env.tasks;
        let id = match find(tasks, &input)? {
            Ok(id) => id,
            Err(refusal) => return Ok(refusal),
        };
        let block = opt_bool(&input, "block")?.unwrap_or(true);
        let timeout = opt_u64(&input, "timeout")?
            .unwrap_or(DEFAULT_WAIT_MS)
            .min(MAX_WAIT_MS);
        let task = if block {
            tokio::select! {
                biased;
                () = context.cancel.cancelled() => return Ok(ToolOutput::error("cancelled")),
                task = tasks.wait(id, Duration::from_millis(timeout)) => task,
            }
        } else {
            tasks.get(id)
        };
        let Some(task) = task else {
            return Ok(ToolOutput::error(format!("No task with id {id}")));
        };
        let retrieval = match (task.state.status(), block) {
            (TaskStatus::Running, true) => "timeout",
            (TaskStatus::Running, false) => "not_ready",
            _ => {
                tasks.mark_notified(id);
                "success"
            }
        };
        Ok(ToolOutput::ok(describe(&task, retrieval)))
    }
}

#[async_trait]
impl Tool for TaskStopTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "task_stop".to_owned(),
            description: "Stop a background task of yours that is still running (its subagent or command is cancelled) and get its final state and whatever result it had. Stopping a task that already ended only reports it.".to_owned(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "task_id": {"type": "string", "description": "The task's id, or the id of the tool call that started it."}
                },
                "required": ["task_id"]
            }),
        }
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Internal
    }

    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput> {
        let tasks = &context.env.tasks;
        let id = match find(tasks, &input)? {
            Ok(id) => id,
            Err(refusal) => return Ok(refusal),
        };
        let was_running = tasks.get(id).is_some_and(|task| task.state.is_running());
        let task = tokio::select! {
            biased;
            () = context.cancel.cancelled() => return Ok(ToolOutput::error("cancelled")),
            task = tasks.stop(id) => task,
        };
        let Some(task) = task else {
            return Ok(ToolOutput::error(format!("No task with id {id}")));
        };
        tasks.mark_notified(id);
        let opening = if was_running {
            format!("Stopped task {id}.")
        } else {
            format!("Task {id} had already ended ({}).", task.state.status())
        };
        Ok(ToolOutput::ok(format!(
            "{opening}\n{}",
            describe(&task, "success")
        )))
    }
}
