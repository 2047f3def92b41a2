//! The background tasks of a run, as its event stream tells them: a delegation or command that
//! went to the background (the runtime's tool result names the task), the events of its
//! subagent forwarded into the stream (tagged with the call that started it), and its end (the
//! runtime's `background task <id> <status>: <description>` progress event).
//!
//! Deliberately not here: printing (that is `render`), and a task's grandchildren (their events
//! are tagged with their own calls; `activity` names them).

use std::collections::HashMap;
use std::time::Instant;

use subagent_core::RunEvent;

use crate::render::one_line;

/// How many tasks the live view lists; more are counted in a last line.
pub const MAX_LISTED: usize = 5;

/// One background task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// The task id (a run id).
    pub id: String,
    /// The id of the call that started it (its subagent's events carry it).
    pub call_id: String,
    pub description: String,
    /// `running`, then the runtime's end status (`completed`, `failed`, `killed`).
    pub status: String,
    /// The latest thing it did (`starting` until its first tool call).
    pub last: String,
}

/// The background tasks of one run, in the order they started.
#[derive(Default)]
pub struct Background {
    tasks: Vec<Task>,
    /// When each task started, by id (for the live view's elapsed time).
    started: HashMap<String, Instant>,
    /// The run's own open tool calls: id → what a task it starts is called (the call's
    /// `description`, else its command or prompt).
    calls: HashMap<String, String>,
}

/// The task a tool result says it started, in the runtime's words: a background delegation
/// (`Started background subagent <id> (<description>) …`), a foreground one that moved there
/// (`… moved to the background as task <id> (<description>). …`), a background command
/// (`Started background command <id>. …`).
pub fn started_task(output: &str) -> Option<(String, Option<String>)> {
    let rest = output
        .strip_prefix("Started background subagent ")
        .or_else(|| {
            output
                .find(", so it moved to the background as task ")
                .map(|at| &output[at + ", so it moved to the background as task ".len()..])
        });
    if let Some(rest) = rest {
        let (id, rest) = rest.split_once(' ')?;
        let description = rest
            .strip_prefix('(')
            .and_then(|rest| rest.rsplit_once(')'))
            .map(|(description, _)| description.to_owned());
        return Some((id.to_owned(), description));
    }
    let rest = output.strip_prefix("Started background command ")?;
    let id = rest.split(['.', ' ']).next()?;
    Some((id.to_owned(), None))
}

/// The task id and status of the runtime's end message
/// (`subagent_runtime::task_ended_message`).
pub fn ended_task(message: &str) -> Option<(&str, &str)> {
    let rest = message.strip_prefix("background task ")?;
    let (id, rest) = rest.split_once(' ')?;
    let (status, _) = rest.split_once(':')?;
    Some((id, status))
}

impl Background {
    /// Takes one event into account; returns the plain line that says a task started, if it
    /// did (its end is the runtime's own progress event, printed as such).
    pub fn note(&mut self, event: &RunEvent) -> Option<String> {
        match event {
            RunEvent::ToolCall {
                id,
                input,
                parent_tool_use_id: None,
                ..
            } => {
                let field = |key: &str| input.get(key).and_then(|v| v.as_str());
                let what = field("description")
                    .or_else(|| field("command"))
                    .or_else(|| field("prompt"))
                    .unwrap_or_default();
                self.calls.insert(id.clone(), one_line(what, 80));
                None
            }
            RunEvent::ToolResult {
                id,
                output,
                parent_tool_use_id: None,
                ..
            } => {
                let call = self.calls.remove(id);
                let (task, description) = started_task(output)?;
                let description = description.or(call).unwrap_or_default();
                let line = format!("background task {task} started: {description}");
                self.started.insert(task.clone(), Instant::now());
                self.tasks.push(Task {
                    id: task,
                    call_id: id.clone(),
                    description,
                    status: "running".into(),
                    last: "starting".into(),
                });
                Some(line)
            }
            RunEvent::Progress { message } => {
                let (id, status) = ended_task(message)?;
                if let Some(task) = self.tasks.iter_mut().find(|task| task.id == id) {
                    task.status = status.to_owned();
                }
                None
            }
            RunEvent::ToolCall {
                name,
                input,
                parent_tool_use_id: Some(call),
                ..
            } => {
                if let Some(task) = self.running_of(call) {
                    task.last = format!("{name} {}", one_line(&input.to_string(), 40));
                }
                None
            }
            RunEvent::Text {
                parent_tool_use_id: Some(call),
                ..
            } => {
                if let Some(task) = self.running_of(call) {
                    task.last = "writing".into();
                }
                None
            }
            // Its progress summary says best what it is doing, until its next step.
            RunEvent::Summary {
                text,
                parent_tool_use_id: Some(call),
            } => {
                if let Some(task) = self.running_of(call) {
                    task.last = format!("“{}”", one_line(text, 60));
                }
                None
            }
            _ => None,
        }
    }

    fn running_of(&mut self, call: &str) -> Option<&mut Task> {
        self.tasks
            .iter_mut()
            .find(|task| task.call_id == call && task.status == "running")
    }

