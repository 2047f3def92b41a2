//! The offline scripted model: answers from a scenario file, in-process, deterministically.

use std::collections::VecDeque;
use std::path::PathBuf;

use async_trait::async_trait;
use subagent_session::StopReason;
use tokio_util::sync::CancellationToken;

use crate::answer::limit_answer;
use crate::config::DEFAULT_MAX_ANSWER_BYTES;
use crate::error::{Error, Result};
use crate::scenario::{Action, Gates, Piece, Plan, Repeater, Scenarios, SelectError, StepStop};
use crate::types::{Model, ModelEvent, ModelRequest, ModelStream};

/// A model that replays scenario steps without any network. Tool call ids are
/// `toolu_fake_<messages>_<n>` unless the scenario names them.
#[derive(Debug)]
pub struct ScriptedModel {
    model: String,
    scenarios: Scenarios,
    gates: Gates,
    origin: Origin,
    max_answer_bytes: u64,
}

/// Where the scenarios came from: what the error for a conversation they have no answer for
/// names.
#[derive(Debug)]
enum Origin {
    /// Given as a value.
    Given,
    /// A scenario file.
    File(PathBuf),
    /// The built-in offline demo.
    Demo,
}

/// The error for a conversation the offline demo has no answer for: the user did not write the
/// scenario, so its internals (names, steps) would mean nothing to them.
const DEMO_HAS_NO_ANSWER: &str = "the offline scripted model has no answer for this turn: it \
plays a fixed demo (say hello, delegate a hello) and cannot follow other instructions, such as an \
output schema. Set ANTHROPIC_API_KEY or OPENAI_API_KEY to use a real model.";

impl ScriptedModel {
    /// A scripted model named `model` (echoed in diagnostics only).
    pub fn new(model: impl Into<String>, scenarios: Scenarios) -> Self {
        Self {
            model: model.into(),
            scenarios,
            gates: Gates::default(),
            origin: Origin::Given,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
        }
    }

    /// Bounds each answer to `max_bytes` of text, thinking and tool calls (default
    /// [`DEFAULT_MAX_ANSWER_BYTES`]; see [`limit_answer`]).
    #[must_use]
    pub fn with_max_answer_bytes(mut self, max_bytes: u64) -> Self {
        self.max_answer_bytes = max_bytes;
        self
    }

    /// The built-in offline demo ([`crate::scenario::OFFLINE_DEMO`]), named `model`. When the
    /// demo has no answer, the error tells the user to set a key rather than what the scenario
    /// lacks.
    pub fn offline_demo(model: impl Into<String>) -> Result<Self> {
        let mut scripted = Self::new(model, Scenarios::offline_demo()?);
        scripted.origin = Origin::Demo;
        Ok(scripted)
    }

    /// Names the file the scenarios were read from, in the error for a conversation they have
    /// no answer for.
    #[must_use]
    pub fn with_scenario_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.origin = Origin::File(path.into());
        self
    }

    /// The error for a conversation the scenarios have no answer for.
    fn unscripted(&self, error: &SelectError) -> Error {
        let detail = error.to_string();
        // The fake server's prefix: this is no server.
        let detail = detail.strip_prefix("fake model: ").unwrap_or(&detail);
        let message = match &self.origin {
            Origin::Demo => DEMO_HAS_NO_ANSWER.to_owned(),
            Origin::File(path) => {
                format!(
                    "the scripted model has no answer in {}: {detail}",
                    path.display()
                )
            }
            Origin::Given => format!("the scripted model has no answer: {detail}"),
        };
        Error::Unscripted { message }
    }

    /// The gates `wait_gate` steps wait on.
    pub fn gates(&self) -> &Gates {
        &self.gates
    }
}

/// Waits out a pause, a gate or keep-alives (nothing to stream in-process: only their time
/// passes; keep-alives without end wait until cancelled).
async fn pause(action: &Action, gates: &Gates, cancel: &CancellationToken) -> Result<()> {
    let wait = async {
        match action {
            Action::Sleep(d) => tokio::time::sleep(*d).await,
            Action::WaitGate(name) => gates.gate(name).wait().await,
            Action::KeepAlive {
                every,
                count: Some(n),
                ..
            } => {
                let n = u32::try_from(*n).unwrap_or(u32::MAX);
                tokio::time::sleep(every.saturating_mul(n)).await;
            }
            Action::KeepAlive { count: None, .. } => std::future::pending().await,
            _ => {}
        }
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Error::Cancelled),
        () = wait => Ok(()),
    }
}

