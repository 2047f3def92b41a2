//! `subagent run`: the parent agent, its delegations and its session.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};
use subagent_core::agents::AgentDirectory;
use subagent_core::{ProviderFactory, StartRequest};
use subagent_runtime::PermissionPolicy;

use super::{continue_command, exit_for, notice, read_prompt, session_ref};
use crate::Refusal;
use crate::args::RunArgs;
use crate::broker::TerminalBroker;
use crate::drive::{Interrupts, drive};
use crate::parent::parent_agent;
use crate::render::{self, Mode, Progress};
use crate::setup::{self, Runnable};
use crate::warnings;

/// What the `run` parent's sessions belong to (the runtime names a top-level run's session so).
const PARENT_PROVIDER: &str = super::sessions::PARENT;

/// The `run` parent's start: `prompt` as a fresh conversation, or (`--resume`) as the next
/// message of session `resume`, through the runtime's session store as spawn resumes a child
/// (`SessionStore::resume`, then `Agent::resuming`): `NOT_RESUMABLE` for an id that names no
/// session here or one still being written, and without a state dir.
async fn parent_start(
    agent: subagent_runtime::Agent,
    prompt: String,
    resume: Option<&str>,
    adopt: bool,
    runnable: &Runnable,
) -> Result<subagent_core::Run, Refusal> {
    let blocks = vec![subagent_session::ContentBlock::text(prompt.clone())];
    let request = StartRequest::builder(prompt)
        .cwd(&runnable.cwd)
        .depth(agent.config().depth)
        .build();
    let Some(id) = resume else {
        return Ok(agent.start(
            PARENT_PROVIDER,
            &request,
            subagent_runtime::Seed::fresh(blocks),
        ));
    };
    let Some(store) = &runnable.sessions else {
        return Err(Refusal::new(
            subagent_core::ErrorCode::NotResumable,
            format!(
                "cannot resume session {id}: no transcripts are kept without a state dir (set HOME or XDG_STATE_HOME to an absolute path)"
            ),
        ));
    };
    let session = session_ref(PARENT_PROVIDER, id, &runnable.cwd);
    let resumed = if adopt {
        store.adopt(PARENT_PROVIDER, &session, blocks).await
    } else {
        store.resume(PARENT_PROVIDER, &session, blocks).await
    }
    .map_err(|error| {
        let mut refusal = Refusal::from(error);
        if refusal.message.contains("is a session of provider") {
            refusal.message.push_str(&format!(
                ": a child's session continues with `subagent delegate --resume {id} PROMPT`, or give --adopt to take it over as this parent's conversation"
            ));
        }
        refusal
    })?;
    Ok(agent
        .resuming(resumed.session)
        .start(PARENT_PROVIDER, &request, resumed.seed))
}

