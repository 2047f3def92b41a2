//! Driving one `claude` child: spawn it through `subagent-process`, feed the prompt on stdin,
//! turn its stream into events, and its end into an [`Outcome`]. A child that asks its parent
//! (the request carries an asker) gets the prompt as a stream-json message and keeps stdin open:
//! each `can_use_tool` question goes to the asker, its answer back on stdin, until the
//! `result` (then EOF) or the child's end.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use subagent_core::{Asker, CancellationToken, Outcome, RunSender, SessionRef, StopReason};
use subagent_process::{
    Exit, Process, ProcessSpec, Secrets, Signal, SignalTarget, StdinMode, StopCause, StopPolicy,
};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use crate::Result;
use crate::command::Invocation;
use crate::control;
use crate::events::StreamState;

/// What `drive` needs besides the process.
#[derive(Clone, Debug)]
pub(crate) struct RunPlan {
    pub provider: String,
    pub invocation: Invocation,
    pub schema: Option<Value>,
    pub timeout: Option<Duration>,
    pub idle_timeout: Option<Duration>,
    pub grace: Duration,
    /// Withheld from the child, redacted from its output.
    pub secrets: Secrets,
    /// Who answers the child's permission questions; `None`: the child never asks (the prompt
    /// goes on stdin as text, then EOF).
    pub asker: Option<Asker>,
    /// Files the child reads (its `--mcp-config`), removed when the run is over.
    pub _files: Vec<std::sync::Arc<tempfile::TempPath>>,
}

/// Starts the child: stdin a pipe (the prompt, then EOF), SIGINT to the child alone to stop it
/// (claude then ends its tools and reports `error_during_execution`), then SIGKILL to the tree.
pub(crate) fn spawn(plan: &RunPlan, cancel: CancellationToken) -> Result<Process> {
    let invocation = &plan.invocation;
    let mut spec = ProcessSpec::new(&invocation.program, &invocation.cwd)
        .args(&invocation.args)
        .envs(invocation.env.iter().cloned())
        .stdin(StdinMode::Piped)
        .stop_policy(
            StopPolicy::new(Signal::Interrupt)
                .target(SignalTarget::Leader)
                .grace(plan.grace),
        )
        .overall_timeout(plan.timeout)
        .idle_timeout(plan.idle_timeout)
        .withhold(plan.secrets.clone())
        .cancel(cancel);
    for name in &invocation.pass_env {
        spec = spec.pass_env(name);
    }
    Ok(spec.spawn()?)
}

/// Runs the child to its end and finishes the run.
/// `admitted` is the child's room among its row's starting children: let go at its first
/// output line (claude has started: its first model request follows) or at its end.
pub(crate) async fn drive(
    mut process: Process,
    sender: RunSender,
    plan: RunPlan,
    mut admitted: Option<subagent_process::admission::Admitted>,
) {
    let stdin = process.take_stdin();
    // Lines for a child that asks: answers, until the `result` closes the channel (and stdin).
    let mut lines = None;
    if let Some(mut stdin) = stdin {
        let prompt = plan.invocation.prompt.clone();
        if plan.asker.is_some() {
            let (tx, mut rx) = mpsc::unbounded_channel::<String>();
            lines = Some(tx);
            tokio::spawn(async move {
                // No `initialize` first: the pinned claude answers without one.
                let mut first = control::user_message(&prompt);
                first.push('\n');
                // A child that dies early closes the pipe: its exit tells the story.
                if stdin.write_all(first.as_bytes()).await.is_ok() {
                    while let Some(mut line) = rx.recv().await {
                        line.push('\n');
                        if stdin.write_all(line.as_bytes()).await.is_err() {
                            break;
                        }
                    }
                }
                let _ = stdin.shutdown().await;
            });
        } else {
            tokio::spawn(async move {
                // A child that dies early closes the pipe: its exit tells the story, not this error.
                let _ = stdin.write_all(prompt.as_bytes()).await;
                let _ = stdin.shutdown().await;
            });
        }
    }
    let mut questions = Questions::default();
    let mut state = StreamState::default();
    let mut read_error = None;
    loop {
        match process.next_line().await {
            Ok(Some(line)) => {
                admitted.take();
                if let (Some(tx), Some(asker)) = (&lines, &plan.asker)
                    && let Some(request) = control::parse(&line, &plan.invocation.cwd)
                {
                    answer(request, asker, tx, sender.cancel_token(), &mut questions);
                    continue;
                }
                // Redacted before parsing: every event and the outcome come from these lines.
                for event in state.on_line(&plan.secrets.redact(&line)) {
                    sender.emit(event);
                }
                if state.result.is_some() && lines.is_some() {
                    // The turn is over: EOF lets claude exit.
                    questions.abort_all();
                    lines = None;
                }
                questions.reap();
            }
            Ok(None) => break,
            Err(error) => {
                read_error = Some(error.to_string());
                break;
            }
        }
    }
    // A question still with the asker when the child ended has no one to answer.
    questions.abort_all();
    drop(lines);
    let mut outcome = match process.wait().await {
        Ok(exit) => outcome(&state, &exit, read_error.as_deref(), &plan),
        Err(error) => Outcome::failed(format!("waiting for claude failed: {error}")),
    };
    // The diagnostic quotes stderr.
    outcome.diagnostic = outcome
        .diagnostic
        .map(|text| plan.secrets.redact(&text).into_owned());
    sender.finish(outcome);
}

