//! The agent loop.

mod answer;
mod calls;
mod tool_hooks;

use std::sync::{Arc, PoisonError};

use futures::StreamExt;
use serde_json::Value;
use subagent_core::registry::DEFAULT_MAX_DEPTH;
use subagent_core::{
    CancellationToken, Outcome, Run, RunEvent, RunId, RunSender, StartRequest, StopReason, Usage,
};
use subagent_model::{
    Effort, Messages, Model, ModelEvent, ModelRequest, ModelResponse, ResponseBuilder,
};
use subagent_session::{ContentBlock, EventLog, Message, Role, SessionEvent};

use subagent_process::Secrets;
use subagent_schema::OutputSchema;

use crate::env::RunEnv;
use crate::input::TurnInput;
use crate::permissions::PermissionPolicy;
use crate::result_cap::ToolResultCap;
use crate::seed::{Seed, next_turn};
use crate::sessions::{OpenSession, Recorder, SessionStore};
use crate::skills::{RunSkills, SKILL_TOOL};
use crate::structured::DEFAULT_STRUCTURED_RETRIES;
use crate::structured::{Capture, OutputMode, StructuredOutputTool, capture_instructions};
use crate::summary::{ProgressCell, RequestParts, Summarizer, SummaryConfig};
use crate::tasks::{TaskDir, TaskTable};
use crate::tools::{Roots, ToolSet};
use crate::{Error, Result};

/// The model in-process providers use when a request names none: put it in
/// `BuildContext::extensions` (or in a parent's run) as `DefaultModel(model)`.
#[derive(Clone)]
pub struct DefaultModel(pub Arc<dyn Model>);

impl std::fmt::Debug for DefaultModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DefaultModel")
            .field(&self.0.describe())
            .finish()
    }
}

