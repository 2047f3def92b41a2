//! The end of an answer: a structured output checked, background tasks and outside input
//! waited for, the `Stop` hooks asked; the run either goes on with a new message or ends.

use std::sync::{Arc, PoisonError};

use subagent_core::{CancellationToken, Outcome, StopReason};
use subagent_session::{ContentBlock, Message, Role};

use super::{Agent, Next, State, tool_hooks};
use crate::env::RunEnv;
use crate::structured::ENFORCE_PREFIX;

impl Agent {
    pub(super) async fn after_answer(
        &self,
        state: &mut State,
        env: &Arc<RunEnv>,
        cancel: &CancellationToken,
    ) -> Next {
        let mut structured = None;
        if let Some(validator) = &self.final_validator {
            match validator.check_answer(&state.text) {
                Ok(value) => structured = Some(value),
                Err(problem) => return self.retry(state, &problem),
            }
        }
        if let Some(capture) = &self.capture {
            let captured = capture
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .value
                .is_some();
            if !captured {
                return self.retry(
                    state,
                    "you ended your answer without calling the structured_output tool",
                );
            }
        }
        // While outside input may still come (a team at work), the run waits for it as for its
        // background tasks — unless its host keeps them beyond the run: then what has ended is
        // told now and what still runs is not waited for.
        let mut open = self.config.input.is_some();
        let waits = self.config.tasks.is_none();
        loop {
            let mut next = env.tasks.take_finished();
            if next.is_empty() && !open && waits {
                // One look under the table's lock at both "finished" and "running": a task that
                // finishes between two separate looks would otherwise be neither waited for nor
                // delivered. `next_finished` returns at once when nothing is running.
                let waited = tokio::select! {
                    biased;
                    () = cancel.cancelled() => return Next::Done(Box::new(Outcome::cancelled())),
                    next = env.tasks.next_finished() => next,
                };
                next.extend(waited);
            }
            let mut blocks: Vec<ContentBlock> = next
                .iter()
                .map(|n| ContentBlock::text(self.notification_text(env, n)))
                .collect();
            if let Some(input) = &self.config.input {
                blocks.extend(input.take());
            }
            if !blocks.is_empty() {
                return Next::Continue(Message::new(Role::User, blocks));
            }
            if !open {
                break;
            }
            let running = waits && env.tasks.running() > 0;
            let finished = tokio::select! {
                biased;
                () = cancel.cancelled() => return Next::Done(Box::new(Outcome::cancelled())),
                Some(finished) = env.tasks.next_finished(), if running => Some(finished),
                more = async {
                    match &self.config.input {
                        Some(input) => input.wait().await,
                        None => false,
                    }
                } => {
                    open = more;
                    None
                }
            };
            if let Some(finished) = finished {
                let text = self.notification_text(env, &finished);
                return Next::Continue(Message::new(Role::User, vec![ContentBlock::text(text)]));
            }
        }
        // The settings' `Stop` hooks may keep the run going: their text is its next message.
        if let Some(text) = tool_hooks::stop(env, &state.text, state.stop_hook_active, cancel).await
        {
            state.stop_hook_active = true;
            return Next::Continue(Message::new(Role::User, vec![ContentBlock::text(text)]));
        }
        let mut outcome = self.end(state, StopReason::Completed, None);
        outcome.structured = structured;
        Next::Done(Box::new(outcome))
    }

    fn retry(&self, state: &mut State, problem: &str) -> Next {
        if state.retries_used >= self.config.structured_retries {
            return Next::Done(Box::new(self.end(
                state,
                StopReason::Failed,
                Some(format!(
                    "no valid structured output after {} retries: {problem}",
                    state.retries_used
                )),
            )));
        }
        state.retries_used += 1;
        let ask = match self.capture {
            Some(_) => "Call the structured_output tool now with your final result.",
            None => "Answer again with only a JSON value valid against the schema.",
        };
        Next::Continue(Message::user(format!(
            "{ENFORCE_PREFIX} Your final answer is not accepted: {problem}\n{ask}"
        )))
    }
}