pub(super) async fn run(
    args: RunArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    if args.bg {
        let stdin_prompt = (args.prompt == "-")
            .then(|| read_prompt(&args.prompt))
            .transpose()?;
        return crate::bg::launch(stdin_prompt, args.json).await;
    }
    let prompt = read_prompt(&args.prompt)?;
    let mode = Mode::pick(args.json);
    let mut runnable = setup::runnable(
        &args.preset.project,
        &(&args.preset).into(),
        args.model.as_deref(),
        setup::KeySwitch::Switch,
        factories,
    )?;
    crate::flags::add_agents(&mut runnable, args.agents.as_deref())?;
    runnable.model.require()?;
    let effort = crate::flags::parent_effort(&runnable, args.effort)?;
    let budget = crate::flags::budget(
        &runnable,
        args.max_tokens_budget,
        args.max_budget_usd,
        true,
        None,
    )?;
    warnings::print(&runnable.catalog, &runnable.cwd);
    warnings::print_skills(&runnable.skills, &runnable.catalog, &runnable.cwd);
    // What no rule decides is asked on a terminal, denied otherwise.
    let asking = Arc::new(AtomicBool::new(false));
    // Cancelled with the run (Ctrl-C), so that an open question does not hold the run up.
    let questions = subagent_core::CancellationToken::new();
    let permission_mode =
        crate::settings::permission_mode(args.permission_mode, &runnable.settings);
    let mut permissions =
        PermissionPolicy::new(permission_mode).with_settings(Arc::clone(&runnable.rules));
    if let Some(broker) = TerminalBroker::if_interactive(Arc::clone(&asking), questions.clone()) {
        permissions = permissions.with_broker(broker);
    }
    // The MCP servers start before the parent is built: their tools are in its first request.
    runnable.mcp.start().await;
    let mut agent = parent_agent(&runnable, args.max_turns, permissions, &[])?;
    agent = crate::flags::with_effort(agent, effort)?;
    if args.teams {
        agent = crate::teams::lead(agent, &runnable)?;
    }
    let mut interrupts = Interrupts::listen();
    let resume = match (&args.resume, args.continue_latest) {
        (Some(id), _) => Some(id.clone()),
        (None, true) => Some(
            super::sessions::latest(&runnable.cwd, "run", |provider| provider == PARENT_PROVIDER)?
                .id,
        ),
        (None, false) => None,
    };
    let run = parent_start(
        agent,
        prompt.clone(),
        resume.as_deref(),
        args.adopt,
        &runnable,
    )
    .await?;
    let run = crate::recording::record_top(run, PARENT_PROVIDER, &prompt, &runnable.cwd);
    let run = subagent_runtime::budget::enforce(run, budget);
    notice(&runnable, mode);
    let run_cancel = run.cancel_token();
    let _questions_end = questions.clone().drop_guard();
    tokio::spawn(async move {
        tokio::select! {
            () = run_cancel.cancelled() => questions.cancel(),
            () = questions.cancelled() => {}
        }
    });
    let run_id = run.id();
    tracing::debug!(%run_id, cwd = %runnable.cwd.display(), "parent started");
    let mut progress = Progress::new(mode, "parent");
    for row in &runnable.tools {
        progress.name_untyped(&row.name, row.fork.as_ref().unwrap_or(&row.provider));
    }
    progress.pause_while(asking);
    let driven = drive(run, &mut progress, &mut interrupts).await;
    let made = delegations_made(&driven.events, &runnable);
    if mode == Mode::Json {
        let mut value = render::outcome_json(run_id, "parent", &driven.outcome);
        if let Some(object) = value.as_object_mut() {
            object.insert(
                "delegations".into(),
                Value::Array(made.iter().map(|d| d.json()).collect()),
            );
        }
        render::print_json_line(&value);
    } else {
        render::print_outcome_human(&driven.outcome, &progress);
        if made.is_empty() {
            eprintln!("delegations: none");
        } else {
            eprintln!("delegations: {}", made.len());
            for delegation in &made {
                eprintln!("  {}", delegation.line());
            }
        }
        let mode_flag = args.permission_mode.map(|mode| mode.to_string());
        let resume = continue_command(
            "run",
            &args.preset,
            &[
                ("--model", args.model.clone()),
                ("--permission-mode", mode_flag),
                ("--effort", args.effort.map(|e| e.to_string())),
                ("--agents", args.agents.clone()),
            ],
            &[("--teams", args.teams)],
        );
        if let Some(line) = render::session_line(&driven.outcome, &resume) {
            eprintln!("{line}");
        }
    }
    Ok(exit_for(driven.outcome.status, driven.interrupted))
}

/// One delegation the parent made, from its events.
struct Delegation {
    tool: String,
    /// What ran it: the provider, the agent type, the teammate.
    runs_on: RunsOn,
    input: Value,
    result: Option<(bool, String)>,
    /// A delegation that went to the background: its task id and, once it ended, its status.
    task: Option<(String, Option<String>)>,
}