/// Everything a run needs.
#[derive(Clone)]
pub struct AgentConfig {
    /// The model.
    pub model: Arc<dyn Model>,
    /// The model id sent in requests; `None` = the model client's own.
    pub model_id: Option<String>,
    /// The system prompt.
    pub system: Option<String>,
    /// The tools, in the order the model sees them (already filtered).
    pub tools: ToolSet,
    /// Turn limit (model calls of this run).
    pub max_turns: Option<u32>,
    /// Output token limit per model call.
    pub max_tokens: u32,
    /// How many I/O tool calls (every tool but delegation) of one assistant message run at
    /// once; the others wait, in call order, for a slot. Delegation calls
    /// ([`ToolKind::Delegate`](crate::ToolKind::Delegate)) are not counted and never wait for
    /// a slot: every one of the message starts at once (a bound meant for file and shell I/O
    /// must not serialise children that mostly wait on their own model).
    pub tool_concurrency: usize,
    /// Structured output.
    pub output: OutputMode,
    /// Invalid structured outputs tolerated before the run fails.
    pub structured_retries: u32,
    /// Where file tools may go.
    pub roots: Roots,
    /// How tool calls are permitted.
    pub permissions: PermissionPolicy,
    /// The run's delegation depth.
    pub depth: u32,
    /// The absolute depth cap (see [`RunEnv::max_depth`]).
    pub max_depth: u32,
    /// Nobody waits: never ask for permission.
    pub background: bool,
    /// The runs above, root first.
    pub lineage: Vec<RunId>,
    /// The configured secrets (the model's key variable and the like): the bash tool's
    /// commands inherit none of these variables nor any variable holding one of their values,
    /// and their values are redacted from every tool result, task notification and forwarded
    /// event before the model, the event stream or the log sees them.
    pub secrets: Secrets,
    /// Delegation tools this run was not given because it may not delegate (nesting is
    /// opt-in): a call to one is answered with
    /// [`nesting_refusal`](crate::delegation::nesting_refusal) (`NESTED_DELEGATION_FORBIDDEN`),
    /// not as an unknown tool.
    pub nesting_refused: Vec<String>,
    /// Where the run writes its transcript (`<dir>/<session id>.jsonl`, see
    /// [`SessionStore`]); `None` (the default): nowhere, and the run cannot be resumed.
    pub sessions: Option<SessionStore>,
    /// The reasoning effort asked of the model (sent only by a model that supports it); `None`:
    /// the model's default.
    pub effort: Option<Effort>,
    /// Input from outside the run, taken at the start of each turn and waited for before the
    /// run ends (a teammate's mailbox; see [`TurnInput`]); `None` (the default): none.
    pub input: Option<Arc<dyn TurnInput>>,
    /// Where the run's background tasks keep their output files (`<root>/<run id>/`, made with
    /// the first task); `None` (the default): `<temp dir>/subagent-tasks`. In-process children
    /// of the run keep theirs under the same root.
    pub task_dir: Option<TaskDir>,
    /// Periodic progress summaries by a tool-less fork of the run's conversation (see
    /// [`crate::summary`]); `None` (the default): none.
    pub summaries: Option<SummaryConfig>,
    /// The most bytes of one tool result (and of one `<task-notification>`) the model is given,
    /// at least 1; a longer one is cut with a marker ([`crate::cut_result`]). `None` (the
    /// default): the parent's when the run is a delegation's child (a [`ToolResultCap`] in its
    /// request), else [`DEFAULT_MAX_TOOL_RESULT_BYTES`](crate::DEFAULT_MAX_TOOL_RESULT_BYTES).
    pub max_tool_result_bytes: Option<usize>,
    /// The run's skills (see [`crate::skills`]): a fresh conversation's first message gets the
    /// preloaded skills' bodies after its prompt, and the listing when the run has the `Skill`
    /// tool; `None` (the default): no skills.
    pub skills: Option<RunSkills>,
    /// A task table the host keeps beyond the run (an editor's session, whose prompts are runs
    /// of their own; see [`Agent::with_tasks`]). The run starts its background tasks in it and
    /// forwards their events while it runs; when the model ends its answer the run tells what
    /// has ended but neither waits for nor stops what still runs, and it opens by telling the
    /// model, before the prompt, what ended since the last run (the same `<task-notification>`
    /// text). Watching the tasks between runs ([`TaskTable::next_ended`]) and stopping them
    /// ([`TaskTable::stop_all`]) is the host's. `None` (the default): a table of the run's own,
    /// whose agent tasks the run waits for before it ends and which it stops at its end.
    pub tasks: Option<Arc<TaskTable>>,
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("model", &self.model.describe())
            .field("tools", &self.tools)
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}

impl AgentConfig {
    /// A top-level agent (depth 0, default depth cap) with no tools, 10 concurrent I/O tool
    /// calls (delegations unbounded), 8192 output tokens per call, and the default permission
    /// mode.
    pub fn new(model: Arc<dyn Model>, roots: Roots) -> Self {
        Self {
            model,
            model_id: None,
            system: None,
            tools: ToolSet::default(),
            max_turns: None,
            max_tokens: 8192,
            tool_concurrency: 10,
            output: OutputMode::Text,
            structured_retries: DEFAULT_STRUCTURED_RETRIES,
            roots,
            permissions: PermissionPolicy::default(),
            depth: 0,
            max_depth: DEFAULT_MAX_DEPTH,
            background: false,
            lineage: Vec::new(),
            secrets: Secrets::new(),
            nesting_refused: Vec::new(),
            sessions: None,
            effort: None,
            input: None,
            task_dir: None,
            summaries: None,
            max_tool_result_bytes: None,
            skills: None,
            tasks: None,
        }
    }
}

