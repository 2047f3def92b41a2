//! `subagent delegate`: one child through the registry.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use subagent_core::agents::AgentDirectory;
use subagent_core::{Asker, ProviderFactory, StartRequest};
use subagent_runtime::{PermissionPolicy, PolicyAsker};

use super::{continue_command, exit_for, notice, read_prompt, session_ref};
use crate::Refusal;
use crate::args::DelegateArgs;
use crate::broker::TerminalBroker;
use crate::drive::{Interrupts, drive};
use crate::render::{self, Mode, Progress};
use crate::setup::{self};
use crate::warnings;

pub(super) async fn delegate(
    args: DelegateArgs,
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
        None,
        setup::KeySwitch::Switch,
        factories,
    )?;
    crate::flags::add_agents(&mut runnable, args.agents.as_deref())?;
    // `--continue`: the latest session a child of this directory ran (of --provider, when
    // given), continued as `--resume` would continue it.
    let resume = if args.continue_latest {
        let rows = &runnable.preset.providers;
        let wanted = |name: &str| match &args.provider {
            Some(provider) => name == provider,
            None => rows
                .iter()
                .any(|row| row.name == name && crate::kinds::in_process(row, factories)),
        };
        Some(super::sessions::latest(&runnable.cwd, "child", wanted)?.id)
    } else {
        args.resume.clone()
    };
    // A resumed child keeps what it ran with (its provider, agent type and worktree) unless
    // the command says otherwise; a session without that record goes back to the provider its
    // session's record names.
    let record = resume
        .as_deref()
        .and_then(|id| runnable.sessions.as_ref()?.recall(id));
    let recorded = resume
        .as_deref()
        .and_then(|id| runnable.sessions.as_ref()?.find(id))
        .and_then(|entry| entry.info)
        .map(|info| info.provider);
    let agent = args
        .agent
        .clone()
        .or_else(|| record.as_ref().and_then(|r| r.agent_type.clone()));
    let kept = record
        .as_ref()
        .and_then(subagent_runtime::ChildRecord::kept_cwd);
    let profile = match &agent {
        Some(name) => Some(
            runnable
                .catalog
                .get(name)
                .ok_or_else(|| warnings::unknown_agent(&runnable.catalog, name, &runnable.cwd))?,
        ),
        None => None,
    };
    warnings::print(&runnable.catalog, &runnable.cwd);
    warnings::print_skills(&runnable.skills, &runnable.catalog, &runnable.cwd);
    let provider = match (
        &args.provider,
        record
            .as_ref()
            .map(|r| r.provider.clone())
            .or(recorded)
            .or_else(|| profile.as_ref().and_then(|p| p.provider.clone())),
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
    let cwd = kept.as_deref().unwrap_or(&runnable.cwd);
    // The settings' rules hold in the child: a provider that cannot keep them refuses.
    let mut builder = StartRequest::builder(prompt)
        .cwd(cwd)
        .permission_rules(runnable.rules.child_rules());
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
        && kept.is_none()
    {
        builder = builder.isolation(isolation);
    }
    if let Some(id) = &resume {
        builder = builder.resume(session_ref(&provider, id, cwd));
    }
    if let Some(value) = &args.output_schema {
        builder = builder.output_schema(crate::flags::output_schema(value)?);
    }
    let mut request = builder.build();
    request.parent.extensions = setup::extensions(&runnable.preset, &runnable.model);
    // What the agent type gives its child beyond its settings (hooks, skills, memory, MCP
    // servers).
    if let Some(profile) = &profile {
        subagent_runtime::agent_parts::give(profile, &mut request).map_err(Refusal::invalid)?;
    }
    let asking = Arc::new(AtomicBool::new(false));
    request.parent.asker = asker(&runnable, &request, Arc::clone(&asking));
    known_provider(&runnable, &provider)?;
    // The model (its notice, its key) matters only when an in-process agent runs on it.
    if crate::kinds::uses_default_model(&runnable.preset, factories, Some(&provider)) {
        runnable.model.require()?;
        notice(&runnable, mode);
        // An in-process child gets the MCP servers' tools.
        runnable.mcp.start().await;
    }
    let mut interrupts = Interrupts::listen();
    let on_preset_model = args.model.is_none()
        && crate::kinds::uses_default_model(&runnable.preset, factories, Some(&provider));
    let budget = crate::flags::budget(
        &runnable,
        args.max_tokens_budget,
        args.max_budget_usd,
        on_preset_model,
        profile.as_ref(),
    )?;
    let run = runnable.registry.start(&provider, request).await?;
    let mut run = subagent_runtime::budget::enforce(run, budget);
    if let Some(store) = &runnable.sessions {
        let ran = subagent_runtime::ChildRecord {
            provider: provider.clone(),
            agent_type: profile.as_ref().map(|p| p.name.clone()),
            cwd: None,
            worktree: record.and_then(|r| r.worktree).filter(|_| kept.is_some()),
        };
        run = store.recording(run, ran);
    }
    let run_id = run.id();
    tracing::debug!(%run_id, %provider, cwd = %runnable.cwd.display(), "child started");
    let mut progress = Progress::new(mode, provider.clone());
    progress.pause_while(asking);
    let driven = drive(run, &mut progress, &mut interrupts).await;
    if mode == Mode::Json {
        render::print_json_line(&render::outcome_json(run_id, &provider, &driven.outcome));
    } else {
        render::print_outcome_human(&driven.outcome, &progress);
        let resume = continue_command(
            "delegate",
            &args.preset,
            &[
                ("--model", args.model.clone()),
                ("--provider", Some(provider.clone())),
            ],
            &[],
        );
        if let Some(line) = render::session_line(&driven.outcome, &resume) {
            eprintln!("{line}");
        }
    }
    Ok(exit_for(driven.outcome.status, driven.interrupted))
}

