//! Driving one `codex exec` child through `subagent-process`: spawn, read its JSONL, watch the
//! progress timers, stop it, and turn what happened into an [`Outcome`].
//!
//! Stopping: the process owner sends SIGTERM to codex's process group (codex then ends the
//! sandboxed command it runs, which lives in a session of its own), waits the grace period, and
//! SIGKILLs the whole tree, descendants outside the group included.
//!
//! Timers: codex retries a refused connection forever, printing an `error` event
//! "Reconnecting..." every few seconds, so silence on stdout is not the signal. This module
//! keeps two timers of its own: *idle* (no progress event at all; reconnect messages do not
//! count) and *reconnect* (reconnecting for that long without other progress).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use subagent_core::{Outcome, RunSender, SessionRef, StopReason};
use subagent_process::{Process, ProcessSpec, Secrets, Signal, StopCause, StopPolicy};
use tokio::time::Instant;

use crate::command::CodexCommand;
use crate::events::{Activity, StreamState};

/// Everything a run needs besides the process.
#[derive(Debug)]
pub(crate) struct RunPlan {
    /// The provider's name (for the session reference).
    pub provider: String,
    /// The command line.
    pub command: CodexCommand,
    /// The requested output schema and the file codex reads it from (deleted when the run ends).
    pub schema: Option<(Value, tempfile::TempPath)>,
    /// Whether codex keeps no rollout (then nothing can be resumed).
    pub ephemeral: bool,
    /// Overall limit.
    pub timeout: Option<Duration>,
    /// No-progress limit.
    pub idle_timeout: Duration,
    /// Reconnecting-without-progress limit.
    pub reconnect_timeout: Duration,
    /// SIGTERM → SIGKILL grace.
    pub grace: Duration,
    /// Withheld from the child, redacted from its output.
    pub secrets: Secrets,
}

/// Starts the child. Fails only before it exists.
pub(crate) fn spawn(
    plan: &RunPlan,
    cancel: subagent_core::CancellationToken,
) -> crate::Result<Process> {
    let command = &plan.command;
    let mut spec = ProcessSpec::new(&command.program, &command.cwd)
        .args(command.args.iter().cloned())
        .stop_policy(StopPolicy::new(Signal::Terminate).grace(plan.grace))
        .overall_timeout(plan.timeout)
        .withhold(plan.secrets.clone())
        .cancel(cancel);
    for name in &command.pass_env {
        spec = spec.pass_env(name);
    }
    spec = spec.envs(command.env.iter().cloned());
    Ok(spec.spawn()?)
}

/// Why this module (not the process owner) stopped the child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OwnStop {
    /// No progress for the idle timeout.
    Idle(Duration),
    /// Reconnecting for the reconnect timeout.
    Reconnect(Duration),
}

/// How the child ended, as far as the outcome cares.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ended {
    /// The exit code, if it exited.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Why the process owner stopped it.
    pub stopped: Option<StopCause>,
    /// Why we stopped it.
    pub own_stop: Option<OwnStop>,
    /// An error reading its output.
    pub read_error: Option<String>,
    /// The end of its stderr.
    pub stderr_tail: String,
}