impl Delegation {
    fn line(&self) -> String {
        let field = |key: &str| {
            self.input
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let label = field("description")
            .or_else(|| field("prompt").map(|p| subagent_core::default_description(&p)))
            .unwrap_or_default();
        let kind = self.runs_on.to_string();
        let status = match (&self.result, &self.task) {
            (_, Some((id, status))) => format!(
                "background task {}: {}",
                id.chars().take(8).collect::<String>(),
                status.as_deref().unwrap_or("running")
            ),
            (Some((false, text)), None) => {
                format!("ok: {}", crate::line::one_line(first_part(text), 80))
            }
            (Some((true, text)), None) => {
                format!("error: {}", crate::line::one_line(first_part(text), 80))
            }
            (None, None) => "no result".to_owned(),
        };
        format!("{} [{kind}] “{label}” → {status}", self.tool)
    }

    fn json(&self) -> Value {
        let mut value = json!({
            "tool": self.tool,
            "provider": self.runs_on.provider,
            "agent_type": self.runs_on.agent_type,
            "teammate": self.runs_on.teammate,
            "input": self.input,
            "is_error": self.result.as_ref().map(|(e, _)| *e),
            "result": self.result.as_ref().map(|(_, text)| text.clone()),
        });
        if let (Some(child), Some(object)) = (
            self.result
                .as_ref()
                .and_then(|(_, text)| render::child_json(text)),
            value.as_object_mut(),
        ) {
            object.insert("child".into(), child);
        }
        if let (Some((id, status)), Some(object)) = (&self.task, value.as_object_mut()) {
            object.insert("task".into(), json!({"id": id, "status": status}));
        }
        value
    }
}

/// A tool result without its trailing `<session_id>` and `<usage>` blocks.
fn first_part(text: &str) -> &str {
    let end = ["<session_id>", "<usage>"]
        .iter()
        .filter_map(|tag| text.find(tag))
        .min()
        .unwrap_or(text.len());
    text[..end].trim()
}

/// What a delegation ran on, as the parent's summary names it: `general-purpose on spawn`,
/// `on fork` (an untyped call of a tool that forks them), `teammate alice: explore on codex`.
struct RunsOn {
    provider: String,
    agent_type: Option<String>,
    teammate: Option<String>,
}

impl RunsOn {
    /// What call `input` of delegation tool `tool` runs on: its agent type's provider (else
    /// the tool's), or what the tool runs untyped calls on.
    fn of(tool: &str, input: &Value, runnable: &Runnable) -> Self {
        let text = |key: &str| {
            input
                .get(key)
                .and_then(Value::as_str)
                .filter(|value| !value.is_empty())
                .map(str::to_owned)
        };
        let row = runnable.tools.iter().find(|row| row.name == tool);
        let agent_type = text("subagent_type");
        let provider = match &agent_type {
            Some(kind) => runnable
                .catalog
                .get(kind)
                .and_then(|profile| profile.provider)
                .or_else(|| row.map(|row| row.provider.clone())),
            None => row.map(|row| row.fork.clone().unwrap_or_else(|| row.provider.clone())),
        }
        .unwrap_or_else(|| tool.to_owned());
        let teammate = text("name").filter(|_| input.get("team_name").is_some());
        Self {
            provider,
            agent_type,
            teammate,
        }
    }
}

impl std::fmt::Display for RunsOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(name) = &self.teammate {
            write!(f, "teammate {name}: ")?;
        }
        match &self.agent_type {
            Some(kind) => write!(f, "{kind} on {}", self.provider),
            None => write!(f, "on {}", self.provider),
        }
    }
}

fn delegations_made(events: &[subagent_core::RunEvent], runnable: &Runnable) -> Vec<Delegation> {
    use subagent_core::RunEvent;
    let names: Vec<&str> = runnable.tools.iter().map(|row| row.name.as_str()).collect();
    let mut made: Vec<(String, Delegation)> = Vec::new();
    for event in events {
        match event {
            RunEvent::ToolCall {
                id,
                name,
                input,
                parent_tool_use_id: None,
                ..
            } if names.contains(&name.as_str()) => {
                made.push((
                    id.clone(),
                    Delegation {
                        tool: name.clone(),
                        runs_on: RunsOn::of(name, input, runnable),
                        input: input.clone(),
                        result: None,
                        task: None,
                    },
                ));
            }
            RunEvent::ToolResult {
                id,
                output,
                is_error,
                ..
            } => {
                if let Some((_, delegation)) = made.iter_mut().find(|(call, _)| call == id) {
                    delegation.result = Some((*is_error, output.clone()));
                }
            }
            // A delegation that went to the background, and its end.
            RunEvent::TaskStarted {
                task_id,
                tool_use_id,
                ..
            } => {
                if let Some((_, delegation)) = made.iter_mut().find(|(call, _)| call == tool_use_id)
                {
                    delegation.task = Some((task_id.to_string(), None));
                }
            }
            RunEvent::TaskEnded {
                task_id, status, ..
            } => {
                let task = task_id.to_string();
                let ended = made.iter_mut().find_map(|(_, delegation)| {
                    delegation.task.as_mut().filter(|(id, _)| *id == task)
                });
                if let Some((_, slot)) = ended {
                    *slot = Some(status.as_str().to_owned());
                }
            }
            _ => {}
        }
    }
    made.into_iter().map(|(_, d)| d).collect()
}