/// The questions with the asker, by claude's request id.
#[derive(Default)]
struct Questions {
    tasks: JoinSet<()>,
    pending: HashMap<String, AbortHandle>,
}

impl Questions {
    fn abort_all(&mut self) {
        self.tasks.abort_all();
        self.pending.clear();
    }

    /// Forgets the answered ones.
    fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
        self.pending.retain(|_, handle| !handle.is_finished());
    }
}

/// Answers one control request: a question through the asker (beside the reading, so a slow
/// asker never stops the stream; a cancelled run denies it), a cancel by dropping its question
/// (claude no longer waits: nobody is left asking), anything else with an error at once.
fn answer(
    request: control::Request,
    asker: &Asker,
    tx: &mpsc::UnboundedSender<String>,
    cancel: &CancellationToken,
    questions: &mut Questions,
) {
    match request {
        control::Request::Cancel { request_id } => {
            if let Some(handle) = questions.pending.remove(&request_id) {
                handle.abort();
            }
        }
        control::Request::Other {
            request_id,
            subtype,
        } => {
            let _ = tx.send(control::unsupported(&request_id, &subtype));
        }
        control::Request::CanUseTool {
            request_id,
            question,
        } => {
            let (asker, tx, cancel) = (asker.clone(), tx.clone(), cancel.clone());
            let id = request_id.clone();
            let handle = questions.tasks.spawn(async move {
                let input = question.input.clone();
                let answer = tokio::select! {
                    answer = asker.ask(question) => answer,
                    () = cancel.cancelled() => subagent_core::ToolAnswer::Deny {
                        message: "cancelled while waiting for permission".to_owned(),
                    },
                };
                let _ = tx.send(control::answer(&request_id, &answer, &input));
            });
            questions.pending.insert(id, handle);
        }
    }
}

fn exit_text(exit: &Exit) -> String {
    match (exit.code(), exit.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        _ => "an unknown status".to_owned(),
    }
}

fn with_stderr(message: String, exit: &Exit) -> String {
    let tail = exit.stderr_tail.trim();
    if tail.is_empty() {
        message
    } else {
        let hint = if tail.contains("cannot be used with root/sudo privileges") {
            " (as root, bypassPermissions needs IS_SANDBOX=1 in the provider's env)"
        } else {
            ""
        };
        format!("{message}{hint}; stderr: {tail}")
    }
}

/// How the run ended, from what the stream said and how the child exited. Success is a
/// `result` with `is_error` false and exit code 0; anything else carries the CLI's own words.
pub(crate) fn outcome(
    state: &StreamState,
    exit: &Exit,
    read_error: Option<&str>,
    plan: &RunPlan,
) -> Outcome {
    let mut outcome = decide(state, exit, read_error, plan);
    if let Some(result) = &state.result {
        outcome.usage = result.usage;
    } else {
        outcome.usage.tool_uses = state.tool_uses;
    }
    outcome.session = state.session_id.as_ref().map(|id| SessionRef {
        provider: plan.provider.clone(),
        id: id.clone(),
        cwd: Some(plan.invocation.cwd.clone()),
        transcript: None::<PathBuf>,
    });
    outcome
}

