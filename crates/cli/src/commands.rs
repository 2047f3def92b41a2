//! The subcommands.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};
use subagent_core::agents::AgentDirectory;
use subagent_core::{ProviderFactory, StartRequest, StopReason};
use subagent_runtime::tools::BashConfig;
use subagent_runtime::{
    AgentConfig, DelegationTool, DelegationToolConfig, PermissionPolicy, Roots, Tool, ToolSet,
};

use crate::args::{AgentsArgs, Command, DelegateArgs, PresetCommand, ProvidersArgs, RunArgs};
use crate::broker::TerminalBroker;
use crate::drive::{Interrupts, StopSignal, drive};
use crate::render::{self, Mode, Progress};
use crate::setup::{self, Runnable};
use crate::warnings;
use crate::{EXIT_CANCELLED, EXIT_COMPLETED, EXIT_NOT_COMPLETED, EXIT_REFUSED, Refusal};

/// Runs one subcommand with the provider kinds of this build (`setup::factories`).
pub async fn dispatch(command: Command, factories: &[Arc<dyn ProviderFactory>]) -> ExitCode {
    match command {
        Command::Delegate(args) => {
            let json = args.json;
            delegate(args, factories)
                .await
                .unwrap_or_else(|r| r.report(json))
        }
        Command::Run(args) => {
            let json = args.json;
            run(args, factories)
                .await
                .unwrap_or_else(|r| r.report(json))
        }
        Command::Acp(args) => crate::acp::acp(args, factories)
            .await
            .unwrap_or_else(|r| r.report(false)),
        Command::Providers(args) => {
            let json = args.json;
            providers(&args, factories).unwrap_or_else(|r| r.report(json))
        }
        Command::Agents(args) => {
            let json = args.json;
            agents(&args, factories).unwrap_or_else(|r| r.report(json))
        }
        Command::Serve(args) => crate::serve::serve(args, factories)
            .await
            .unwrap_or_else(|r| r.report(false)),
        Command::Mcp(args) => crate::mcp::mcp(args, factories)
            .await
            .unwrap_or_else(|r| r.report(false)),
        Command::Worker(args) => crate::worker::worker(args, factories)
            .await
            .unwrap_or_else(|r| r.report(false)),
        Command::Preset(PresetCommand::Validate { file, json }) => validate(&file, json, factories),
        Command::Preset(PresetCommand::Schema) => {
            let schema = subagent_preset::preset_schema_for(factories);
            println!(
                "{}",
                serde_json::to_string_pretty(&schema).unwrap_or_default()
            );
            ExitCode::from(EXIT_COMPLETED)
        }
    }
}

/// The largest prompt read from stdin (`-`), in bytes: 4 MiB.
const MAX_STDIN_PROMPT: u64 = 4 << 20;

/// The largest `--output-schema` file, in bytes: 1 MiB.
const MAX_SCHEMA_FILE: u64 = 1 << 20;

fn read_prompt(prompt: &str) -> Result<String, Refusal> {
    let text = if prompt == "-" {
        let bytes = subagent_session::read_bounded(std::io::stdin().lock(), MAX_STDIN_PROMPT)
            .map_err(|e| {
                Refusal::invalid(if e.kind() == std::io::ErrorKind::FileTooLarge {
                    format!(
                        "the prompt on stdin is over {} MiB; put the material in a file and name it in the prompt",
                        MAX_STDIN_PROMPT >> 20
                    )
                } else {
                    format!("cannot read the prompt from stdin: {e}")
                })
            })?;
        String::from_utf8(bytes)
            .map_err(|_| Refusal::invalid("the prompt on stdin is not UTF-8 text"))?
    } else {
        prompt.to_owned()
    };
    if text.trim().is_empty() {
        return Err(Refusal::invalid("the prompt is empty"));
    }
    Ok(text)
}