/// The events of one planned action (tool calls expand to start, fragments, end).
pub(crate) fn action_events(action: Action, call_index: &mut usize, out: &mut Vec<ModelEvent>) {
    match action {
        Action::Thinking(text) => out.push(ModelEvent::ThinkingDelta { text }),
        Action::Text(text) => out.push(ModelEvent::TextDelta { text }),
        Action::ToolCall(call) => {
            let index = *call_index;
            *call_index += 1;
            let id = if call.explicit_id {
                call.id
            } else {
                format!("toolu_{}", call.id)
            };
            out.push(ModelEvent::ToolCallStart {
                index,
                id: id.clone(),
                name: call.name.clone(),
            });
            for fragment in call.fragments {
                out.push(ModelEvent::ToolCallDelta { index, fragment });
            }
            out.push(ModelEvent::ToolCallEnd {
                index,
                id,
                name: call.name,
                input: call.input,
            });
        }
        _ => {}
    }
}

struct Replay {
    actions: VecDeque<Action>,
    pending: VecDeque<Result<ModelEvent>>,
    plan: Plan,
    gates: Gates,
    cancel: CancellationToken,
    calls: usize,
    ended: bool,
    /// The generated text being streamed (`repeat`), one piece a step.
    repeating: Option<Repeater>,
}

impl Replay {
    async fn step(&mut self) {
        if let Some(repeater) = &mut self.repeating {
            if self.cancel.is_cancelled() {
                self.ended = true;
                self.pending.push_back(Err(Error::Cancelled));
                return;
            }
            let text = match repeater.next_piece() {
                Some(Piece::Whole) => repeater.block().to_owned(),
                Some(Piece::Part(part)) => part.to_owned(),
                None => {
                    self.repeating = None;
                    return;
                }
            };
            self.pending.push_back(Ok(ModelEvent::TextDelta { text }));
            return;
        }
        let Some(action) = self.actions.pop_front() else {
            self.ended = true;
            self.pending.push_back(Ok(ModelEvent::Usage {
                usage: self.plan.usage,
            }));
            self.pending.push_back(Ok(ModelEvent::Stop {
                reason: match self.plan.stop {
                    StepStop::EndTurn => StopReason::Completed,
                    StepStop::MaxTokens => StopReason::MaxTokens,
                    StepStop::Refusal => StopReason::Refused,
                },
            }));
            return;
        };
        if self.cancel.is_cancelled() {
            self.ended = true;
            self.pending.push_back(Err(Error::Cancelled));
            return;
        }
        match action {
            Action::Sleep(_) | Action::WaitGate(_) | Action::KeepAlive { .. } => {
                if let Err(e) = pause(&action, &self.gates, &self.cancel).await {
                    self.ended = true;
                    self.pending.push_back(Err(e));
                }
            }
            Action::Repeat { text, bytes } => {
                self.repeating = Some(Repeater::new(&text, bytes));
            }
            Action::Disconnect => {
                self.ended = true;
                self.pending.push_back(Err(Error::network(
                    "the scripted stream was cut before the answer was complete",
                )));
            }
            Action::StreamError(spec) => {
                self.ended = true;
                self.pending
                    .push_back(Err(Error::from_server(0, &spec.kind, spec.message, None)));
            }
            other => {
                let mut out = Vec::new();
                action_events(other, &mut self.calls, &mut out);
                self.pending.extend(out.into_iter().map(Ok));
            }
        }
    }
}

#[async_trait]
impl Model for ScriptedModel {
    fn describe(&self) -> String {
        format!("scripted:{} (offline)", self.model)
    }

    async fn stream(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> Result<ModelStream> {
        let plan = self
            .scenarios
            .plan(&request.messages)
            .map_err(|e| self.unscripted(&e))?;
        for action in &plan.before {
            pause(action, &self.gates, &cancel).await?;
        }
        if let Some(error) = &plan.http_error {
            return Err(Error::from_server(
                error.status,
                &error.kind,
                error.message.clone(),
                error.retry_after.and_then(crate::http::bounded_wait),
            ));
        }
        let replay = Replay {
            actions: plan.opening.iter().chain(&plan.actions).cloned().collect(),
            pending: VecDeque::new(),
            plan,
            gates: self.gates.clone(),
            cancel,
            calls: 0,
            ended: false,
            repeating: None,
        };
        let events: ModelStream = Box::pin(futures::stream::unfold(replay, |mut r| async move {
            loop {
                if let Some(item) = r.pending.pop_front() {
                    return Some((item, r));
                }
                if r.ended {
                    return None;
                }
                r.step().await;
            }
        }));
        Ok(limit_answer(events, self.max_answer_bytes))
    }
}