    /// The live view's lines, one per task (running ones first, then the latest to start),
    /// `task <short id> · <status> · <description> · <last activity>`, at most
    /// [`MAX_LISTED`] and a count of the rest; none without tasks.
    pub fn lines(&self) -> Vec<String> {
        let mut shown: Vec<&Task> = self
            .tasks
            .iter()
            .filter(|task| task.status == "running")
            .collect();
        shown.extend(self.tasks.iter().rev().filter(|t| t.status != "running"));
        let mut lines: Vec<String> = shown
            .iter()
            .take(MAX_LISTED)
            .map(|task| {
                let short: String = task.id.chars().take(8).collect();
                let mut line = format!(
                    "  task {short} · {} · {}",
                    task.status,
                    one_line(&task.description, 40)
                );
                if task.status == "running" {
                    line.push_str(&format!(" · {}", task.last));
                    if let Some(started) = self.started.get(&task.id) {
                        line.push_str(&format!(" · {:.0}s", started.elapsed().as_secs_f64()));
                    }
                }
                line
            })
            .collect();
        if shown.len() > MAX_LISTED {
            lines.push(format!(
                "  … {} more background tasks",
                shown.len() - MAX_LISTED
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn call(id: &str, input: serde_json::Value, parent: Option<&str>) -> RunEvent {
        RunEvent::ToolCall {
            id: id.into(),
            name: if parent.is_some() { "ls" } else { "subagent" }.into(),
            input,
            parent_tool_use_id: parent.map(str::to_owned),
        }
    }

    fn result(id: &str, output: &str) -> RunEvent {
        RunEvent::ToolResult {
            id: id.into(),
            output: output.into(),
            is_error: false,
            parent_tool_use_id: None,
        }
    }

    /// The view without the elapsed time of running tasks.
    fn untimed(background: &Background) -> Vec<String> {
        background
            .lines()
            .into_iter()
            .map(|line| match line.rsplit_once(" · ") {
                Some((rest, time)) if time.ends_with('s') && line.contains("running") => {
                    rest.to_owned()
                }
                _ => line,
            })
            .collect()
    }

    #[test]
    fn tasks_are_followed_from_the_runtimes_words_to_their_end() {
        let id = "0b7c2f3e-1111-2222-3333-444455556666";
        let mut background = Background::default();
        assert_eq!(
            background.note(&call("c1", json!({"description": "bg notes"}), None)),
            None
        );
        assert_eq!(
            background.note(&result(
                "c1",
                &format!("Started background subagent {id} (bg notes) with provider spawn. Its result will arrive as a <task-notification>; do not wait for it by polling.")
            )),
            Some(format!("background task {id} started: bg notes"))
        );
        assert_eq!(
            untimed(&background),
            ["  task 0b7c2f3e · running · bg notes · starting"]
        );
        background.note(&call("k1", json!({"path": "a.rs"}), Some("c1")));
        assert_eq!(
            untimed(&background),
            ["  task 0b7c2f3e · running · bg notes · ls {\"path\":\"a.rs\"}"]
        );
        // Its progress summary replaces the last step until the next one.
        background.note(&RunEvent::Summary {
            text: "Reading a.rs for\nits parser.".into(),
            parent_tool_use_id: Some("c1".into()),
        });
        assert_eq!(
            untimed(&background),
            ["  task 0b7c2f3e · running · bg notes · “Reading a.rs for its parser.”"]
        );
        // A command, named by its call.
        background.note(&call("c2", json!({"command": "make serve"}), None));
        background.note(&result(
            "c2",
            "Started background command 99999999-aaaa-bbbb-cccc-dddddddddddd. Its output file is /tmp/x.jsonl. Read it with task_output.",
        ));
        // The runtime's end message, as `subagent_runtime` spells it.
        let ended = subagent_runtime::task_ended_message(
            id.parse().unwrap(),
            subagent_runtime::TaskStatus::Completed,
            "bg notes",
        );
        background.note(&RunEvent::Progress { message: ended });
        assert_eq!(
            untimed(&background),
            [
                "  task 99999999 · running · make serve · starting",
                "  task 0b7c2f3e · completed · bg notes",
            ]
        );
    }

    #[test]
    fn a_foreground_call_that_moved_to_the_background_is_a_task() {
        assert_eq!(
            started_task(
                "The subagent was still running after 50 ms, so it moved to the background as task 1234 (slow one). Its result will arrive as a <task-notification>; read it with task_output or stop it with task_stop."
            ),
            Some(("1234".to_owned(), Some("slow one".to_owned())))
        );
        assert_eq!(started_task("done"), None);
        assert_eq!(
            ended_task("background task 12 failed: x: y"),
            Some(("12", "failed"))
        );
        assert_eq!(ended_task("retrying in 2s"), None);
    }

    #[test]
    fn the_view_lists_five_tasks_and_counts_the_rest() {
        let mut background = Background::default();
        for i in 0..7 {
            let call_id = format!("c{i}");
            background.note(&call(
                &call_id,
                json!({"description": format!("t{i}")}),
                None,
            ));
            background.note(&result(
                &call_id,
                &format!("Started background subagent {i:08} (t{i}) with provider spawn."),
            ));
        }
        let lines = untimed(&background);
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[0], "  task 00000000 · running · t0 · starting");
        assert_eq!(lines[5], "  … 2 more background tasks");
    }
}