/// The exit code: 0 when the run completed (even if a stop signal raced its end), else the
/// code of the stop signal received (130, 143, 129), else 130 for a cancelled run and 1.
fn exit_for(status: StopReason, interrupted: Option<StopSignal>) -> ExitCode {
    ExitCode::from(match (status, interrupted) {
        (StopReason::Completed, _) => EXIT_COMPLETED,
        (_, Some(signal)) => signal.exit_code(),
        (StopReason::Cancelled, None) => EXIT_CANCELLED,
        (_, None) => EXIT_NOT_COMPLETED,
    })
}

fn notice(runnable: &Runnable, mode: Mode) {
    if let Some(notice) = &runnable.model.notice {
        if mode == Mode::Json {
            render::print_json_line(&json!({"type": "notice", "message": notice}));
        } else {
            eprintln!("{notice}");
        }
    }
}

async fn delegate(
    args: DelegateArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    let prompt = read_prompt(&args.prompt)?;
    let mode = Mode::pick(args.json);
    let runnable = setup::runnable(&args.preset.project, args.preset.offline, None, factories)?;
    let profile = match &args.agent {
        Some(name) => Some(
            runnable
                .catalog
                .get(name)
                .ok_or_else(|| warnings::unknown_agent(&runnable.catalog, name, &runnable.cwd))?,
        ),
        None => None,
    };
    warnings::print(&runnable.catalog, &runnable.cwd);
    let provider = match (
        &args.provider,
        profile.as_ref().and_then(|p| p.provider.clone()),
    ) {
        (Some(provider), _) => provider.clone(),
        (None, Some(provider)) => provider,
        (None, None) => runnable
            .tools
            .first()
            .map(|row| row.provider.clone())
            .or_else(|| runnable.registry.names().into_iter().next())
            .ok_or_else(|| Refusal::invalid("the preset enables no provider"))?,
    };
    // `started:` names the task (the agent type, then the prompt), as without `--agent`.
    let description = profile.as_ref().map(|profile| {
        format!(
            "{}: {}",
            profile.name,
            subagent_core::default_description(&prompt)
        )
    });
    let mut builder = StartRequest::builder(prompt).cwd(&runnable.cwd);
    // The agent type's settings, its permission mode as the request's ceiling: the same
    // mapping as the delegation tool's, so a `plan` agent is read-only on every provider.
    if let (Some(profile), Some(description)) = (&profile, description) {
        builder = builder.description(description).agent(profile);
    }
    if let Some(extra) = &args.persona {
        builder = builder.add_persona(extra);
    }
    if let Some(model) = &args.model {
        builder = builder.model(model.clone());
    }
    if let Some(turns) = args.max_turns {
        builder = builder.max_turns(turns);
    }
    // After the agent type's: the flag beats the definition's `effort:`.
    if let Some(effort) = args.effort {
        builder = builder.effort(effort);
    }
    // The flag's isolation, else the agent type's: the delegation tool's rule.
    if let Some(isolation) =
        subagent_core::Isolation::resolve(args.isolation.as_deref(), profile.as_ref())?
    {
        builder = builder.isolation(isolation);
    }
    if let Some(id) = &args.resume {
        builder = builder.resume(session_ref(&provider, id, &runnable.cwd));
    }
    if let Some(path) = &args.output_schema {
        let text = subagent_session::read_user_text(path, MAX_SCHEMA_FILE)
            .map_err(|e| Refusal::invalid(format!("--output-schema {}: {e}", path.display())))?;
        let schema: Value = serde_json::from_str(&text).map_err(|e| {
            Refusal::invalid(format!("--output-schema {}: not JSON: {e}", path.display()))
        })?;
        builder = builder.output_schema(schema);
    }
    let mut request = builder.build();
    request.parent.extensions = setup::extensions(&runnable.model, &runnable.secrets);
    if let Some(row) = runnable
        .preset
        .providers
        .iter()
        .find(|row| row.name == provider && row.disabled)
    {
        return Err(Refusal::new(
            "UNKNOWN_PROVIDER",
            format!(
                "provider \"{provider}\" is disabled in {}:{}:{}: set `disabled: false` on its row to use it (enabled: {})",
                runnable.preset.path.display(),
                row.location.line,
                row.location.column,
                runnable.registry.names().join(", ")
            ),
        ));
    }
    // The model notice matters only when an in-process agent runs.
    let in_process = runnable
        .preset
        .providers
        .iter()
        .any(|row| row.name == provider && matches!(row.kind.as_str(), "spawn" | "fork"));
    if in_process {
        notice(&runnable, mode);
    }
    let mut interrupts = Interrupts::listen();
    let run = runnable.registry.start(&provider, request).await?;
    let run_id = run.id();
    tracing::debug!(%run_id, %provider, cwd = %runnable.cwd.display(), "child started");
    let mut progress = Progress::new(mode, provider.clone());
    let driven = drive(run, &mut progress, &mut interrupts).await;
    if mode == Mode::Json {
        render::print_json_line(&render::outcome_json(run_id, &provider, &driven.outcome));
    } else {
        render::print_outcome_human(&driven.outcome, &progress);
        let resume = format!("subagent delegate --provider {provider}");
        if let Some(line) = render::session_line(&driven.outcome, &resume) {
            eprintln!("{line}");
        }
    }
    Ok(exit_for(driven.outcome.status, driven.interrupted))
}