/// Reads the child to its end, then delivers the outcome.
/// `admitted` is the child's room among its row's starting children: let go at its first
/// output line (codex has started its thread) or at its end.
pub(crate) async fn drive(
    mut process: Process,
    sender: RunSender,
    plan: RunPlan,
    mut admitted: Option<subagent_process::admission::Admitted>,
) {
    let mut state = StreamState::default();
    let mut events = Vec::new();
    let mut last_progress = Instant::now();
    let mut reconnecting_since: Option<Instant> = None;
    let mut own_stop = None;
    let mut read_error = None;
    loop {
        let idle_at = last_progress + plan.idle_timeout;
        let reconnect_at = reconnecting_since.map(|since| since + plan.reconnect_timeout);
        let (deadline, why) = match reconnect_at {
            Some(at) if at < idle_at => (at, OwnStop::Reconnect(plan.reconnect_timeout)),
            _ => (idle_at, OwnStop::Idle(plan.idle_timeout)),
        };
        tokio::select! {
            line = process.next_line() => match line {
                Ok(Some(line)) => {
                    admitted.take();
                    // Redacted before parsing: every event and the outcome come from these lines.
                    match state.line(&plan.secrets.redact(&line), &mut events) {
                        Activity::Progress => {
                            last_progress = Instant::now();
                            reconnecting_since = None;
                        }
                        Activity::Reconnecting => {
                            reconnecting_since.get_or_insert_with(Instant::now);
                        }
                    }
                    for event in events.drain(..) {
                        sender.emit(event);
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    read_error = Some(error.to_string());
                    break;
                }
            },
            () = tokio::time::sleep_until(deadline), if own_stop.is_none() => {
                tracing::debug!(?why, "codex made no progress; stopping it");
                own_stop = Some(why);
                process.stop();
            }
        }
    }
    let ended = match process.wait().await {
        Ok(exit) => Ended {
            code: exit.code(),
            signal: exit.signal(),
            stopped: exit.stopped,
            own_stop,
            read_error,
            // The diagnostic quotes stderr.
            stderr_tail: plan.secrets.redact(&exit.stderr_tail).into_owned(),
        },
        Err(error) => Ended {
            own_stop,
            read_error: Some(read_error.unwrap_or_else(|| error.to_string())),
            ..Ended::default()
        },
    };
    let cancelled = sender.is_cancelled();
    let schema = plan.schema.as_ref().map(|(schema, _)| schema);
    let mut outcome = decide(&state, &ended, cancelled, schema);
    if let Some(thread) = &state.thread_id
        && !plan.ephemeral
    {
        outcome.session = Some(SessionRef {
            provider: plan.provider.clone(),
            id: thread.clone(),
            cwd: Some(PathBuf::from(&plan.command.cwd)),
            transcript: None,
        });
    }
    // The schema file goes when the plan does, after the child is gone.
    drop(plan);
    sender.finish(outcome);
}

/// Lines of codex's stderr that never explain a failure.
const STDERR_NOISE: &[&str] = &[
    "Reading additional input from stdin",
    "WARNING: proceeding, even though we could not create PATH aliases",
    "warning: Untrusted project-local configuration",
];

/// The part of codex's stderr that explains a failure: its `Error:` line when there is one
/// (the backtrace after it is dropped), else the last meaningful lines.
pub(crate) fn stderr_reason(tail: &str) -> Option<String> {
    if let Some(line) = tail.lines().rev().find(|l| l.starts_with("Error:")) {
        return Some(line.trim_start_matches("Error:").trim().to_owned());
    }
    let lines: Vec<&str> = tail
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !STDERR_NOISE.iter().any(|n| l.starts_with(n)))
        .collect();
    let start = lines.len().saturating_sub(5);
    let text = lines[start..].join("\n");
    (!text.is_empty()).then_some(text)
}

fn exit_text(ended: &Ended) -> String {
    match (ended.code, ended.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "an unknown status".to_owned(),
    }
}

/// Turns the stream's facts and the exit into the outcome (without the session reference).
pub(crate) fn decide(
    state: &StreamState,
    ended: &Ended,
    cancelled: bool,
    schema: Option<&Value>,
) -> Outcome {
    let text = state.last_message.clone().unwrap_or_default();
    let failed = |diagnostic: String| {
        let mut outcome = Outcome::with_status(StopReason::Failed, text.clone(), Some(diagnostic));
        outcome.usage = state.usage;
        outcome
    };
    let last_error = || {
        state
            .last_error
            .as_ref()
            .map(|e| format!(" (codex's last error: {e})"))
            .unwrap_or_default()
    };
    if let Some(stop) = ended.own_stop {
        return failed(match stop {
            OwnStop::Reconnect(limit) => format!(
                "codex could not reach the model server for {} s and was stopped{}",
                limit.as_secs_f64(),
                last_error()
            ),
            OwnStop::Idle(limit) => format!(
                "codex made no progress for {} s and was stopped{}",
                limit.as_secs_f64(),
                last_error()
            ),
        });
    }
    // The turn completed before the cancel landed: the run had ended, only codex's exit was
    // still under way (and its status is then our signal's, not codex's verdict).
    let completed_first = ended.stopped == Some(StopCause::Cancelled)
        && state.turn_completed
        && state.turn_failed.is_none();
    match ended.stopped {
        Some(StopCause::Cancelled) if !completed_first => {
            let mut outcome = Outcome::cancelled();
            outcome.text = text;
            outcome.usage = state.usage;
            return outcome;
        }
        Some(cause @ (StopCause::OverallTimeout | StopCause::LineTooLong | StopCause::Io)) => {
            let detail = ended
                .read_error
                .as_ref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            return failed(format!("codex was stopped: {}{detail}", cause.describe()));
        }
        _ => {}
    }
    if cancelled && !state.turn_completed {
        let mut outcome = Outcome::cancelled();
        outcome.text = text;
        outcome.usage = state.usage;
        return outcome;
    }
    if let Some(message) = &state.turn_failed {
        return failed(message.clone());
    }
    let clean_exit = (ended.code == Some(0) || completed_first) && ended.read_error.is_none();
    if !(state.turn_completed && clean_exit) {
        let reason = stderr_reason(&ended.stderr_tail)
            .or_else(|| ended.read_error.clone())
            .or_else(|| state.last_error.clone())
            .or_else(|| state.stray_lines.last().cloned())
            .unwrap_or_else(|| "no error message".to_owned());
        let what = if state.turn_completed {
            "codex finished its turn but exited with"
        } else {
            "codex exited without finishing its turn, with"
        };
        return failed(format!("{what} {}: {reason}", exit_text(ended)));
    }
    let mut outcome = Outcome::completed(text.clone());
    outcome.usage = state.usage;
    if let Some(schema) = schema {
        match structured(&text, schema) {
            Ok(value) => outcome.structured = Some(value),
            Err(diagnostic) => return failed(diagnostic),
        }
    }
    outcome
}

