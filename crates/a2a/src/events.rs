//! From a remote task's stream to a run's events and outcome.
//!
//! A `subagent serve` sends each run event itself in its status update's metadata (passed on
//! as it is, but for the remote `Started` and `Finished`: the local run has its own) and the
//! outcome in the last one's; a plain A2A agent's artifact text is the run's text (streamed as
//! `Text`), its status messages are `Progress`, and its final state makes the outcome.

use serde_json::Value;
use subagent_core::{Outcome, RunEvent, SessionRef, StopReason};

use crate::ext::metadata_get;
use crate::types::{Message, StreamResponse, Task, TaskState, apply, joined_text};

/// What the stream has said so far.
#[derive(Debug, Default)]
pub struct Assembly {
    /// The agent is a `subagent serve`: its events say everything, its artifacts repeat it.
    ours: bool,
    /// Another agent whose contexts are continued on resume: a completed run's session is its
    /// task's context.
    pub context_sessions: bool,
    /// The task as the events built it.
    pub task: Task,
    /// Stream events read (every one, the first `task` included): where a re-subscribe to a
    /// `subagent serve` picks up.
    pub read: usize,
    /// The outcome a `subagent serve` sent.
    outcome: Option<Outcome>,
    /// A direct answer (a stream of one message).
    answer: Option<Message>,
}

impl Assembly {
    /// An empty assembly for a `subagent serve` (`ours`) or another agent.
    pub fn new(ours: bool) -> Self {
        Self {
            ours,
            ..Self::default()
        }
    }

    /// The remote task's id, once known.
    pub fn task_id(&self) -> Option<&str> {
        (!self.task.id.is_empty()).then_some(self.task.id.as_str())
    }

    /// Whether the task has ended (a terminal or interrupted state, or a direct answer).
    pub fn ended(&self) -> bool {
        let state = self.task.status.state;
        self.answer.is_some() || state.is_terminal() || state.is_interrupted()
    }

    /// Takes one event in; returns the run events it makes.
    pub fn take(&mut self, event: &StreamResponse) -> Vec<RunEvent> {
        self.read += 1;
        let mut out = Vec::new();
        match event {
            StreamResponse::Task(task) => {
                if let Some(outcome) = outcome_of(task.metadata.as_ref()) {
                    self.outcome = Some(outcome);
                }
            }
            StreamResponse::Message(message) => self.answer = Some(message.clone()),
            StreamResponse::StatusUpdate(update) => {
                let meta = update.metadata.as_ref();
                if let Some(outcome) = outcome_of(meta) {
                    self.outcome = Some(outcome);
                }
                match metadata_get(meta, "event") {
                    Some(event) => {
                        if let Ok(event) = serde_json::from_value::<RunEvent>(event.clone())
                            && !matches!(
                                event,
                                RunEvent::Started { .. } | RunEvent::Finished { .. }
                            )
                        {
                            out.push(event);
                        }
                    }
                    None if !update.status.state.is_terminal() => {
                        if let Some(message) = &update.status.message {
                            let text = message.joined_text();
                            if !text.is_empty() {
                                out.push(RunEvent::progress(text));
                            }
                        }
                    }
                    None => {}
                }
            }
            StreamResponse::ArtifactUpdate(update) => {
                // A `subagent serve`'s result artifact repeats what its events said.
                let text = joined_text(&update.artifact.parts);
                if !self.ours && !text.is_empty() {
                    out.push(RunEvent::Text {
                        text,
                        parent_tool_use_id: None,
                    });
                }
            }
        }
        apply(&mut self.task, event);
        // The run needs the task's state, its last status and its artifacts, never its
        // history: an agent that streams status messages for ever does not grow the run.
        self.task.history = Vec::new();
        out
    }

    /// The outcome of the ended task; `provider` names this run's provider in its session,
    /// which is the remote task (continued by sending it a message) when the remote run can be
    /// resumed.
    pub fn outcome(&self, provider: &str) -> Outcome {
        if let Some(outcome) = self
            .outcome
            .clone()
            .or_else(|| outcome_of(self.task.metadata.as_ref()))
        {
            let mut outcome = outcome;
            outcome.session = outcome.session.map(|_| SessionRef {
                provider: provider.to_owned(),
                id: self.task.id.clone(),
                cwd: None,
                transcript: None,
            });
            outcome.worktree = None;
            outcome.usage.duration_ms = 0;
            return outcome;
        }
        if let Some(message) = &self.answer {
            return Outcome::completed(message.joined_text());
        }
        let status = &self.task.status;
        let said = status
            .message
            .as_ref()
            .map(Message::joined_text)
            .unwrap_or_default();
        // An artifact's text parts are its chunks (appended as they streamed): one text.
        let text = self
            .task
            .artifacts
            .iter()
            .map(|artifact| {
                artifact
                    .parts
                    .iter()
                    .filter_map(|part| part.text.as_deref())
                    .collect::<String>()
            })
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        let structured = self
            .task
            .artifacts
            .iter()
            .flat_map(|artifact| &artifact.parts)
            .find_map(|part| part.data.clone())
            .map(crate::integral_numbers);
        let mut outcome = match status.state {
            TaskState::Completed => Outcome::completed(if text.is_empty() { said } else { text }),
            TaskState::Canceled => Outcome::cancelled(),
            TaskState::InputRequired | TaskState::AuthRequired => Outcome::with_status(
                StopReason::Failed,
                text,
                Some(format!(
                    "the agent stopped in {} and waits for an answer a delegated run cannot give{}",
                    status.state.as_str(),
                    suffix(&said)
                )),
            ),
            state => Outcome::with_status(
                StopReason::Failed,
                text,
                Some(format!(
                    "the agent ended the task {}{}",
                    state.as_str(),
                    suffix(&said)
                )),
            ),
        };
        if status.state == TaskState::Completed {
            outcome.structured = structured;
            if self.context_sessions && !self.task.context_id.is_empty() {
                outcome.session = Some(SessionRef {
                    provider: provider.to_owned(),
                    id: self.task.context_id.clone(),
                    cwd: None,
                    transcript: None,
                });
            }
        }
        outcome
    }
}