/// The session `id` of `provider`, continued from `cwd`: what `--resume` asks for, of a child
/// (`delegate`) or of the `run` parent.
fn session_ref(provider: &str, id: &str, cwd: &std::path::Path) -> subagent_core::SessionRef {
    subagent_core::SessionRef {
        provider: provider.to_owned(),
        id: id.to_owned(),
        cwd: Some(cwd.to_path_buf()),
        transcript: None,
    }
}

/// What the `run` parent's sessions belong to (the runtime names a top-level run's session so).
const PARENT_PROVIDER: &str = "runtime";

/// The `run` parent's start: `prompt` as a fresh conversation, or (`--resume`) as the next
/// message of session `resume`, through the runtime's session store as spawn resumes a child
/// (`SessionStore::resume`, then `Agent::resuming`): `NOT_RESUMABLE` for an id that names no
/// session here or one still being written, and without a state dir.
async fn parent_start(
    agent: subagent_runtime::Agent,
    prompt: String,
    resume: Option<&str>,
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
            "NOT_RESUMABLE",
            format!(
                "cannot resume session {id}: no transcripts are kept without a state dir (set HOME or XDG_STATE_HOME to an absolute path)"
            ),
        ));
    };
    let resumed = store
        .resume(
            PARENT_PROVIDER,
            &session_ref(PARENT_PROVIDER, id, &runnable.cwd),
            blocks,
        )
        .await?;
    Ok(agent
        .resuming(resumed.session)
        .start(PARENT_PROVIDER, &request, resumed.seed))
}

/// The system prompt of the `run` parent.
const PARENT_SYSTEM: &str = "You are a coding agent working in the user's project directory. \
You can read and change files and run commands with your tools, and you can hand a self-contained \
subtask to a subagent with a delegation tool: give it a complete prompt, since it does not see \
this conversation unless it is a fork. Report the result to the user concisely.";

pub(crate) fn delegation_config(row: &subagent_preset::ToolRow) -> DelegationToolConfig {
    let mut config = DelegationToolConfig::new(row.provider.clone());
    config.name.clone_from(&row.name);
    // Untyped calls fork only where the row names a fork provider.
    config.fork.clone_from(&row.fork);
    config.max_depth = row.max_depth;
    config.background = row.background;
    config.foreground_timeout_ms = row.foreground_timeout_ms;
    config.tool_filter.clone_from(&row.tool_filter);
    config.persona.clone_from(&row.persona);
    config.description.clone_from(&row.description);
    config
}