/// A configured agent, ready to run once.
pub struct Agent {
    config: AgentConfig,
    system: Option<Arc<str>>,
    capture: Option<Arc<std::sync::Mutex<Capture>>>,
    final_validator: Option<OutputSchema>,
    resumed: Option<OpenSession>,
    /// Who runs the session and what it was asked, for its info ([`Agent::start`]).
    label: Option<crate::session_info::SessionLabel>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

struct State {
    log: EventLog,
    recorder: Option<Recorder>,
    messages: Messages,
    turn: u32,
    turns_done: u32,
    usage: Usage,
    text: String,
    retries_used: u32,
    /// Where the conversation is, for the summarizer (`None` without summaries).
    progress: Option<ProgressCell>,
    /// A `Stop` hook has kept the run going (its next `Stop` says `stop_hook_active`).
    stop_hook_active: bool,
}

impl Agent {
    /// Prepares a run. With [`OutputMode::CaptureTool`] the `structured_output` tool is added
    /// last and its instructions appended to the system prompt; `Config` when the schema does
    /// not compile.
    pub fn new(mut config: AgentConfig) -> Result<Self> {
        if config.max_tool_result_bytes == Some(0) {
            return Err(Error::Config(
                "max_tool_result_bytes must be at least 1".into(),
            ));
        }
        let mut capture = None;
        let mut final_validator = None;
        match &config.output {
            OutputMode::Text => {}
            OutputMode::CaptureTool { schema } => {
                let tool = StructuredOutputTool::new(schema.clone())?;
                capture = Some(tool.capture());
                config.tools = config.tools.with([Arc::new(tool) as Arc<dyn crate::Tool>]);
                let instructions = capture_instructions();
                config.system = Some(match config.system.take() {
                    Some(system) if !system.is_empty() => format!("{system}\n\n{instructions}"),
                    _ => instructions,
                });
            }
            OutputMode::FinalAnswer { schema } => {
                final_validator =
                    Some(OutputSchema::compile(schema).map_err(|e| Error::Config(e.to_string()))?);
            }
        }
        let system = config.system.as_deref().map(Arc::from);
        Ok(Self {
            config,
            system,
            capture,
            final_validator,
            resumed: None,
            label: None,
        })
    }

    /// Continues `session` (from [`SessionStore::resume`], whose seed the run must start
    /// from): the run appends to its transcript and its outcome keeps its session id.
    #[must_use]
    pub fn resuming(mut self, session: OpenSession) -> Self {
        self.resumed = Some(session);
        self
    }

    /// Runs with `tasks` as its task table, kept by the caller beyond the run (see
    /// [`AgentConfig::tasks`]).
    #[must_use]
    pub fn with_tasks(mut self, tasks: Arc<TaskTable>) -> Self {
        self.config.tasks = Some(tasks);
        self
    }

    /// The configuration (with the capture tool added, if any).
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Starts the run on a new task and returns its handle. `request` gives the run's
    /// description and cancellation (see `Run::channel`).
    pub fn start(self, provider: &str, request: &StartRequest, seed: Seed) -> Run {
        let (sender, run) = Run::channel(provider, request);
        let provider = provider.to_owned();
        let mut agent = self;
        // A child whose configuration sets no cap on its tool results takes its parent's.
        if agent.config.max_tool_result_bytes.is_none() {
            agent.config.max_tool_result_bytes = request
                .parent
                .extensions
                .get::<ToolResultCap>()
                .map(|cap| cap.0.max(1));
        }
        agent.label = Some(crate::session_info::SessionLabel::new(
            &provider,
            request.description.clone(),
            &request.prompt_text(),
        ));
        tokio::spawn(async move {
            let (mut outcome, _log) = agent.run_in_place(seed, &sender).await;
            if let Some(session) = &mut outcome.session {
                session.provider = provider;
            }
            sender.finish(outcome);
        });
        run
    }

    /// Starts a top-level run of `prompt` (what a CLI does).
    pub fn start_prompt(self, prompt: impl Into<String>, cancel: CancellationToken) -> Run {
        let prompt = prompt.into();
        let request = StartRequest::builder(prompt.clone())
            .cwd(self.config.roots.cwd())
            .depth(self.config.depth)
            .cancel(cancel)
            .build();
        self.start(
            "runtime",
            &request,
            Seed::fresh(vec![ContentBlock::text(prompt)]),
        )
    }

    /// Runs to the end, reporting through `sender` (which the caller then finishes with the
    /// outcome). Returns the outcome and the session log.
    /// With a session store or a resumed session, the transcript is complete and closed when
    /// this returns, and the outcome's `session` names it (its `provider` left empty).
    pub async fn run(mut self, seed: Seed, sender: &RunSender) -> (Outcome, EventLog) {
        self.run_in_place(seed, sender).await
    }