fn decide(state: &StreamState, exit: &Exit, read_error: Option<&str>, plan: &RunPlan) -> Outcome {
    let partial = state.last_text.clone();
    // A successful result came before the cancel landed: the run had ended, only the child's
    // exit was still under way (and its status is then our signal's, not claude's verdict).
    let succeeded_first = exit.stopped == Some(StopCause::Cancelled)
        && state
            .result
            .as_ref()
            .is_some_and(|result| !result.is_error && result.subtype == "success");
    match exit.stopped {
        Some(StopCause::Cancelled) if !succeeded_first => {
            let mut outcome = Outcome::cancelled();
            outcome.text = partial;
            return outcome;
        }
        Some(cause @ (StopCause::OverallTimeout | StopCause::IdleTimeout)) => {
            return failed(
                partial,
                with_stderr(format!("claude was stopped: {}", cause.describe()), exit),
            );
        }
        _ => {}
    }
    if let Some(error) = read_error {
        return failed(
            partial,
            with_stderr(format!("reading claude's output failed: {error}"), exit),
        );
    }
    let Some(result) = &state.result else {
        let mut message = format!("claude ended with {} without a result", exit_text(exit));
        if let Some(error) = &state.assistant_error {
            message = format!("{message}: {error}");
        }
        return failed(partial, with_stderr(message, exit));
    };
    let text = result.result.clone().unwrap_or_default();
    let errors = result.errors.join("; ");
    if result.subtype == "error_max_turns" {
        let diagnostic = if errors.is_empty() {
            "claude reached its turn limit".to_owned()
        } else {
            errors
        };
        return Outcome::with_status(StopReason::MaxTurns, partial, Some(diagnostic));
    }
    if result.is_error || result.subtype != "success" {
        let mut message = [text.as_str(), errors.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        if message.is_empty() {
            message = format!("claude reported an error ({})", result.subtype);
        }
        if let Some(status) = result.api_error_status {
            message = format!("{message} (model API status {status})");
        }
        return failed(partial, message);
    }
    if exit.code() != Some(0) && !succeeded_first {
        return failed(
            text,
            with_stderr(
                format!("claude reported success but ended with {}", exit_text(exit)),
                exit,
            ),
        );
    }
    match result.stop_reason.as_deref() {
        Some("refusal") => {
            return Outcome::with_status(
                StopReason::Refused,
                text,
                Some("the model refused".into()),
            );
        }
        Some("max_tokens") => {
            return Outcome::with_status(
                StopReason::MaxTokens,
                text,
                Some("the model reached its output token limit".into()),
            );
        }
        _ => {}
    }
    let Some(schema) = &plan.schema else {
        return Outcome::completed(text);
    };
    let Some(structured) = result.structured_output.clone() else {
        return failed(
            text,
            "the output schema was not honoured: the model answered without calling the \
             StructuredOutput tool"
                .to_owned(),
        );
    };
    if let Err(problem) = subagent_schema::check(schema, &structured) {
        return failed(text, problem.to_string());
    }
    let mut outcome = Outcome::completed(text);
    outcome.structured = Some(structured);
    outcome
}

fn failed(text: String, diagnostic: String) -> Outcome {
    let mut outcome = Outcome::failed(diagnostic);
    outcome.text = text;
    outcome
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn plan(schema: Option<Value>) -> RunPlan {
        RunPlan {
            provider: "cc".into(),
            invocation: Invocation {
                program: "claude".into(),
                args: vec![],
                env: vec![],
                pass_env: vec![],
                cwd: "/tmp/p".into(),
                prompt: "x".into(),
            },
            schema,
            timeout: None,
            idle_timeout: None,
            secrets: Secrets::new(),
            grace: Duration::from_secs(1),
            asker: None,
            _files: Vec::new(),
        }
    }

    fn exit(code: i32, stopped: Option<StopCause>) -> Exit {
        Exit {
            status: std::process::ExitStatus::from_raw(code << 8),
            stopped,
            killed: false,
            stderr_tail: String::new(),
        }
    }

    fn state(lines: &[Value]) -> StreamState {
        let mut state = StreamState::default();
        for line in lines {
            state.on_line(&line.to_string());
        }
        state
    }

    fn result(extra: Value) -> Value {
        let mut base = json!({"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s1"});
        if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
            base.extend(extra.clone());
        }
        base
    }

    /// A question claude cancels is dropped at once: its asker is no longer waited on, and no
    /// answer for it is written.
    #[tokio::test]
    async fn a_cancelled_question_is_dropped() {
        struct Never;
        #[async_trait::async_trait]
        impl subagent_core::ParentAsker for Never {
            async fn ask(&self, _: subagent_core::ToolQuestion) -> subagent_core::ToolAnswer {
                std::future::pending().await
            }
        }
        let asker = Asker(std::sync::Arc::new(Never));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let mut questions = Questions::default();
        let ask = |id: &str| control::Request::CanUseTool {
            request_id: id.to_owned(),
            question: subagent_core::ToolQuestion {
                tool: "Bash".into(),
                input: json!({"command": "ls"}),
                tool_use_id: None,
                cwd: "/".into(),
            },
        };
        answer(ask("q1"), &asker, &tx, &cancel, &mut questions);
        answer(ask("q2"), &asker, &tx, &cancel, &mut questions);
        answer(
            control::Request::Cancel {
                request_id: "q1".into(),
            },
            &asker,
            &tx,
            &cancel,
            &mut questions,
        );
        assert_eq!(
            questions.pending.keys().collect::<Vec<_>>(),
            [&"q2".to_owned()]
        );
        let ended = questions.tasks.join_next().await.unwrap();
        assert!(ended.is_err_and(|error| error.is_cancelled()));
        // q2 is still asking; a cancelled run answers it with a deny.
        cancel.cancel();
        assert!(questions.tasks.join_next().await.unwrap().is_ok());
        let line = rx.recv().await.unwrap();
        assert!(line.contains(r#""request_id":"q2""#), "{line}");
        assert!(
            line.contains("cancelled while waiting for permission"),
            "{line}"
        );
        assert!(rx.try_recv().is_err(), "nothing for q1");
    }

    #[test]
    fn success_needs_is_error_false_and_exit_zero() {
        let s = state(&[result(json!({}))]);
        let o = outcome(&s, &exit(0, None), None, &plan(None));
        assert_eq!((o.status, o.text.as_str()), (StopReason::Completed, "ok"));
        assert_eq!(
            o.session.map(|s| (s.id, s.cwd)),
            Some(("s1".into(), Some("/tmp/p".into())))
        );
        let o = outcome(&s, &exit(1, None), None, &plan(None));
        assert_eq!(o.status, StopReason::Failed);
    }

    #[test]
    fn api_errors_come_as_success_with_is_error() {
        let s = state(&[result(
            json!({"is_error":true,"result":"API Error: 400 fake bad request","api_error_status":400}),
        )]);
        let o = outcome(&s, &exit(1, None), None, &plan(None));
        assert_eq!(o.status, StopReason::Failed);
        assert_eq!(
            o.diagnostic.as_deref(),
            Some("API Error: 400 fake bad request (model API status 400)")
        );
    }

    #[test]
    fn max_turns_and_cancel() {
        let s = state(&[result(
            json!({"subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (1)"]}),
        )]);
        let o = outcome(&s, &exit(1, None), None, &plan(None));
        assert_eq!(
            (o.status, o.diagnostic.as_deref()),
            (
                StopReason::MaxTurns,
                Some("Reached maximum number of turns (1)")
            )
        );
        let s = state(&[result(
            json!({"subtype":"error_during_execution","is_error":true}),
        )]);
        let o = outcome(&s, &exit(1, Some(StopCause::Cancelled)), None, &plan(None));
        assert_eq!(o.status, StopReason::Cancelled);
    }

    #[test]
    fn structured_output_is_required_and_validated() {
        let schema =
            json!({"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]});
        let good = state(&[result(json!({"structured_output":{"n":3}}))]);
        let o = outcome(&good, &exit(0, None), None, &plan(Some(schema.clone())));
        assert_eq!(
            (o.status, o.structured),
            (StopReason::Completed, Some(json!({"n":3})))
        );
        let missing = state(&[result(json!({}))]);
        let o = outcome(&missing, &exit(0, None), None, &plan(Some(schema.clone())));
        assert_eq!(o.status, StopReason::Failed);
        let wrong = state(&[result(json!({"structured_output":{"n":"x"}}))]);
        let o = outcome(&wrong, &exit(0, None), None, &plan(Some(schema)));
        assert_eq!(o.status, StopReason::Failed);
    }

    #[test]
    fn no_result_reports_the_exit_and_stderr() {
        let mut e = exit(1, None);
        e.stderr_tail =
            "Error: --dangerously-skip-permissions cannot be used with root/sudo privileges\n"
                .into();
        let o = outcome(&StreamState::default(), &e, None, &plan(None));
        assert_eq!(o.status, StopReason::Failed);
        let diagnostic = o.diagnostic.unwrap_or_default();
        assert!(
            diagnostic.contains("exit code 1 without a result"),
            "{diagnostic}"
        );
        assert!(diagnostic.contains("IS_SANDBOX=1"), "{diagnostic}");
    }
}
