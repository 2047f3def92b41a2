//! Periodic progress summaries of a long run, made by a tool-less fork of its conversation.
//!
//! A run configured with a [`SummaryConfig`] (spawn and fork children: every 30 s by default)
//! keeps a snapshot of its conversation (a shared view, no copy): the messages of the model
//! request in flight, or, once the answer came, the conversation ending with that answer. At
//! each tick of [`SummaryTicks`] a summarizer beside the loop (one task per run,
//! so never two summaries of one run at once) takes the snapshot, skips the tick when nothing
//! happened since the last summary, and asks the run's own model for a summary with one request
//! whose prefix is byte for byte the run's own:
//!
//! - the same model id, system prompt, tool list (the very same specs), reasoning effort and
//!   messages, so the provider's prompt cache written by the run's last request is read, not
//!   written again;
//! - then, in the last user message, [`SUMMARY_PROMPT`]: appended after the blocks of the
//!   request in flight when the run is waiting on its model, or, when the run is running the
//!   tools of its latest answer, after a placeholder result ([`FORKED_TOOL_RESULT`]) for each of
//!   that answer's calls, as a fork's first request has them;
//! - a small output limit ([`SummaryConfig::max_tokens`], default [`SUMMARY_MAX_TOKENS`]).
//!
//! **Tool-less without changing the prefix.** The tool definitions stay in the request:
//! removing them, or sending `tool_choice: none`, would change what the provider caches (on
//! Anthropic a different `tool_choice` invalidates the cached messages), so the summary would
//! pay the whole conversation again. Instead the prompt says not to call tools and the
//! summarizer has a zero tool allowance: it makes exactly one model call and never runs a tool;
//! a call the model makes anyway is dropped and counted ([`SummaryStats::tool_calls_dropped`]).
//!
//! The summary becomes a [`RunEvent::Summary`] of the run (forwarded to its parent like its
//! text; the task table keeps the latest in the task's progress). Its tokens are counted in
//! [`SummaryStats`], not in the run's usage or outcome. A failed summary (an error, an empty
//! answer) is a `tracing` warning and a count, never the run's concern; the summarizer is
//! cancelled, its request dropped, and waited for when the run's loop ends, before the outcome.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use subagent_core::text::{Limit, truncate};
use subagent_core::{CancellationToken, RunEmitter, RunEvent, Usage};
use subagent_model::{Effort, Messages, Model, ModelRequest, ResponseBuilder, ToolSpec};
use subagent_process::Secrets;
use subagent_session::{ContentBlock, FORKED_TOOL_RESULT, Message, Role};
use tokio::sync::{Notify, watch};

/// The instruction a summary request ends with.
pub const SUMMARY_PROMPT: &str = "[progress summary request] Summarize your progress on the task so far in one or two sentences, present tense (for example: \"Reading the parser and listing its callers.\"). Do not call any tools; answer with the summary only.";

/// The default interval between summaries.
pub const SUMMARY_INTERVAL: Duration = Duration::from_secs(30);

/// The default output limit of a summary request.
pub const SUMMARY_MAX_TOKENS: u32 = 160;

/// A summary's text is cut to this many characters.
pub const SUMMARY_CHARS: usize = 400;

/// When the summarizer looks.
#[derive(Clone, Debug)]
pub enum SummaryTicks {
    /// Every interval of wall time, the first one interval after the run starts.
    Every(Duration),
    /// Whenever the handle is notified (one stored permit: ticks during a summary collapse into
    /// one). For tests and for callers with a clock of their own.
    Manual(Arc<Notify>),
}

/// What the summaries of a run cost and how they went (cumulative).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SummaryStats {
    /// Ticks that found something new and asked the model.
    pub requested: u64,
    /// Summaries delivered as events.
    pub delivered: u64,
    /// Ticks skipped because nothing happened since the last summary.
    pub skipped: u64,
    /// Summaries that failed (an error or an empty answer).
    pub failed: u64,
    /// Tool calls a summary answer made anyway, dropped unrun.
    pub tool_calls_dropped: u64,
    /// The tokens of every summary request (input, output, cache read and write).
    pub usage: Usage,
}