/// The parent `run` runs (and `acp` serves): the built-in tools, the preset's delegation
/// tools and the task tools, in `runnable.cwd`, permitted by `permissions`.
pub(crate) fn parent_agent(
    runnable: &Runnable,
    max_turns: u32,
    permissions: PermissionPolicy,
) -> Result<subagent_runtime::Agent, Refusal> {
    let directory: Arc<dyn subagent_core::agents::AgentDirectory> = runnable.catalog.clone();
    let delegations = runnable.tools.iter().map(|row| {
        Arc::new(DelegationTool::new(
            delegation_config(row),
            Arc::clone(&runnable.registry),
            Arc::clone(&directory),
        )) as Arc<dyn Tool>
    });
    // The task tools read and stop what the parent runs in the background (subagents, commands).
    let tools = ToolSet::new(
        ToolSet::builtin(BashConfig::default())
            .into_iter()
            .chain(delegations)
            .chain(subagent_runtime::tools::task_tools()),
    );
    let roots = Roots::new(&runnable.cwd).map_err(|e| Refusal::invalid(e.to_string()))?;
    let mut config = AgentConfig::new(Arc::clone(&runnable.model.model), roots);
    config.system = Some(PARENT_SYSTEM.to_owned());
    config.tools = tools;
    config.max_turns = Some(max_turns);
    config.max_depth = runnable.preset.max_depth;
    // The parent's bash tool and tool results keep the configured secrets in, as children do.
    config.secrets = runnable.secrets.clone();
    config.sessions.clone_from(&runnable.sessions);
    config.task_dir.clone_from(&runnable.tasks);
    config.permissions = permissions;
    subagent_runtime::Agent::new(config).map_err(|e| Refusal::invalid(e.to_string()))
}

async fn run(args: RunArgs, factories: &[Arc<dyn ProviderFactory>]) -> Result<ExitCode, Refusal> {
    let prompt = read_prompt(&args.prompt)?;
    let mode = Mode::pick(args.json);
    let runnable = setup::runnable(
        &args.preset.project,
        args.preset.offline,
        args.model.as_deref(),
        factories,
    )?;
    warnings::print(&runnable.catalog, &runnable.cwd);
    let delegation_names: Vec<String> = runnable.tools.iter().map(|row| row.name.clone()).collect();
    // What no rule decides is asked on a terminal, denied otherwise.
    let asking = Arc::new(AtomicBool::new(false));
    // Cancelled with the run (Ctrl-C), so that an open question does not hold the run up.
    let questions = subagent_core::CancellationToken::new();
    let mut permissions = PermissionPolicy::new(args.permission_mode);
    if let Some(broker) = TerminalBroker::if_interactive(Arc::clone(&asking), questions.clone()) {
        permissions = permissions.with_broker(broker);
    }
    let mut agent = parent_agent(&runnable, args.max_turns, permissions)?;
    if args.teams {
        agent = crate::teams::lead(agent, &runnable)?;
    }
    let mut interrupts = Interrupts::listen();
    let run = parent_start(agent, prompt, args.resume.as_deref(), &runnable).await?;
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
    let made = delegations_made(&driven.events, &delegation_names);
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
        if let Some(line) = render::session_line(&driven.outcome, "subagent run") {
            eprintln!("{line}");
        }
    }
    Ok(exit_for(driven.outcome.status, driven.interrupted))
}

