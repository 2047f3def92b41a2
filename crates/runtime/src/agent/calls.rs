//! Running the tool calls of one model message: in call order for whatever changes things,
//! together for the rest, results back in call order.

use std::borrow::Cow;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::Value;
use subagent_core::{CancellationToken, RunEvent, RunSender};
use subagent_session::ContentBlock;

use super::{Agent, State, tool_hooks};
use crate::delegation::ParentSnapshot;
use crate::env::RunEnv;
use crate::hooks::HookDecision;
use crate::permissions::{Decision, PermissionRequest};
use crate::report::redacted;
use crate::result_cap::{
    DEFAULT_CUT_HINT, DEFAULT_MAX_TOOL_RESULT_BYTES, NOTIFICATION_HINT, cut_result,
};
use crate::tasks::TaskNotification;
use crate::tools::{EventSink, ToolContext, ToolKind, ToolOutput};

/// What the model is told to see the rest of an attached text cut at the run's cap (a skill's
/// body: its `SKILL.md`, whose folder the text names).
const ATTACHED_HINT: &str =
    "read the file it comes from (a skill's SKILL.md) with read_file, a part at a time";

impl Agent {
    pub(super) async fn run_tools(
        &self,
        state: &mut State,
        calls: &mut [(String, String, Value)],
        env: &Arc<RunEnv>,
        cancel: &CancellationToken,
        sender: &RunSender,
    ) -> Vec<ContentBlock> {
        state.usage.tool_uses += calls.len() as u64;
        let snapshot = Arc::new(ParentSnapshot {
            system: self.system.clone(),
            tools: self.config.tools.clone(),
            model: Arc::clone(&self.config.model),
            model_id: self.config.model_id.clone(),
            effort: self.config.effort,
            max_tokens: self.config.max_tokens,
            log: state.log.clone(),
            messages: state.messages.clone(),
            call_id: String::new(),
            env: Arc::clone(env),
        });
        // I/O tools share `tool_concurrency` slots, taken in call order (the semaphore is fair
        // and the calls are first polled in order); delegation calls take none, so N children
        // asked for in one message all start at once.
        let io_slots = tokio::sync::Semaphore::new(self.config.tool_concurrency.max(1));
        // Calls that change things (edits, commands) run alone, in call order: each waits for
        // the calls before it and the calls after it wait for it, so a read sees the edit the
        // model asked for before it. Reads and delegations between two changes run together.
        // tokio's lock queues requests first come, first served, and the calls ask in order.
        let order = tokio::sync::RwLock::new(());
        // Tools report events (a foreground child's, forwarded by the delegation tool) through a
        // channel drained into this run's stream while the calls run.
        let (sink, mut forwarded) = EventSink::channel();
        let mut futures: Vec<futures::future::BoxFuture<'_, ToolOutput>> =
            Vec::with_capacity(calls.len());
        // Each tool takes its input (the message keeps its own copy): no third copy of every
        // call's arguments lives while the calls run.
        let inputs: Vec<Value> = calls
            .iter_mut()
            .map(|(_, _, input)| std::mem::take(input))
            .collect();
        for ((id, name, _), input) in calls.iter().zip(inputs) {
            let context = ToolContext {
                call_id: id.clone(),
                cancel: cancel.clone(),
                env: Arc::clone(env),
                snapshot: Arc::clone(&snapshot),
                events: sink.clone(),
                max_result_bytes: self.result_cap(),
            };
            let kind = self.config.tools.get(name).map(|tool| tool.kind());
            let delegates = kind == Some(ToolKind::Delegate);
            let changes = matches!(kind, Some(ToolKind::Edit | ToolKind::Execute));
            let (io_slots, order) = (&io_slots, &order);
            futures.push(Box::pin(async move {
                let _turn = if changes {
                    (None, Some(order.write().await))
                } else {
                    (Some(order.read().await), None)
                };
                // The semaphore is never closed, so `acquire` only fails if it were; the call
                // then runs unbounded rather than not at all.
                let _slot = if delegates {
                    None
                } else {
                    io_slots.acquire().await.ok()
                };
                self.run_tool(name, input, context).await
            }));
        }
        drop(sink);
        // Results come back in call order whatever order the calls finish in.
        let all = futures::future::join_all(futures);
        let mut all = std::pin::pin!(all);
        let outputs: Vec<ToolOutput> = loop {
            tokio::select! {
                biased;
                Some(event) = forwarded.next() => sender.emit(redacted(&env.secrets, event)),
                outputs = &mut all => break outputs,
            }
        };
        // Whatever was reported before the last call returned comes before the results.
        while let Ok(event) = forwarded.try_recv() {
            sender.emit(redacted(&env.secrets, event));
        }
        // Texts a tool attaches (a loaded skill's body) follow every result, in call order.
        let mut attached: Vec<ContentBlock> = Vec::new();
        let mut results: Vec<ContentBlock> = calls
            .iter()
            .zip(outputs)
            .map(|((id, name, _), mut output)| {
                // Redacted and cut as results are.
                attached.extend(output.attached.drain(..).map(|text| {
                    let text = env.secrets.redact(&text).into_owned();
                    ContentBlock::text(cut_result(text, self.result_cap(), ATTACHED_HINT))
                }));
                if let Cow::Owned(clean) = env.secrets.redact(&output.content) {
                    output.content = clean;
                }
                // Cut after redaction: no cut can split a secret's value into a half that
                // escapes its redaction.
                let hint = self
                    .config
                    .tools
                    .get(name)
                    .map_or(DEFAULT_CUT_HINT, |tool| tool.cut_hint());
                output.content = cut_result(output.content, self.result_cap(), hint);
                sender.emit(RunEvent::ToolResult {
                    id: id.clone(),
                    output: output.content.clone(),
                    is_error: output.is_error,
                    parent_tool_use_id: None,
                });
                ContentBlock::tool_result(id.clone(), output.content, output.is_error)
            })
            .collect();
        results.extend(attached);
        results
    }