    /// [`Agent::run`] on a borrowed agent: a task that owns the agent holds it once (a future
    /// that took `self` by value would keep a second copy beside its caller's).
    async fn run_in_place(&mut self, seed: Seed, sender: &RunSender) -> (Outcome, EventLog) {
        let cancel = sender.cancel_token().clone();
        // The reading tools reach the skills' folders (a user's skill is outside the project).
        let roots = match &self.config.skills {
            Some(skills) => self
                .config
                .roots
                .clone()
                .with_read_only(skills.directory.skills().into_iter().map(|s| s.dir)),
            None => self.config.roots.clone(),
        };
        let env = Arc::new(RunEnv {
            run_id: sender.id(),
            roots,
            depth: self.config.depth,
            max_depth: self.config.max_depth,
            background: self.config.background,
            lineage: self.config.lineage.clone(),
            permissions: self.config.permissions.clone(),
            tasks: match &self.config.tasks {
                Some(tasks) => {
                    tasks.forward_to(Some(sender.emitter()));
                    Arc::clone(tasks)
                }
                None => Arc::new(
                    TaskTable::for_run(
                        sender.id(),
                        self.config.task_dir.clone(),
                        self.config.secrets.clone(),
                    )
                    .forwarding(sender.emitter()),
                ),
            },
            secrets: self.config.secrets.clone(),
            sessions: self.config.sessions.clone(),
        });
        let turn = next_turn(&seed.log);
        let messages = match seed.messages {
            Some(messages) => messages,
            None => seed
                .log
                .iter()
                .filter_map(|event| event.as_message().cloned())
                .collect(),
        };
        let sessions = self.config.sessions.as_ref();
        let recorder = Recorder::new(
            sessions,
            self.resumed.take(),
            sender.id(),
            sender,
            self.label.take(),
        );
        let mut state = State {
            log: seed.log,
            recorder,
            messages,
            turn,
            turns_done: 0,
            usage: Usage::default(),
            text: String::new(),
            retries_used: 0,
            progress: None,
            stop_hook_active: false,
        };
        let summarizer = self.config.summaries.clone().map(|config| {
            let cell = ProgressCell::default();
            state.progress = Some(cell.clone());
            let parts = RequestParts {
                model: Arc::clone(&self.config.model),
                model_id: self.config.model_id.clone().unwrap_or_default(),
                system: self.system.clone(),
                tools: self.config.tools.shared_specs(),
                effort: self.config.effort,
            };
            let secrets = self.config.secrets.clone();
            Summarizer::start(config, parts, cell, sender.emitter(), secrets, &cancel)
        });
        let mut prompt = seed.prompt;
        let outcome = match tool_hooks::prompt(&env, &mut prompt, turn > 0, &cancel).await {
            Ok(()) => {
                // A fresh conversation opens with its skills after the prompt (a fork's or a
                // resumed one has them in its history already).
                if turn == 0
                    && let Some(skills) = &self.config.skills
                {
                    let listed = self.config.tools.get(SKILL_TOOL).is_some();
                    prompt.content.extend(skills.opening(listed));
                }
                // Tasks of a table kept beyond the runs that ended since the last one are told
                // first (a run's own table has none yet).
                let told: Vec<ContentBlock> = env
                    .tasks
                    .take_finished()
                    .iter()
                    .map(|n| ContentBlock::text(self.notification_text(&env, n)))
                    .collect();
                prompt.content.splice(0..0, told);
                self.drive(&mut state, prompt, &env, &cancel, sender).await
            }
            Err(blocked) => Outcome::with_status(StopReason::Refused, String::new(), Some(blocked)),
        };
        tool_hooks::session_end(&env, &cancel).await;
        // No summary after the loop: the summarizer ends (a summary in flight dropped) first.
        if let Some(summarizer) = summarizer {
            summarizer.stop().await;
        }
        match &self.config.tasks {
            // The host's tasks go on; their events have no run to go to until the next one.
            Some(tasks) => tasks.forward_to(None),
            None => env.tasks.stop_all().await,
        }
        if let Some(input) = &self.config.input {
            input.close().await;
        }
        let mut outcome = outcome;
        outcome.usage.input_tokens = state.usage.input_tokens;
        outcome.usage.output_tokens = state.usage.output_tokens;
        outcome.usage.cache_read_tokens = state.usage.cache_read_tokens;
        outcome.usage.cache_write_tokens = state.usage.cache_write_tokens;
        outcome.usage.tool_uses = state.usage.tool_uses;
        if let Some(recorder) = state.recorder.take() {
            let cwd = self.config.roots.cwd();
            outcome.session = recorder.finish(&state.log, cwd, sender, &outcome).await;
        }
        (outcome, state.log)
    }