/// Periodic summaries of a run ([`crate::AgentConfig::summaries`]).
#[derive(Clone, Debug)]
pub struct SummaryConfig {
    /// When to look.
    pub ticks: SummaryTicks,
    /// The output limit of a summary request.
    pub max_tokens: u32,
    /// Where the counts go; subscribe to follow them.
    pub stats: Arc<watch::Sender<SummaryStats>>,
}

impl SummaryConfig {
    /// Summaries every `interval`, [`SUMMARY_MAX_TOKENS`] each.
    pub fn every(interval: Duration) -> Self {
        Self::with_ticks(SummaryTicks::Every(interval))
    }

    /// Summaries at `ticks`, [`SUMMARY_MAX_TOKENS`] each.
    pub fn with_ticks(ticks: SummaryTicks) -> Self {
        Self {
            ticks,
            max_tokens: SUMMARY_MAX_TOKENS,
            stats: Arc::new(watch::channel(SummaryStats::default()).0),
        }
    }

    /// The config of a provider's `summary_interval_secs` setting: `None` = every
    /// [`SUMMARY_INTERVAL`], `Some(0)` = no summaries.
    pub fn from_secs(secs: Option<u64>) -> Option<Self> {
        match secs {
            Some(0) => None,
            Some(secs) => Some(Self::every(Duration::from_secs(secs))),
            None => Some(Self::every(SUMMARY_INTERVAL)),
        }
    }

    fn count(&self, change: impl FnOnce(&mut SummaryStats)) {
        self.stats.send_modify(change);
    }
}

/// Where a run's conversation is, as the summarizer forks it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Progress {
    /// The conversation: that of the model request in flight (ending with its user message),
    /// or ending with the latest answer.
    pub(crate) messages: Messages,
    /// Whether the run is waiting on its model for `messages`.
    pub(crate) asking: bool,
    /// Bumped at every change.
    pub(crate) version: u64,
}

/// The run's side of the snapshot: the loop writes, the summarizer reads.
///
/// The loop [releases](ProgressCell::release) the snapshot before each push onto its
/// conversation and sets it again after: a clone held across the push would make every push
/// start a new chunk of the shared list (and the list flatten, copying every message, each
/// `MAX_CHAIN` turns), where a sole owner appends in place.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProgressCell(Arc<Mutex<Progress>>);

impl ProgressCell {
    /// Drops the held conversation (the summarizer finds nothing to fork until the next set).
    pub(crate) fn release(&self) {
        let mut progress = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        progress.messages = Messages::new();
        progress.asking = false;
    }

    /// The run sent a request for `messages` (ending with its user message).
    pub(crate) fn asking(&self, messages: &Messages) {
        self.set(messages, true);
    }

    /// The run has its answer (the last message of `messages`).
    pub(crate) fn answered(&self, messages: &Messages) {
        self.set(messages, false);
    }

    fn set(&self, messages: &Messages, asking: bool) {
        let mut progress = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        progress.messages = messages.clone();
        progress.asking = asking;
        progress.version += 1;
    }