/// The final answer as the structured output, checked against the schema (one text for every
/// provider: `subagent_schema`).
pub(crate) fn structured(text: &str, schema: &Value) -> Result<Value, String> {
    subagent_schema::OutputSchema::compile(schema)
        .map_err(|error| error.to_string())?
        .check_answer(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn completed_state(text: &str) -> StreamState {
        let mut state = StreamState::default();
        let mut out = Vec::new();
        state.line(
            &json!({"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": text}})
                .to_string(),
            &mut out,
        );
        state.line(r#"{"type":"turn.completed","usage":{}}"#, &mut out);
        state
    }

    fn exited(code: i32) -> Ended {
        Ended {
            code: Some(code),
            ..Ended::default()
        }
    }

    #[test]
    fn completed_with_structured_output() {
        let schema =
            json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}});
        let outcome = decide(
            &completed_state(r#"{"n":3}"#),
            &exited(0),
            false,
            Some(&schema),
        );
        assert_eq!(outcome.status, StopReason::Completed);
        assert_eq!(outcome.structured, Some(json!({"n": 3})));

        let outcome = decide(
            &completed_state(r#"{"n":"x"}"#),
            &exited(0),
            false,
            Some(&schema),
        );
        assert_eq!(outcome.status, StopReason::Failed);
        assert!(
            outcome
                .diagnostic
                .as_deref()
                .unwrap_or_default()
                .contains("does not match"),
            "{outcome:?}"
        );
        let outcome = decide(&completed_state("[1]"), &exited(0), false, Some(&schema));
        assert!(
            outcome
                .diagnostic
                .as_deref()
                .unwrap_or_default()
                .contains("does not match the output schema: at /:")
        );
        let outcome = decide(&completed_state("nope"), &exited(0), false, Some(&schema));
        assert!(
            outcome
                .diagnostic
                .as_deref()
                .unwrap_or_default()
                .contains("the final answer is not a JSON value")
        );
    }

    #[test]
    fn failures() {
        let mut state = StreamState::default();
        let mut out = Vec::new();
        state.line(
            r#"{"type":"turn.failed","error":{"message":"The model `x` does not exist"}}"#,
            &mut out,
        );
        let outcome = decide(&state, &exited(1), false, None);
        assert_eq!(outcome.status, StopReason::Failed);
        assert_eq!(
            outcome.diagnostic.as_deref(),
            Some("The model `x` does not exist")
        );

        let ended = Ended {
            code: Some(1),
            stderr_tail: "Reading additional input from stdin...\nError: thread/resume: no rollout found\n\nStack backtrace:\n   0: <unknown>\n".into(),
            ..Ended::default()
        };
        let outcome = decide(&StreamState::default(), &ended, false, None);
        assert_eq!(
            outcome.diagnostic.as_deref(),
            Some(
                "codex exited without finishing its turn, with exit code 1: thread/resume: no rollout found"
            )
        );
    }

    #[test]
    fn own_stops_and_cancellation() {
        let mut state = StreamState::default();
        let mut out = Vec::new();
        state.line(
            r#"{"type":"error","message":"Reconnecting... waiting for network (Connection failed)"}"#,
            &mut out,
        );
        let ended = Ended {
            signal: Some(15),
            own_stop: Some(OwnStop::Reconnect(Duration::from_secs(2))),
            ..Ended::default()
        };
        let outcome = decide(&state, &ended, false, None);
        assert_eq!(
            outcome.diagnostic.as_deref(),
            Some(
                "codex could not reach the model server for 2 s and was stopped (codex's last error: Reconnecting... waiting for network (Connection failed))"
            )
        );
        let ended = Ended {
            signal: Some(15),
            stopped: Some(StopCause::Cancelled),
            ..Ended::default()
        };
        assert_eq!(
            decide(&state, &ended, true, None).status,
            StopReason::Cancelled
        );
        // A turn that completed before the cancel landed stays completed.
        assert_eq!(
            decide(&completed_state("done"), &exited(0), true, None).status,
            StopReason::Completed
        );
    }
}
