//! A team at run time: the leader's [`Teams`], its teammates' loops, and delivery.
//!
//! Each teammate is a loop owned by the leader's `Teams`: it awaits the teammate's run, records
//! its session and status, tells the leader (an `idle_notification` carrying the turn's answer:
//! for a product teammate, which has no team tools, that answer is how it talks), then waits for
//! a message and resumes the session with the unread messages as the next prompt. An in-process
//! teammate also takes its messages at the start of each of its turns (`mailbox`). A
//! message is marked read only once it is in a turn: taken by the turn itself, or after the
//! resumed run started (while a wake is starting, the teammate's own turns take nothing, so
//! nothing arrives twice); a refused start leaves it unread.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use serde_json::{Value, json};
use subagent_core::{Outcome, Run, RunId, StopReason};
use subagent_runtime::delegation::forwarded_clean;
use subagent_runtime::{ChildExtras, DelegationTool, Tool, ToolContext, TurnInput};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::delivery::{bounded, introduction, plan_mode_note, shutdown_response};
use crate::model::{LEADER, Member, MemberStatus, Message, check_name};
use crate::store::{TeamDir, TeamStore};
use crate::{Error, Result};

mod mailbox;
mod plan;

use mailbox::{LeaderInput, MemberInput};
use plan::PlanRun;
pub(crate) use plan::TeammateMode;

/// A live teammate's state in the leader's process.
#[derive(Debug)]
struct Live {
    /// Woken when a message arrives for it (a permit is kept when nobody waits).
    wake: Arc<Notify>,
    /// A turn is in flight (or starting).
    busy: bool,
    /// A resumed run is being started with its unread messages: its turns take nothing.
    waking: bool,
    /// It approved a shutdown: its loop ends with this turn.
    stopping: bool,
    /// Its messages could not be handed to it (a refused wake): they wait for the next message
    /// rather than keep the leader waiting.
    stalled: bool,
    /// Its loop ended (it stopped): unread messages of its are no work in progress.
    ended: bool,
    /// Whether its current run is held in plan mode, and whether its plan was approved since.
    plan: PlanRun,
}

impl Live {
    fn new() -> Self {
        Self {
            wake: Arc::new(Notify::new()),
            busy: false,
            waking: false,
            stopping: false,
            stalled: false,
            ended: false,
            plan: PlanRun::Free,
        }
    }
}

#[derive(Default)]
struct State {
    /// The team this leader leads (one at a time).
    team: Option<TeamDir>,
    /// The leader's run, from its first team call: only it may lead.
    leader: Option<RunId>,
    /// The leader's context, for starting and resuming teammates.
    leader_context: Option<ToolContext>,
    /// Live teammates by name.
    members: HashMap<String, Live>,
    /// What each teammate was started with (agent type, model, isolation), for its resumes.
    templates: HashMap<String, Value>,
    /// Shutdown requests sent so far (their ids count up).
    requests: u64,
    /// Plan approval requests sent so far (their ids count up).
    plan_requests: u64,
    /// The permission mode each teammate was started with (`mode`, other than `plan`): the
    /// ceiling of all its runs.
    ceilings: HashMap<String, subagent_core::PermissionMode>,
}

/// The tools a teammate of `team` named `name` gets (`held`: in plan mode until its plan is
/// approved).
pub(crate) type MemberTools = fn(&Arc<Teams>, &TeamDir, &str, bool) -> Vec<Arc<dyn Tool>>;

/// The leader's side of its team: starting teammates through the delegation tool, delivering
/// messages, shutdown, and stopping everything when the leader's run ends.
pub struct Teams {
    store: TeamStore,
    delegation: Arc<DelegationTool>,
    /// What a teammate gets as its team tools (`tools::member_tools`).
    member_tools: MemberTools,
    state: Mutex<State>,
    /// Bumped on every message to the leader and every teammate status change.
    pub(crate) changes: watch::Sender<u64>,
    loops: TaskTracker,
    stop: CancellationToken,
}