/// How a child that can ask (claude, an ACP agent) is answered: as `subagent run` decides its
/// own calls, by the settings' rules and mode, then their `PermissionRequest` hooks, then the
/// user when stdin and stderr are a terminal; never looser than the request's ceiling (the
/// agent type's mode). `None` when there is nobody to ask and no hook to answer: the child then
/// runs as its row says, the rules handed to it (`asking` is set while the user is asked).
fn asker(
    runnable: &setup::Runnable,
    request: &StartRequest,
    asking: Arc<AtomicBool>,
) -> Option<Asker> {
    let mode = crate::settings::permission_mode(None, &runnable.settings);
    let mut policy = PermissionPolicy::new(mode).with_settings(Arc::clone(&runnable.rules));
    let hooked = runnable
        .settings
        .hooks
        .has(&subagent_settings::HookEvent::PermissionRequest);
    match TerminalBroker::if_interactive(asking, request.cancel.clone()) {
        Some(broker) => policy = policy.with_broker(broker),
        None if !hooked => return None,
        None => {}
    }
    let mut asker = PolicyAsker::new(policy, false, request.cancel.clone())
        .with_secrets(runnable.secrets.clone())
        .in_project(runnable.cwd.clone());
    if let Some(ceiling) = request.permission_ceiling {
        asker = asker.under(ceiling);
    }
    Some(Asker(Arc::new(asker)))
}

/// Where a preset's row is, for people: `FILE:LINE:COLUMN`, or for the built-in preset the
/// file it copies and what to do with a copy.
fn row_place(preset: &subagent_preset::Preset, row: &subagent_preset::ProviderRow) -> String {
    let path = preset.path.display().to_string();
    match path.strip_suffix(" (built in)") {
        Some(copied) => format!(
            "the built-in standard preset ({copied}:{}): set `disabled: false` on its row in a copy of it to use it",
            row.location.line
        ),
        None => format!(
            "{path}:{}:{}: set `disabled: false` on its row to use it",
            row.location.line, row.location.column
        ),
    }
}

/// Refuses a provider the registry does not have, before anything starts: a disabled row says
/// where it is and how to enable it; an unknown name gets the row meant (a prefix, or a typo
/// away), disabled rows included.
fn known_provider(runnable: &setup::Runnable, provider: &str) -> Result<(), Refusal> {
    let enabled = runnable.registry.names();
    if enabled.iter().any(|name| name == provider) {
        return Ok(());
    }
    let rows = &runnable.preset.providers;
    if let Some(row) = rows.iter().find(|row| row.name == provider && row.disabled) {
        return Err(Refusal::new(
            subagent_core::ErrorCode::UnknownProvider,
            format!(
                "provider \"{provider}\" is disabled in {} (enabled: {})",
                row_place(&runnable.preset, row),
                enabled.join(", ")
            ),
        ));
    }
    let names: Vec<&str> = rows.iter().map(|row| row.name.as_str()).collect();
    let meant = names
        .iter()
        .find(|name| name.starts_with(provider) || provider.starts_with(**name))
        .copied()
        .or_else(|| subagent_catalog::closest(provider, &names));
    // The seam's own words, then the row meant.
    let mut message = subagent_core::Error::UnknownProvider {
        name: provider.to_owned(),
        known: enabled,
    }
    .to_string();
    if let Some(row) = meant.and_then(|name| rows.iter().find(|row| row.name == name)) {
        message.push_str(&format!(": did you mean \"{}\"?", row.name));
        if row.disabled {
            message.push_str(&format!(
                " It is disabled in {}",
                row_place(&runnable.preset, row)
            ));
        }
    }
    Err(Refusal::new(
        subagent_core::ErrorCode::UnknownProvider,
        message,
    ))
}