fn suffix(said: &str) -> String {
    if said.is_empty() {
        String::new()
    } else {
        format!(": {said}")
    }
}

fn outcome_of(metadata: Option<&crate::types::Metadata>) -> Option<Outcome> {
    let value: &Value = metadata_get(metadata, "outcome")?;
    serde_json::from_value(value.clone()).ok()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn read(ours: bool, events: serde_json::Value) -> (Vec<RunEvent>, Assembly) {
        let mut assembly = Assembly::new(ours);
        let events: Vec<StreamResponse> = serde_json::from_value(events).unwrap();
        let run_events = events
            .iter()
            .flat_map(|event| assembly.take(event))
            .collect();
        (run_events, assembly)
    }

    fn status(state: &str, text: Option<&str>) -> serde_json::Value {
        let mut status = json!({"state": state});
        if let Some(text) = text {
            status["message"] =
                json!({"messageId": "s", "role": "ROLE_AGENT", "parts": [{"text": text}]});
        }
        json!({"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": status}})
    }

    #[test]
    fn a_plain_agents_interrupted_or_refused_task_fails_saying_why() {
        let task = json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}});
        let (events, asked) = read(
            false,
            json!([
                task,
                status("TASK_STATE_INPUT_REQUIRED", Some("which branch?"))
            ]),
        );
        let question = RunEvent::progress("which branch?".to_owned());
        assert_eq!(
            (events, asked.ended(), asked.read),
            (vec![question], true, 2)
        );
        let outcome = asked.outcome("p");
        assert_eq!(
            (
                outcome.status,
                outcome.diagnostic.as_deref(),
                outcome.session
            ),
            (
                StopReason::Failed,
                Some(
                    "the agent stopped in TASK_STATE_INPUT_REQUIRED and waits for an answer a \
                     delegated run cannot give: which branch?"
                ),
                None
            )
        );
        let (_, rejected) = read(false, json!([task, status("TASK_STATE_REJECTED", None)]));
        assert_eq!(
            rejected.outcome("p").diagnostic.as_deref(),
            Some("the agent ended the task TASK_STATE_REJECTED")
        );
        let (_, canceled) = read(false, json!([task, status("TASK_STATE_CANCELED", None)]));
        assert_eq!(canceled.outcome("p").status, StopReason::Cancelled);
        // A direct answer: a stream of one message.
        let (_, answered) = read(
            false,
            json!([{"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "42"}]}}]),
        );
        assert_eq!(
            (answered.ended(), answered.outcome("p").text.as_str()),
            (true, "42")
        );
    }

    #[test]
    fn status_messages_streamed_for_ever_are_not_kept() {
        let mut assembly = Assembly::new(false);
        let task: StreamResponse = serde_json::from_value(json!({"task": {"id": "t1",
            "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"},
            "history": [{"messageId": "h", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]}}))
        .unwrap();
        assembly.take(&task);
        let working: StreamResponse =
            serde_json::from_value(status("TASK_STATE_WORKING", Some("tick"))).unwrap();
        for _ in 0..1000 {
            assert_eq!(
                assembly.take(&working),
                [RunEvent::progress("tick".to_owned())]
            );
        }
        assert_eq!((assembly.task.history.len(), assembly.read), (0, 1001));
    }

    #[test]
    fn a_serve_peers_events_pass_through_and_its_outcome_names_the_remote_task() {
        let event = |event: serde_json::Value| {
            json!({"statusUpdate": {"taskId": "t1", "contextId": "c1",
                "status": {"state": "TASK_STATE_WORKING"},
                "metadata": {crate::EXTENSION_URI: {"event": event}}}})
        };
        let outcome = json!({"status": "completed", "text": "done", "usage": {},
            "session": {"provider": "spawn", "id": "s1"}});
        let (events, assembly) = read(
            true,
            json!([
                {"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}},
                event(json!({"type": "started", "run_id": "00000000-0000-0000-0000-000000000001", "provider": "spawn", "description": "d"})),
                event(json!({"type": "text", "text": "done"})),
                {"artifactUpdate": {"taskId": "t1", "contextId": "c1",
                    "artifact": {"artifactId": "result", "parts": [{"text": "done"}]}}},
                {"statusUpdate": {"taskId": "t1", "contextId": "c1",
                    "status": {"state": "TASK_STATE_COMPLETED"},
                    "metadata": {crate::EXTENSION_URI: {"outcome": outcome}}}},
            ]),
        );
        assert_eq!(
            events,
            [RunEvent::Text {
                text: "done".to_owned(),
                parent_tool_use_id: None
            }]
        );
        let outcome = assembly.outcome("remote");
        assert_eq!(
            (outcome.status, outcome.text.as_str(), outcome.session),
            (
                StopReason::Completed,
                "done",
                Some(SessionRef {
                    provider: "remote".to_owned(),
                    id: "t1".to_owned(),
                    cwd: None,
                    transcript: None
                })
            )
        );
    }
}