    fn get(&self) -> Progress {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The parts of the run's requests a summary request repeats.
#[derive(Clone)]
pub(crate) struct RequestParts {
    pub(crate) model: Arc<dyn Model>,
    pub(crate) model_id: String,
    pub(crate) system: Option<Arc<str>>,
    pub(crate) tools: Arc<[ToolSpec]>,
    pub(crate) effort: Option<Effort>,
}

/// The summary request of `progress`: the run's prefix, then [`SUMMARY_PROMPT`] (see the module
/// docs). `None` when the run has not asked anything yet.
pub(crate) fn summary_request(
    parts: &RequestParts,
    progress: &Progress,
    max_tokens: u32,
) -> Option<ModelRequest> {
    let all = &progress.messages;
    let last = all.last()?;
    let (mut messages, mut content) = if progress.asking {
        // The request in flight, its last user message extended: all before it is shared.
        (all.prefix(all.len() - 1), last.content.clone())
    } else {
        if last.role != Role::Assistant {
            return None;
        }
        let placeholders = last
            .tool_uses()
            .map(|(id, _, _)| ContentBlock::tool_result(id, FORKED_TOOL_RESULT, true))
            .collect();
        (all.clone(), placeholders)
    };
    content.push(ContentBlock::text(SUMMARY_PROMPT));
    messages.push(Message::new(Role::User, content));
    Some(ModelRequest {
        model: parts.model_id.clone(),
        system: parts.system.clone(),
        messages,
        tools: Arc::clone(&parts.tools),
        max_tokens,
        output_schema: None,
        effort: parts.effort,
    })
}

/// The summarizer of one run; [`Summarizer::stop`] ends it.
pub(crate) struct Summarizer {
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Summarizer {
    /// Starts summarizing the run whose conversation `cell` follows, reporting to `events`.
    pub(crate) fn start(
        config: SummaryConfig,
        parts: RequestParts,
        cell: ProgressCell,
        events: RunEmitter,
        secrets: Secrets,
        run_cancel: &CancellationToken,
    ) -> Self {
        let cancel = run_cancel.child_token();
        let token = cancel.clone();
        let task = tokio::spawn(async move {
            let mut last_version = 0;
            let mut interval = match &config.ticks {
                SummaryTicks::Every(every) => {
                    let every = (*every).max(Duration::from_millis(1));
                    let mut interval =
                        tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                    Some(interval)
                }
                SummaryTicks::Manual(_) => None,
            };
            loop {
                let tick = async {
                    match (&config.ticks, interval.as_mut()) {
                        (_, Some(interval)) => {
                            interval.tick().await;
                        }
                        (SummaryTicks::Manual(notify), None) => notify.notified().await,
                        (SummaryTicks::Every(_), None) => std::future::pending().await,
                    }
                };
                tokio::select! {
                    biased;
                    () = token.cancelled() => return,
                    () = tick => {}
                }
                let progress = cell.get();
                if progress.version == last_version {
                    config.count(|stats| stats.skipped += 1);
                    continue;
                }
                let Some(request) = summary_request(&parts, &progress, config.max_tokens) else {
                    config.count(|stats| stats.skipped += 1);
                    continue;
                };
                last_version = progress.version;
                config.count(|stats| stats.requested += 1);
                let answer = tokio::select! {
                    biased;
                    () = token.cancelled() => return,
                    answer = ask(&*parts.model, request, &token) => answer,
                };
                // Cancelled on another thread while the answer was polled: the model call saw
                // it first (and failed with it). The run is ending; that is no failure.
                if token.is_cancelled() {
                    return;
                }
                match answer {
                    Ok((text, usage, calls)) => {
                        let text = secrets
                            .redact(&truncate(text.trim(), Limit::Chars(SUMMARY_CHARS)))
                            .into_owned();
                        config.count(|stats| {
                            stats.usage.add(&usage);
                            stats.tool_calls_dropped += calls;
                            if text.is_empty() {
                                stats.failed += 1;
                            } else {
                                stats.delivered += 1;
                            }
                        });
                        if text.is_empty() {
                            tracing::warn!("progress summary: the model answered no text");
                            continue;
                        }
                        events.emit(RunEvent::Summary {
                            text,
                            parent_tool_use_id: None,
                        });
                    }
                    Err(error) => {
                        tracing::warn!(%error, "progress summary failed");
                        config.count(|stats| stats.failed += 1);
                    }
                }
            }
        });
        Self { cancel, task }
    }

    /// Cancels the summarizer (a summary in flight is dropped) and waits for it to end.
    pub(crate) async fn stop(self) {
        self.cancel.cancel();
        if let Err(error) = self.task.await {
            tracing::warn!(%error, "progress summarizer ended abnormally");
        }
    }
}

/// One model call: the answer's text, its usage and how many tool calls it made.
async fn ask(
    model: &dyn Model,
    request: ModelRequest,
    cancel: &CancellationToken,
) -> subagent_model::Result<(String, Usage, u64)> {
    let mut stream = model.stream(request, cancel.clone()).await?;
    let mut builder = ResponseBuilder::new();
    while let Some(event) = stream.next().await {
        builder.push(event?)?;
        if builder.is_finished() {
            break;
        }
    }
    let response = builder.finish()?;
    let calls = response.message.tool_uses().count();
    Ok((
        response.message.text(),
        response.usage,
        u64::try_from(calls).unwrap_or(u64::MAX),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use subagent_model::ScriptedModel;

    fn parts() -> RequestParts {
        let model: Arc<dyn Model> = Arc::new(ScriptedModel::new(
            "m",
            subagent_model::scenario::Scenarios::from_yaml("[]").unwrap(),
        ));
        RequestParts {
            model,
            model_id: "m".into(),
            system: Some(Arc::from("sys")),
            tools: Arc::from([]),
            effort: None,
        }
    }

    #[test]
    fn a_request_in_flight_gets_the_prompt_after_its_blocks() {
        let before = Messages::from(vec![Message::user("task")]);
        let mut assistant = Message::new(
            Role::Assistant,
            vec![ContentBlock::tool_use("c1", "ls", json!({}))],
        );
        assistant.content.insert(0, ContentBlock::text("looking"));
        let mut before = before;
        before.push(assistant);
        let tail = Message::new(
            Role::User,
            vec![ContentBlock::tool_result("c1", "a b", false)],
        );
        let mut sent = before.clone();
        sent.push(tail);
        let cell = ProgressCell::default();
        cell.asking(&sent);
        let request = summary_request(&parts(), &cell.get(), 99).unwrap();
        assert_eq!(request.max_tokens, 99);
        assert_eq!(request.messages.len(), 3);
        assert!(request.messages.shares(&before, 1));
        assert_eq!(
            request.messages.get(2).unwrap().content,
            vec![
                ContentBlock::tool_result("c1", "a b", false),
                ContentBlock::text(SUMMARY_PROMPT)
            ]
        );
    }

    #[test]
    fn an_answer_whose_tools_run_gets_placeholder_results() {
        let mut messages = Messages::from(vec![Message::user("task")]);
        messages.push(Message::new(
            Role::Assistant,
            vec![
                ContentBlock::tool_use("c1", "ls", json!({})),
                ContentBlock::tool_use("c2", "bash", json!({"command": "make"})),
            ],
        ));
        let cell = ProgressCell::default();
        assert!(summary_request(&parts(), &cell.get(), 10).is_none());
        cell.answered(&messages);
        let request = summary_request(&parts(), &cell.get(), 10).unwrap();
        assert_eq!(
            request.messages.last().unwrap().content,
            vec![
                ContentBlock::tool_result("c1", FORKED_TOOL_RESULT, true),
                ContentBlock::tool_result("c2", FORKED_TOOL_RESULT, true),
                ContentBlock::text(SUMMARY_PROMPT)
            ]
        );
        assert_eq!(cell.get().version, 1);
        // Released (the loop is pushing): nothing to fork, the version kept.
        cell.release();
        assert!(summary_request(&parts(), &cell.get(), 10).is_none());
        assert_eq!(cell.get().version, 1);
    }

    #[test]
    fn the_setting_in_seconds() {
        assert!(SummaryConfig::from_secs(Some(0)).is_none());
        let default = SummaryConfig::from_secs(None).unwrap();
        assert!(matches!(default.ticks, SummaryTicks::Every(d) if d == SUMMARY_INTERVAL));
        let five = SummaryConfig::from_secs(Some(5)).unwrap();
        assert!(matches!(five.ticks, SummaryTicks::Every(d) if d == Duration::from_secs(5)));
        assert_eq!(
            truncate(&"é".repeat(500), Limit::Chars(SUMMARY_CHARS))
                .chars()
                .count(),
            SUMMARY_CHARS
        );
    }
}
