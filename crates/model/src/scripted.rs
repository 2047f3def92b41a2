//! The offline scripted model: answers from a scenario file, in-process, deterministically.

use std::collections::VecDeque;

use async_trait::async_trait;
use subagent_session::StopReason;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::scenario::{Action, Gates, Plan, Scenarios, StepStop};
use crate::types::{Model, ModelEvent, ModelRequest, ModelStream};

/// A model that replays scenario steps without any network. Tool call ids are
/// `toolu_fake_<messages>_<n>` unless the scenario names them.
#[derive(Debug)]
pub struct ScriptedModel {
    model: String,
    scenarios: Scenarios,
    gates: Gates,
}

impl ScriptedModel {
    /// A scripted model named `model` (echoed in diagnostics only).
    pub fn new(model: impl Into<String>, scenarios: Scenarios) -> Self {
        Self {
            model: model.into(),
            scenarios,
            gates: Gates::default(),
        }
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
}

impl Replay {
    async fn step(&mut self) {
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
            .map_err(|e| Error::BadRequest {
                status: 400,
                message: e.to_string(),
            })?;
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
        };
        Ok(Box::pin(futures::stream::unfold(
            replay,
            |mut r| async move {
                loop {
                    if let Some(item) = r.pending.pop_front() {
                        return Some((item, r));
                    }
                    if r.ended {
                        return None;
                    }
                    r.step().await;
                }
            },
        )))
    }
}