    /// Records a message the run produced but never sent to the model (the tool results of the
    /// last calls, when the run stops before its next turn) as a turn of its own, so the log —
    /// and a transcript, a resume, a fork — never ends on unanswered tool calls.
    fn record_unsent(state: &mut State, message: Message, status: StopReason) {
        if message.content.is_empty() {
            return;
        }
        state
            .log
            .append(SessionEvent::TurnStart { turn: state.turn });
        state.turn += 1;
        state.log.append(SessionEvent::message(message.clone()));
        state.log.append(SessionEvent::TurnEnd {
            stop_reason: status,
        });
        state.messages.push(message);
    }

    fn end(&self, state: &State, status: StopReason, diagnostic: Option<String>) -> Outcome {
        Outcome::with_status(status, state.text.clone(), diagnostic)
    }

    async fn drive(
        &self,
        state: &mut State,
        first: Message,
        env: &Arc<RunEnv>,
        cancel: &CancellationToken,
        sender: &RunSender,
    ) -> Outcome {
        let mut pending = first;
        loop {
            if cancel.is_cancelled() {
                Self::record_unsent(state, pending, StopReason::Cancelled);
                return self.end(
                    state,
                    StopReason::Cancelled,
                    Some("the run was cancelled".to_owned()),
                );
            }
            if let Some(limit) = self.config.max_turns
                && state.turns_done >= limit
            {
                Self::record_unsent(state, pending, StopReason::MaxTurns);
                return self.end(
                    state,
                    StopReason::MaxTurns,
                    Some(format!("the run reached its turn limit ({limit})")),
                );
            }
            // What arrived from outside (a teammate's messages) joins the turn about to start.
            if let Some(input) = &self.config.input {
                pending.content.extend(input.take());
            }
            state
                .log
                .append(SessionEvent::TurnStart { turn: state.turn });
            state.turn += 1;
            state.log.append(SessionEvent::message(pending.clone()));
            if let Some(progress) = &state.progress {
                progress.release();
            }
            state.messages.push(pending);
            if let Some(progress) = &state.progress {
                progress.asking(&state.messages);
            }
            // Shared, not copied: the request holds the history and the tool specs by reference
            // count (and drops them when the call ends, so the next push is in place).
            let request = ModelRequest {
                model: self.config.model_id.clone().unwrap_or_default(),
                system: self.system.clone(),
                messages: state.messages.clone(),
                tools: self.config.tools.shared_specs(),
                max_tokens: self.config.max_tokens,
                output_schema: None,
                effort: self.config.effort,
            };
            let response = match self.call_model(request, cancel, sender).await {
                Ok(response) => response,
                Err(error) => {
                    let status = if cancel.is_cancelled()
                        || matches!(error, subagent_model::Error::Cancelled)
                    {
                        StopReason::Cancelled
                    } else {
                        StopReason::Failed
                    };
                    state.log.append(SessionEvent::TurnEnd {
                        stop_reason: status,
                    });
                    let diagnostic = match status {
                        StopReason::Cancelled => "the run was cancelled".to_owned(),
                        _ => calls::model_failure(&error),
                    };
                    return self.end(state, status, Some(diagnostic));
                }
            };
            state.turns_done += 1;
            state.usage.add(&response.usage);
            sender.emit(RunEvent::Usage {
                usage: state.usage,
                parent_tool_use_id: None,
            });
            let message = response.message;
            state.text = message.text();
            state.log.append(SessionEvent::message(message.clone()));
            state.log.append(SessionEvent::TurnEnd {
                stop_reason: response.stop,
            });
            if let Some(recorder) = &state.recorder {
                recorder.turn_end(&state.log);
            }
            let mut calls: Vec<(String, String, Value)> = message
                .tool_uses()
                .map(|(id, name, input)| (id.to_owned(), name.to_owned(), input.clone()))
                .collect();
            if let Some(progress) = &state.progress {
                progress.release();
            }
            state.messages.push(message);
            if let Some(progress) = &state.progress {
                progress.answered(&state.messages);
            }
            match response.stop {
                StopReason::MaxTokens => {
                    return self.end(
                        state,
                        StopReason::MaxTokens,
                        Some("the model reached its output token limit".into()),
                    );
                }
                StopReason::Refused => {
                    return self.end(state, StopReason::Refused, Some("the model refused".into()));
                }
                _ => {}
            }
            if calls.is_empty() {
                match self.after_answer(state, env, cancel).await {
                    Next::Done(outcome) => return *outcome,
                    Next::Continue(next) => {
                        pending = next;
                        continue;
                    }
                }
            }
            let results = self.run_tools(state, &mut calls, env, cancel, sender).await;
            if cancel.is_cancelled() {
                Self::record_unsent(
                    state,
                    Message::new(Role::User, results),
                    StopReason::Cancelled,
                );
                return self.end(
                    state,
                    StopReason::Cancelled,
                    Some("the run was cancelled".to_owned()),
                );
            }
            if let Some(capture) = &self.capture {
                let capture = capture.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(value) = &capture.value {
                    let value = value.clone();
                    drop(capture);
                    Self::record_unsent(
                        state,
                        Message::new(Role::User, results),
                        StopReason::Completed,
                    );
                    let mut outcome = self.end(state, StopReason::Completed, None);
                    if outcome.text.is_empty() {
                        outcome.text = value.to_string();
                    }
                    outcome.structured = Some(value);
                    return outcome;
                }
                if capture.failures > self.config.structured_retries {
                    return self.end(
                        state,
                        StopReason::Failed,
                        Some(format!(
                            "structured output still invalid after {} attempts: {}",
                            capture.failures,
                            capture.last_problem.as_deref().unwrap_or("")
                        )),
                    );
                }
            }
            let mut content: Vec<ContentBlock> = results;
            for notification in env.tasks.take_finished() {
                content.push(ContentBlock::text(
                    self.notification_text(env, &notification),
                ));
            }
            pending = Message::new(Role::User, content);
        }
    }

    async fn call_model(
        &self,
        request: ModelRequest,
        cancel: &CancellationToken,
        sender: &RunSender,
    ) -> subagent_model::Result<ModelResponse> {
        let mut stream = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(subagent_model::Error::Cancelled),
            stream = self.config.model.stream(request, cancel.clone()) => stream?,
        };
        let mut builder = ResponseBuilder::new();
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(subagent_model::Error::Cancelled),
                next = stream.next() => next,
            };
            let Some(event) = next else { break };
            let event = event?;
            match &event {
                ModelEvent::TextDelta { text } => sender.emit(RunEvent::Text {
                    text: text.clone(),
                    parent_tool_use_id: None,
                }),
                ModelEvent::ThinkingDelta { text } => {
                    sender.emit(RunEvent::Thinking { text: text.clone() });
                }
                ModelEvent::ToolCallEnd {
                    id, name, input, ..
                } => sender.emit(RunEvent::ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                    parent_tool_use_id: None,
                }),
                _ => {}
            }
            builder.push(event)?;
            if builder.is_finished() {
                break;
            }
        }
        builder.finish()
    }
}

enum Next {
    /// Boxed: an outcome is large and `Continue` is the common case.
    Done(Box<Outcome>),
    Continue(Message),
}