impl std::fmt::Debug for Teams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Teams")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl Teams {
    /// A leader's teams as [`Teams::new`] makes them, each teammate given the tools
    /// `member_tools` makes (the team tools sit above `Teams`: they take it).
    pub(crate) fn with_member_tools(
        store: TeamStore,
        delegation: Arc<DelegationTool>,
        member_tools: MemberTools,
    ) -> Arc<Self> {
        Arc::new(Self {
            store,
            delegation,
            member_tools,
            state: Mutex::new(State::default()),
            changes: watch::Sender::new(0),
            loops: TaskTracker::new(),
            stop: CancellationToken::new(),
        })
    }

    /// Where the teams live.
    pub fn store(&self) -> &TeamStore {
        &self.store
    }

    /// The delegation tool teammates are started with.
    pub fn delegation(&self) -> &Arc<DelegationTool> {
        &self.delegation
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Records the leader's run on its first team call; `NOT_LEADER` for any other run.
    pub(crate) fn check_leader(&self, context: &ToolContext, what: &str) -> Result<()> {
        let mut state = self.state();
        match state.leader {
            Some(leader) if leader != context.env.run_id => {
                return Err(Error::NotLeader(what.to_owned()));
            }
            _ => state.leader = Some(context.env.run_id),
        }
        state.leader_context = Some(context.clone());
        Ok(())
    }

    /// The team the leader leads; `NO_TEAM` before `TeamCreate`.
    pub fn current(&self) -> Result<TeamDir> {
        self.state().team.clone().ok_or(Error::NoTeam)
    }

    /// Creates the team `name`, or reopens it when it is on disk (a restarted run): members
    /// that were running when their process ended are idle again, resumable by a message.
    /// Returns the team and whether it was reopened.
    pub fn create(&self, name: &str, description: &str) -> Result<(TeamDir, bool)> {
        if let Some(team) = &self.state().team
            && team.name() != name
        {
            return Err(Error::InvalidArguments(format!(
                "you already lead team {:?}; TeamDelete it before creating another",
                team.name()
            )));
        }
        let (team, reopened) = match self.store.create(name, description) {
            Ok(team) => (team, false),
            Err(Error::TeamExists(_)) => {
                let team = self.store.open(name)?;
                let live: Vec<String> = self.state().members.keys().cloned().collect();
                team.update_config(|config| {
                    for member in &mut config.members {
                        if member.status == MemberStatus::Running && !live.contains(&member.name) {
                            member.status = MemberStatus::Idle;
                        }
                    }
                    Ok(())
                })?;
                (team, true)
            }
            Err(error) => return Err(error),
        };
        self.state().team = Some(team.clone());
        Ok((team, reopened))
    }

    /// Deletes the current team; `TEAM_ACTIVE` while a member runs or waits.
    pub fn delete(&self) -> Result<String> {
        let team = self.current()?;
        self.store.delete(team.name())?;
        let mut state = self.state();
        state.team = None;
        state.members.clear();
        Ok(team.name().to_owned())
    }

    /// Starts the teammate `name` with the delegation arguments `input` (without `name` and
    /// `team_name`), on behalf of the leader's call `context`.
    pub(crate) async fn start_teammate(
        self: &Arc<Self>,
        name: &str,
        mut input: Value,
        mode: TeammateMode,
        context: &ToolContext,
    ) -> Result<String> {
        check_name("name", name)?;
        if name == LEADER {
            return Err(Error::InvalidArguments(format!(
                "{LEADER} is the leader's name in its team; choose another"
            )));
        }
        let team = self.current()?;
        let Some(args) = input.as_object_mut() else {
            return Err(Error::InvalidArguments(
                "arguments must be an object".into(),
            ));
        };
        let prompt = args
            .get("prompt")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if prompt.trim().is_empty() {
            return Err(Error::InvalidArguments(
                "\"prompt\" must not be empty".into(),
            ));
        }
        // A teammate is its own agent with a fresh context, never a fork of the leader.
        args.entry("subagent_type")
            .or_insert_with(|| json!("general-purpose"));
        args.remove("run_in_background");
        if args.contains_key("resume") {
            return Err(Error::InvalidArguments(
                "a teammate starts fresh; send it a message to continue it".into(),
            ));
        }
        let template: Value = Value::Object(
            args.iter()
                .filter(|(key, _)| !matches!(key.as_str(), "prompt" | "description"))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        );
        let members = team.config()?.names();
        let mut prompt = introduction(team.name(), name, &members, &prompt);
        if mode.plan {
            prompt = format!("{prompt}\n\n{}", plan_mode_note());
        }
        args.insert("prompt".into(), json!(prompt));
        args.entry("description")
            .or_insert_with(|| json!(format!("teammate {name}")));
        team.add_member(Member {
            name: name.to_owned(),
            agent_type: template
                .get("subagent_type")
                .and_then(Value::as_str)
                .map(str::to_owned),
            provider: String::new(),
            status: MemberStatus::Running,
            session_id: None,
            cwd: None,
            plan_mode_required: mode.plan,
            plan_request: None,
        })?;
        {
            let mut state = self.state();
            let mut live = Live::new();
            live.busy = true;
            live.plan = PlanRun::held_if(mode.plan);
            state.members.insert(name.to_owned(), live);
            state.templates.insert(name.to_owned(), template);
            match mode.ceiling {
                Some(ceiling) => state.ceilings.insert(name.to_owned(), ceiling),
                None => state.ceilings.remove(name),
            };
        }
        let extras = self.extras(&team, name, mode.plan);
        match self.delegation.start_detached(input, context, extras).await {
            Ok((run, provider)) => {
                team.update_config(|config| {
                    if let Some(member) = config.member_mut(name) {
                        member.provider.clone_from(&provider);
                    }
                    Ok(())
                })?;
                self.spawn_loop(team.clone(), name.to_owned(), Some(run), context.clone());
                Ok(format!(
                    "Spawned teammate {name} in team {} (provider {provider}). It works on its own; what it sends you, and a note each time it goes idle, arrive as <teammate-message> blocks at the start of your turns. Talk to it with SendMessage; share work through the task list.",
                    team.name()
                ))
            }
            Err(refused) => {
                self.state().members.remove(name);
                team.set_status(name, MemberStatus::Stopped, None)?;
                Err(Error::InvalidArguments(refused.content))
            }
        }
    }

    /// What a teammate gets beyond its request: its mailbox between turns, the team tools, and
    /// the mode it was started with as its ceiling: `plan` while it is `held` until its plan
    /// is approved.
    fn extras(self: &Arc<Self>, team: &TeamDir, name: &str, held: bool) -> ChildExtras {
        let ceiling = self.state().ceilings.get(name).copied();
        let (ceiling, reason) = plan::hold(ceiling, held);
        ChildExtras {
            input: Some(Arc::new(MemberInput {
                teams: Arc::clone(self),
                team: team.clone(),
                name: name.to_owned(),
            })),
            tools: (self.member_tools)(self, team, name, held),
            permission_ceiling: ceiling,
            plan_reason: reason,
            teammate: Some(name.to_owned()),
        }
    }

    fn spawn_loop(
        self: &Arc<Self>,
        team: TeamDir,
        name: String,
        run: Option<Run>,
        context: ToolContext,
    ) {
        let teams = Arc::clone(self);
        self.loops.spawn(async move {
            teams.drive(team, name, run, context).await;
        });
    }

    /// Sends from `from` in `team`; wakes the recipients (a teammate with no loop, such as one
    /// of a reopened team, is resumed). `control` is a structured message.
    pub(crate) fn send(
        self: &Arc<Self>,
        team: &TeamDir,
        from: &str,
        to: &str,
        text: &str,
        summary: Option<&str>,
        control: Option<&Value>,
    ) -> Result<Vec<String>> {
        let recipients = team.send(from, to, text, summary, control)?;
        for recipient in &recipients {
            if recipient == LEADER {
                continue;
            }
            let mut state = self.state();
            if let Some(live) = state.members.get(recipient)
                && !live.ended
            {
                live.wake.notify_one();
                continue;
            }
            let Some(context) = state.leader_context.clone() else {
                continue;
            };
            if state.team.as_ref().map(TeamDir::name) != Some(team.name()) {
                continue;
            }
            state.members.insert(recipient.clone(), Live::new());
            drop(state);
            self.spawn_loop(team.clone(), recipient.clone(), None, context);
        }
        self.changed();
        Ok(recipients)
    }

    /// Whether `name`'s own turns take nothing now: a wake is handing it its messages, it
    /// approved its shutdown (it ends with this turn; what comes later stays unread), or its
    /// plan was approved while its run is still in plan mode (what comes now waits for the
    /// run that may write, which its loop starts once this one ends).
    fn holding(state: &State, name: &str) -> bool {
        state
            .members
            .get(name)
            .is_some_and(|live| live.waking || live.stopping || live.plan == PlanRun::Approved)
    }

    /// What `name`'s own turn takes from its inbox: its unread messages, none while
    /// [`Self::holding`] says so. Looked at and taken under the state lock, so a change that
    /// holds it back (an approved plan, set before its message is sent) is never undone by a
    /// take that looked just before.
    pub(crate) fn take_unread(&self, team: &TeamDir, name: &str) -> Result<Vec<Message>> {
        let state = self.state();
        if Self::holding(&state, name) {
            return Ok(Vec::new());
        }
        let taken = team.take_unread(name);
        drop(state);
        taken
    }

    /// A new shutdown request id for `name`.
    pub(crate) fn request_id(&self, name: &str) -> String {
        let mut state = self.state();
        state.requests += 1;
        format!("shutdown-{}@{name}", state.requests)
    }

    /// `name` approved its shutdown: its loop ends when its current turn does.
    pub(crate) fn approve_shutdown(&self, name: &str) {
        if let Some(live) = self.state().members.get_mut(name) {
            live.stopping = true;
        }
    }

    /// Whether any teammate is at work, or will be: it has messages it has not taken yet (and
    /// is neither stopped nor stalled on a refused wake).
    pub(crate) fn any_active(&self) -> bool {
        let (team, names): (Option<TeamDir>, Vec<(String, bool, bool)>) = {
            let state = self.state();
            let names = state
                .members
                .iter()
                .filter(|(_, live)| !live.ended)
                .map(|(name, live)| (name.clone(), live.busy, live.stalled))
                .collect();
            (state.team.clone(), names)
        };
        let Some(team) = team else { return false };
        names.into_iter().any(|(name, busy, stalled)| {
            busy || !stalled
                && team
                    .unread(&name)
                    .map(|unread| !unread.is_empty())
                    .unwrap_or(false)
        })
    }

    /// One teammate's life in this process.
    async fn drive(
        self: Arc<Self>,
        team: TeamDir,
        name: String,
        mut run: Option<Run>,
        context: ToolContext,
    ) {
        let mut retry_needs_wake = false;
        loop {
            if let Some(current) = run.take() {
                let outcome = self.follow(current, &context).await;
                if self.turn_ended(&team, &name, &outcome) {
                    break;
                }
            }
            let Some(wake) = self.state().members.get(&name).map(|l| Arc::clone(&l.wake)) else {
                break;
            };
            // Idle until a message arrives (a permit from a send while we looked is kept).
            let unread = loop {
                if self.stop.is_cancelled() {
                    break None;
                }
                if !retry_needs_wake {
                    match team.unread(&name) {
                        Ok(unread) if !unread.is_empty() => break Some(unread),
                        Ok(_) => {}
                        Err(error) => {
                            tracing::warn!(%error, member = %name, "reading a teammate's inbox");
                            break None;
                        }
                    }
                }
                tokio::select! {
                    () = wake.notified() => {
                        retry_needs_wake = false;
                        if let Some(live) = self.state().members.get_mut(&name) {
                            live.stalled = false;
                        }
                    }
                    () = self.stop.cancelled() => {}
                }
            };
            let Some(unread) = unread else { break };
            match self.wake(&team, &name, &unread, &context).await {
                Ok(next) => run = Some(next),
                Err(error) => {
                    retry_needs_wake = true;
                    if let Some(live) = self.state().members.get_mut(&name) {
                        live.stalled = true;
                    }
                    let _ = team.set_status(&name, MemberStatus::Failed, None);
                    let text = format!(
                        "{name} could not be woken with its messages: {}",
                        error.to_tool_text()
                    );
                    let control = json!({"type": "idle_notification", "status": "failed"});
                    let _ = team.send(&name, LEADER, &text, None, Some(&control));
                    self.changed();
                }
            }
        }
        let mut state = self.state();
        if let Some(live) = state.members.get_mut(&name) {
            live.busy = false;
            live.ended = true;
        }
        if self.stop.is_cancelled() {
            state.members.remove(&name);
        }
        drop(state);
        self.changed();
    }

    /// Awaits a teammate's run, its text, tool calls, tool results and usage forwarded into
    /// the leader's stream tagged with the call that started the teammate (as a background
    /// subagent's are), and cancels it when the team stops.
    async fn follow(&self, mut run: Run, context: &ToolContext) -> Outcome {
        let token = run.cancel_token();
        let emitter = context.env.tasks.emitter();
        let mut events = run.take_events().filter(|_| emitter.is_some());
        let outcome = run.outcome();
        tokio::pin!(outcome);
        let mut stopping = false;
        loop {
            tokio::select! {
                biased;
                event = async {
                    match events.as_mut() {
                        Some(events) => events.next().await,
                        None => None,
                    }
                }, if events.is_some() => match (event, &emitter) {
                    (Some(event), Some(emitter)) => {
                        if let Some(event) = forwarded_clean(event, &context.call_id, &context.env.secrets) {
                            emitter.emit(event);
                        }
                    }
                    _ => events = None,
                },
                outcome = &mut outcome => return outcome,
                () = self.stop.cancelled(), if !stopping => {
                    stopping = true;
                    token.cancel();
                }
            }
        }
    }

    /// Resumes `name`'s session with `unread` as its next prompt; they are marked read once the
    /// run started.
    async fn wake(
        self: &Arc<Self>,
        team: &TeamDir,
        name: &str,
        unread: &[Message],
        context: &ToolContext,
    ) -> Result<Run> {
        let member = team
            .config()?
            .member(name)
            .cloned()
            .ok_or_else(|| Error::TeammateStopped(name.to_owned()))?;
        let held = member.plan_mode_required;
        let mut input = {
            let mut state = self.state();
            if let Some(live) = state.members.get_mut(name) {
                live.busy = true;
                live.waking = true;
                live.plan = live.plan.next_run(held);
            }
            state.templates.get(name).cloned()
        }
        .unwrap_or_else(|| {
            json!({"subagent_type": member.agent_type.clone().unwrap_or_else(|| "general-purpose".into())})
        });
        let messages: Vec<String> = unread.iter().map(Message::to_prompt).collect();
        let mut prompt = messages.join("\n\n");
        if member.session_id.is_none() {
            let members = team.config()?.names();
            prompt = introduction(team.name(), name, &members, &prompt);
            if held {
                prompt = format!("{prompt}\n\n{}", plan_mode_note());
            }
        }
        if let Some(args) = input.as_object_mut() {
            args.insert("prompt".into(), json!(prompt));
            args.insert("description".into(), json!(format!("{name}: messages")));
            if let Some(session) = &member.session_id {
                args.insert("resume".into(), json!(session));
            }
        }
        let started = self
            .delegation
            .start_detached(input, context, self.extras(team, name, held))
            .await;
        let result = match started {
            Ok((run, _)) => {
                let ids: Vec<u64> = unread.iter().map(|m| m.id).collect();
                team.mark_read(name, &ids)?;
                team.set_status(name, MemberStatus::Running, None)?;
                Ok(run)
            }
            Err(refused) => Err(Error::InvalidArguments(refused.content)),
        };
        let mut state = self.state();
        if let Some(live) = state.members.get_mut(name) {
            live.waking = false;
            live.busy = result.is_ok();
        }
        drop(state);
        self.changed();
        result
    }

    /// Records the end of one of `name`'s turns; `true` when its loop ends (it approved a
    /// shutdown, or the team is stopping).
    fn turn_ended(&self, team: &TeamDir, name: &str, outcome: &Outcome) -> bool {
        let session = outcome.session.as_ref().map(|s| {
            (
                s.id.clone(),
                s.cwd.as_ref().map(|cwd| cwd.display().to_string()),
            )
        });
        let answer = bounded(&outcome.text);
        // A product teammate answers a shutdown request in its text.
        let response = shutdown_response(&answer);
        let approved = response
            .as_ref()
            .is_some_and(|r| r.get("approve").and_then(Value::as_bool) == Some(true));
        let stopping = approved
            || self
                .state()
                .members
                .get(name)
                .is_some_and(|live| live.stopping);
        // A cancelled turn (the leader's cancel reaches its teammates' runs first) is no
        // failure: the teammate stays resumable, and nobody is told.
        let cancelled = self.stop.is_cancelled() || outcome.status == StopReason::Cancelled;
        let status = if stopping {
            MemberStatus::Stopped
        } else if cancelled || outcome.status == StopReason::Completed {
            MemberStatus::Idle
        } else {
            MemberStatus::Failed
        };
        let member = match team.set_status(name, status, session) {
            Ok(member) => Some(member),
            Err(error) => {
                tracing::warn!(%error, member = %name, "recording a teammate's turn");
                None
            }
        };
        if !cancelled {
            let mut text = if answer.is_empty() {
                format!("{name} is idle.")
            } else {
                answer
            };
            if let Some(diagnostic) = &outcome.diagnostic
                && outcome.status != StopReason::Completed
            {
                text.push_str(&format!(
                    "\n[{name}'s turn ended {}: {diagnostic}]",
                    outcome.status
                ));
            }
            // A teammate held in plan mode that ended its turn without submitting its plan
            // (a product teammate has no ExitPlanMode) submits its answer as its plan.
            let plan = member
                .as_ref()
                .filter(|m| !stopping && response.is_none() && plan::submits_answer(m, outcome))
                .and_then(|_| self.answer_as_plan(team, name, &text));
            let control = match (&response, stopping, plan) {
                (_, _, Some((plan_text, control))) => {
                    text = plan_text;
                    control
                }
                (Some(response), _, None) => response.clone(),
                (None, true, None) => json!({"type": "teammate_terminated"}),
                (None, false, None) => {
                    json!({"type": "idle_notification", "status": outcome.status.to_string()})
                }
            };
            if let Err(error) = team.send(name, LEADER, &text, None, Some(&control)) {
                tracing::warn!(%error, member = %name, "telling the leader a teammate is idle");
            }
        }
        // Not busy only once the leader's note is in its inbox: a leader waiting for its team
        // never sees a teammate neither busy nor with news.
        if let Some(live) = self.state().members.get_mut(name) {
            live.busy = false;
        }
        self.changed();
        stopping || self.stop.is_cancelled()
    }

    /// The leader's input: its mailbox, and waiting while teammates work.
    pub fn leader_input(self: &Arc<Self>) -> Arc<dyn TurnInput> {
        Arc::new(LeaderInput {
            teams: Arc::clone(self),
        })
    }

    /// Stops every teammate (their runs cancelled, their processes ended by their providers)
    /// and returns once every loop has ended. Members keep their sessions and are idle on disk,
    /// so a later run can reopen the team and wake them.
    pub async fn close(&self) {
        self.stop.cancel();
        self.loops.close();
        self.loops.wait().await;
    }
}