    /// The run's cap on a tool result (see [`AgentConfig::max_tool_result_bytes`]).
    ///
    /// [`AgentConfig::max_tool_result_bytes`]: crate::AgentConfig::max_tool_result_bytes
    pub(super) fn result_cap(&self) -> usize {
        self.config
            .max_tool_result_bytes
            .unwrap_or(DEFAULT_MAX_TOOL_RESULT_BYTES)
    }

    /// A `<task-notification>` as the model reads it: secrets redacted, then cut at the run's
    /// cap on a tool result.
    pub(super) fn notification_text(
        &self,
        env: &RunEnv,
        notification: &TaskNotification,
    ) -> String {
        let text = env.secrets.redact(&notification.to_text()).into_owned();
        cut_result(text, self.result_cap(), NOTIFICATION_HINT)
    }

    async fn run_tool(&self, name: &str, input: Value, context: ToolContext) -> ToolOutput {
        let Some(tool) = self.config.tools.get(name) else {
            if self.config.nesting_refused.iter().any(|n| n == name) {
                return crate::delegation::nesting_refusal();
            }
            let mut text = format!(
                "No tool named {name:?} is available. Available tools: {}",
                self.config.tools.names().join(", ")
            );
            // A run held in plan mode is offered only read-only tools: say why, and until when.
            if let Some(note) = context.env.permissions.plan_note() {
                text.push_str(". ");
                text.push_str(&note);
            }
            return ToolOutput::error(text);
        };
        // A background run uses only the background tools, whatever it was given.
        if context.env.background && !crate::tools::background_allows(name, tool.kind()) {
            return crate::tools::background_refusal(name);
        }
        let env = Arc::clone(&context.env);
        let kind = tool.call_kind(&input);
        let request = |input: &Value| {
            let mut subjects = tool.permission_subjects(input, &env.roots).into_iter();
            PermissionRequest {
                tool: name.to_owned(),
                subject: subjects.next(),
                aliases: subjects.collect(),
                input: input.clone(),
                depth: env.depth,
                cwd: Some(env.roots.cwd().to_path_buf()),
            }
        };
        let cancel = context.cancel.clone();
        let policy = &env.permissions;
        // Deny rules (and plan mode) decide before any hook, as in Claude Code; what `dontAsk`
        // refuses only for want of an allow rule, a `PreToolUse` hook may still allow.
        let hooks = tool_hooks::runner(&env);
        let mut decision = policy.decide(&request(&input), kind);
        if decision == Decision::Deny
            && (hooks.is_none() || policy.refuses_before_hooks(&request(&input), kind))
        {
            return ToolOutput::error(policy.refusal(name, kind));
        }
        let mut input = input;
        let mut context_notes = Vec::new();
        if let Some(hooks) = &hooks {
            match tool_hooks::before(hooks, &env, name, &context.call_id, input, &cancel).await {
                tool_hooks::Before::Refused(text) => return ToolOutput::error(text),
                tool_hooks::Before::Proceed {
                    input: given,
                    permission,
                    context,
                } => {
                    input = given;
                    context_notes = context;
                    match permission {
                        Some(HookDecision::Allow) => decision = Decision::Allow,
                        Some(HookDecision::Ask) => decision = Decision::Ask,
                        // A rewritten input is decided again by the rules.
                        _ => decision = policy.decide(&request(&input), kind),
                    }
                    if decision == Decision::Deny {
                        return ToolOutput::error(policy.refusal(name, kind));
                    }
                }
            }
        }
        if decision == Decision::Ask {
            // `PermissionRequest` hooks answer first (a background run's only chance), then the
            // broker where the run has one.
            let answered = match &hooks {
                Some(hooks) => {
                    tool_hooks::permission_request(hooks, &env, name, &input, &cancel).await
                }
                None => None,
            };
            // The user is about to be asked: `Notification` hooks hear of it first.
            if answered.is_none()
                && policy.broker.is_some()
                && !env.background
                && let Some(hooks) = &hooks
            {
                tool_hooks::notify_permission(hooks, name, &cancel).await;
            }
            let answer = match answered {
                Some(answer) => answer,
                // A question the broker is still asking must not hold a cancelled run.
                None => tokio::select! {
                    answer = policy.ask(request(&input), env.background) => answer,
                    () = cancel.cancelled() => Err("cancelled while waiting for permission".to_owned()),
                },
            };
            if let Err(reason) = answer {
                return ToolOutput::error(reason);
            }
        }
        let post_input = hooks.as_ref().map(|_| input.clone());
        let mut output = tokio::select! {
            biased;
            result = tool.call(input, &context) => match result {
                Ok(output) => output,
                Err(error) => ToolOutput::error(error.to_string()),
            },
            () = cancel.cancelled() => ToolOutput::error("cancelled"),
        };
        if let (Some(hooks), Some(input)) = (&hooks, &post_input) {
            let added =
                tool_hooks::after(hooks, &env, name, &context.call_id, input, &output, &cancel)
                    .await;
            context_notes.extend(added);
        }
        for note in context_notes {
            output.content.push_str("\n\n");
            output.content.push_str(&note);
        }
        output
    }
}

/// The diagnostic of a run whose model call failed: an answer past the model's cap says so
/// with its code (`ANSWER_TOO_LARGE`) first, what to do, and that the stream was stopped.
pub(super) fn model_failure(error: &subagent_model::Error) -> String {
    match error {
        subagent_model::Error::AnswerTooLarge { limit } => {
            let error = subagent_core::Error::AnswerTooLarge {
                message: format!(
                    "the model's answer passed {limit} bytes of text, thinking and tool calls (the model's max_answer_bytes) and its stream was stopped; ask for a shorter answer, or raise the cap"
                ),
            };
            format!("{}: {error}", error.code())
        }
        other => format!("model call failed: {other}"),
    }
}
