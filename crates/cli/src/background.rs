//! The background tasks of a run, as its event stream tells them: a delegation or command that
//! went to the background ([`RunEvent::TaskStarted`]), the events of its subagent forwarded
//! into the stream (tagged with the call that started it), and its end
//! ([`RunEvent::TaskEnded`]). Only typed events: what the runtime writes for the model (its
//! tool results, its notifications) is free to change wording.
//!
//! Deliberately not here: printing (that is `render`), and a task's grandchildren (their events
//! are tagged with their own calls; `activity` names them).

use std::collections::HashMap;
use std::time::Instant;

use subagent_core::RunEvent;

use crate::line::one_line;

/// How many tasks the live view lists; more are counted in a last line.
pub(crate) const MAX_LISTED: usize = 5;

/// One background task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Task {
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
pub(crate) struct Background {
    tasks: Vec<Task>,
    /// When each task started, by id (for the live view's elapsed time).
    started: HashMap<String, Instant>,
}

impl Background {
    /// Takes one event into account.
    pub(crate) fn note(&mut self, event: &RunEvent) {
        match event {
            RunEvent::TaskStarted {
                task_id,
                tool_use_id,
                description,
                ..
            } => {
                let id = task_id.to_string();
                self.started.insert(id.clone(), Instant::now());
                self.tasks.push(Task {
                    id,
                    call_id: tool_use_id.clone(),
                    description: description.clone(),
                    status: "running".into(),
                    last: "starting".into(),
                });
            }
            RunEvent::TaskEnded {
                task_id, status, ..
            } => {
                let id = task_id.to_string();
                if let Some(task) = self.tasks.iter_mut().find(|task| task.id == id) {
                    task.status = status.as_str().to_owned();
                }
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
            }
            RunEvent::Text {
                parent_tool_use_id: Some(call),
                ..
            } => {
                if let Some(task) = self.running_of(call) {
                    task.last = "writing".into();
                }
            }
            // Its progress summary says best what it is doing, until its next step.
            RunEvent::Summary {
                text,
                parent_tool_use_id: Some(call),
            } => {
                if let Some(task) = self.running_of(call) {
                    task.last = format!("“{}”", one_line(text, 60));
                }
            }
            _ => {}
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
    pub(crate) fn lines(&self) -> Vec<String> {
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
    use subagent_core::{RunId, TaskKind, TaskStatus};

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

    fn started(id: &str, call: &str, kind: TaskKind, description: &str) -> RunEvent {
        RunEvent::TaskStarted {
            task_id: id.parse::<RunId>().unwrap(),
            tool_use_id: call.into(),
            kind,
            description: description.into(),
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

    /// Tasks are followed from the typed events alone: the tool results the model reads may
    /// say anything (here, words no runtime writes) and the view stays the same.
    #[test]
    fn tasks_are_followed_from_typed_events_whatever_the_model_reads() {
        let id = "0b7c2f3e-1111-2222-3333-444455556666";
        let command = "99999999-aaaa-bbbb-cccc-dddddddddddd";
        let mut background = Background::default();
        background.note(&call("c1", json!({"description": "bg notes"}), None));
        background.note(&started(id, "c1", TaskKind::Agent, "bg notes"));
        background.note(&result("c1", "Reworded: off it goes, task id elsewhere."));
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
        // A command, named by the runtime's description of it.
        background.note(&call("c2", json!({"command": "make serve"}), None));
        background.note(&started(command, "c2", TaskKind::Bash, "make serve"));
        background.note(&result("c2", "Anything at all."));
        // A progress line in the old words of an end is only progress now.
        background.note(&RunEvent::progress(format!(
            "background task {command} completed: make serve"
        )));
        background.note(&RunEvent::TaskEnded {
            task_id: id.parse().unwrap(),
            tool_use_id: "c1".into(),
            status: TaskStatus::Completed,
            description: "bg notes".into(),
        });
        assert_eq!(
            untimed(&background),
            [
                "  task 99999999 · running · make serve · starting",
                "  task 0b7c2f3e · completed · bg notes",
            ]
        );
    }

    #[test]
    fn the_view_lists_five_tasks_and_counts_the_rest() {
        let mut background = Background::default();
        for i in 0..7 {
            let call_id = format!("c{i}");
            background.note(&started(
                &format!("{i:08}-0000-0000-0000-000000000000"),
                &call_id,
                TaskKind::Agent,
                &format!("t{i}"),
            ));
        }
        let lines = untimed(&background);
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[0], "  task 00000000 · running · t0 · starting");
        assert_eq!(lines[5], "  … 2 more background tasks");
    }
}