/// One delegation the parent made, from its events.
struct Delegation {
    tool: String,
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
        let kind = field("subagent_type").unwrap_or_else(|| "fork/default".into());
        let status = match (&self.result, &self.task) {
            (_, Some((id, status))) => format!(
                "background task {}: {}",
                id.chars().take(8).collect::<String>(),
                status.as_deref().unwrap_or("running")
            ),
            (Some((false, text)), None) => {
                format!("ok: {}", render::one_line(first_part(text), 80))
            }
            (Some((true, text)), None) => {
                format!("error: {}", render::one_line(first_part(text), 80))
            }
            (None, None) => "no result".to_owned(),
        };
        format!("{} [{kind}] “{label}” → {status}", self.tool)
    }

    fn json(&self) -> Value {
        let mut value = json!({
            "tool": self.tool,
            "input": self.input,
            "is_error": self.result.as_ref().map(|(e, _)| *e),
            "result": self.result.as_ref().map(|(_, text)| text.clone()),
        });
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

fn delegations_made(events: &[subagent_core::RunEvent], names: &[String]) -> Vec<Delegation> {
    use subagent_core::RunEvent;
    let mut made: Vec<(String, Delegation)> = Vec::new();
    for event in events {
        match event {
            RunEvent::ToolCall {
                id,
                name,
                input,
                parent_tool_use_id: None,
                ..
            } if names.contains(name) => {
                made.push((
                    id.clone(),
                    Delegation {
                        tool: name.clone(),
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
                    if !is_error {
                        delegation.task =
                            crate::background::started_task(output).map(|(task, _)| (task, None));
                    }
                }
            }
            // A background delegation's end (the runtime's progress event).
            RunEvent::Progress { message } => {
                if let Some((task, status)) = crate::background::ended_task(message) {
                    let ended = made.iter_mut().find_map(|(_, delegation)| {
                        delegation.task.as_mut().filter(|(id, _)| id == task)
                    });
                    if let Some((_, slot)) = ended {
                        *slot = Some(status.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    made.into_iter().map(|(_, d)| d).collect()
}

fn check(on: bool) -> &'static str {
    if on { "yes" } else { "-" }
}

fn providers(
    args: &ProvidersArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    let preset = setup::load_preset(&args.preset, factories)?;
    let listing = preset.listing(factories);
    if args.json {
        let value = serde_json::to_value(&listing).unwrap_or(Value::Null);
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    if args.markdown {
        print!("{}", providers_markdown(&listing));
    } else {
        println!("{}", providers_table(&listing));
    }
    Ok(ExitCode::from(EXIT_COMPLETED))
}

/// The capability table as Markdown, one row per provider.
pub fn providers_markdown(listing: &[subagent_preset::ProviderListing]) -> String {
    let mut out = String::from(
        "| provider | kind | output_schema | depth_limit | tool_filter | persona | model_override | max_turns | resume | isolation | effort | inherits_parent_context |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for row in listing {
        let c = &row.capabilities;
        let cells = [
            c.output_schema,
            c.depth_limit,
            c.tool_filter,
            c.persona,
            c.model_override,
            c.max_turns,
            c.resume,
            c.isolation,
            c.effort,
            c.inherits_parent_context,
        ]
        .map(check);
        out.push_str(&format!(
            "| {}{} | {} | {} |\n",
            row.name,
            if row.disabled { " (disabled)" } else { "" },
            row.kind,
            cells.join(" | ")
        ));
    }
    out
}

/// The widest cell of the text table, in characters: a longer name (a preset may hold any
/// string, and `format!` panics on a width over 65,535) is cut with an ellipsis; `--json` and
/// `--markdown` keep it whole.
const MAX_CELL_CHARS: usize = 40;

/// The capability table as text.
pub fn providers_table(listing: &[subagent_preset::ProviderListing]) -> String {
    let headers = [
        "provider",
        "kind",
        "state",
        "output_schema",
        "depth_limit",
        "tool_filter",
        "persona",
        "model_override",
        "max_turns",
        "resume",
        "isolation",
        "effort",
        "inherits_parent_context",
    ];
    let mut rows = vec![headers.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>()];
    for row in listing {
        let c = &row.capabilities;
        rows.push(vec![
            render::one_line(&row.name, MAX_CELL_CHARS),
            render::one_line(&row.kind, MAX_CELL_CHARS),
            if row.disabled {
                "disabled".into()
            } else {
                "enabled".into()
            },
            check(c.output_schema).into(),
            check(c.depth_limit).into(),
            check(c.tool_filter).into(),
            check(c.persona).into(),
            check(c.model_override).into(),
            check(c.max_turns).into(),
            check(c.resume).into(),
            check(c.isolation).into(),
            check(c.effort).into(),
            check(c.inherits_parent_context).into(),
        ]);
    }
    let widths: Vec<usize> = (0..headers.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|row| {
            row.iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn agents(args: &AgentsArgs, factories: &[Arc<dyn ProviderFactory>]) -> Result<ExitCode, Refusal> {
    // No agent runs: the scripted model, so that no key is looked for.
    let runnable = setup::runnable(&args.preset, true, None, factories)?;
    let entries = runnable.catalog.entries();
    let warnings = runnable.catalog.warnings();
    if args.json {
        let value = json!({ "agents": entries, "warnings": warnings });
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    println!(
        "{:<18} {:<12} {:<10} description",
        "name", "provider", "source"
    );
    for entry in &entries {
        let profile = entry.definition.profile();
        println!(
            "{:<18} {:<12} {:<10} {}",
            profile.name,
            profile
                .provider
                .clone()
                .unwrap_or_else(|| "(default)".into()),
            entry.definition.source.as_str(),
            render::one_line(&profile.description, 80)
        );
        println!("{:<18} from {}", "", entry.definition.origin);
        for overridden in &entry.overridden {
            println!(
                "{:<18} overrides {} ({})",
                "",
                overridden.source.as_str(),
                overridden.origin
            );
        }
    }
    if !warnings.is_empty() {
        eprintln!("warnings:");
        for warning in &warnings {
            eprintln!("  {warning}");
        }
    }
    Ok(ExitCode::from(EXIT_COMPLETED))
}

/// Builds what a run builds (the providers and their registry, with the offline model so that no
/// key is needed): a config a run would refuse is refused here, with the same message.
fn build_as_a_run_would(
    preset: &subagent_preset::Preset,
    factories: &[std::sync::Arc<dyn subagent_core::ProviderFactory>],
) -> Result<(), Refusal> {
    let model = setup::choose_model(preset.model.as_ref(), None, true)?;
    let secrets = setup::secrets(preset, factories, &model);
    let context = preset.build_context(setup::extensions(&model, &secrets));
    preset
        .build(factories, &context)
        .map(|_| ())
        .map_err(|error| Refusal::new(error.code().as_str(), error.to_string()))
}

fn validate(
    file: &std::path::Path,
    json: bool,
    factories: &[Arc<dyn ProviderFactory>],
) -> ExitCode {
    let env = |name: &str| std::env::var(name).ok();
    let loaded = subagent_preset::Preset::load(file, factories, &env);
    if let Ok(preset) = &loaded
        && let Err(refusal) = build_as_a_run_would(preset, factories)
    {
        return refusal.report(json);
    }
    match loaded {
        Ok(preset) => {
            let listing = preset.listing(factories);
            if json {
                println!(
                    "{}",
                    json!({
                        "valid": true,
                        "file": file,
                        "max_depth": preset.max_depth,
                        "providers": listing,
                        "tools": preset.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
                    })
                );
            } else {
                println!("{}: valid", file.display());
                println!("{}", providers_table(&listing));
                let tools: Vec<&str> = preset.tools.iter().map(|t| t.name.as_str()).collect();
                println!(
                    "delegation tools: {}",
                    if tools.is_empty() {
                        "none".to_owned()
                    } else {
                        tools.join(", ")
                    }
                );
            }
            ExitCode::from(EXIT_COMPLETED)
        }
        Err(error) => {
            if json {
                println!("{}", error.to_json());
            } else {
                eprintln!("error[{}]: {error}", error.code().as_str());
            }
            ExitCode::from(EXIT_REFUSED)
        }
    }
}
