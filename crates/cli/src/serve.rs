//! `subagent serve`: the preset's registry served as an A2A 1.0 agent (the protocol and its
//! limits are `subagent-server`'s; this file builds the registry, the skills and the config).
//!
//! The token comes from an environment variable or a file, never from the command line, and
//! without a token only a loopback address may be served (`listen.rs`, shared with `mcp
//! --listen`). SIGTERM, SIGINT and SIGHUP drain: stop accepting, let runs end up to the drain
//! deadline, then cancel them, then delete the transcripts of the tasks kept (unless
//! `--keep-transcripts`; a forgotten task's goes when it is forgotten). Logs and notices go to
//! stderr; stdout stays empty.

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use subagent_core::ProviderFactory;
use subagent_core::agents::AgentDirectory;
use subagent_server::{Server, ServerConfig, Skill};

use crate::args::ServeArgs;
use crate::setup::{self, Runnable};
use crate::{EXIT_COMPLETED, EXIT_NOT_COMPLETED, Refusal, listen, warnings};

/// Refuses the bounds that make no sense (a server that runs nothing, reads no body or
/// remembers no task) and a public URL a client could not follow (it goes into the card).
fn check_bounds(args: &ServeArgs) -> Result<(), Refusal> {
    if args.max_runs == 0 {
        return Err(Refusal::invalid(
            "--max-runs 0: a server runs at least 1 run at once",
        ));
    }
    if args.max_body == 0 {
        return Err(Refusal::invalid(
            "--max-body 0: a request body of 0 bytes holds no request",
        ));
    }
    if args.keep_tasks == 0 {
        return Err(Refusal::invalid(
            "--keep-tasks 0: a server remembers at least 1 task (the one it runs)",
        ));
    }
    if args.keep_task_bytes == 0 {
        return Err(Refusal::invalid(
            "--keep-task-bytes 0: a server keeps at least the task it runs",
        ));
    }
    if args.header_timeout_secs == 0 {
        return Err(Refusal::invalid(
            "--header-timeout-secs 0: a client needs some time to send a request",
        ));
    }
    if let Some(url) = &args.public_url
        && !subagent_server::is_public_url(url)
    {
        return Err(Refusal::invalid(format!(
            "--public-url {url}: not an http:// or https:// URL with a host (e.g. https://agents.example.com)"
        )));
    }
    Ok(())
}

/// The bounds on connections: the flags, else the defaults for `fd_limit` (the process's
/// limit on open files); a bound the limit cannot hold, or zero, is refused.
fn connection_bounds(args: &ServeArgs, fd_limit: u64) -> Result<(usize, usize), Refusal> {
    let (default_max, default_per_peer) = subagent_server::default_bounds(fd_limit);
    let reserved = subagent_server::reserved_fds(fd_limit);
    let room = fd_limit.saturating_sub(reserved);
    let Some(max) = args.max_connections else {
        if u64::try_from(default_max).unwrap_or(u64::MAX) > room {
            return Err(Refusal::invalid(format!(
                "this process may open only {fd_limit} files ({reserved} of them kept for runs): too few to serve; raise the limit first, e.g. `ulimit -n 1024`"
            )));
        }
        let per_peer = args.max_connections_per_peer.unwrap_or(default_per_peer);
        return per_peer_bound(per_peer, default_max);
    };
    if max == 0 {
        return Err(Refusal::invalid(
            "--max-connections 0: a server takes at least 1 connection",
        ));
    }
    if u64::try_from(max).unwrap_or(u64::MAX) > room {
        return Err(Refusal::invalid(format!(
            "--max-connections {max}: past what this process may open ({fd_limit} files, {reserved} of them kept for runs)"
        )));
    }
    let per_peer = args
        .max_connections_per_peer
        .unwrap_or_else(|| default_per_peer.min(max));
    per_peer_bound(per_peer, max)
}

/// `per_peer` checked against `max`; both bounds.
fn per_peer_bound(per_peer: usize, max: usize) -> Result<(usize, usize), Refusal> {
    if per_peer == 0 {
        return Err(Refusal::invalid(
            "--max-connections-per-peer 0: a server takes at least 1 connection from a peer",
        ));
    }
    if per_peer > max {
        return Err(Refusal::invalid(format!(
            "--max-connections-per-peer {per_peer}: more than --max-connections {max}"
        )));
    }
    Ok((max, per_peer))
}

/// The skills: the preset's delegation rows, then the agent types (each on its own provider,
/// or the first row's), skipping an agent type named like a row.
fn skills(runnable: &Runnable) -> Vec<Skill> {
    let mut skills: Vec<Skill> = runnable
        .tools
        .iter()
        .map(|row| Skill {
            id: row.name.clone(),
            description: row.description.clone().unwrap_or_else(|| {
                format!("Delegate a task to the \"{}\" provider.", row.provider)
            }),
            provider: row.provider.clone(),
            agent: None,
        })
        .collect();
    let default_provider = runnable
        .tools
        .first()
        .map(|row| row.provider.clone())
        .or_else(|| runnable.registry.names().into_iter().next());
    if skills.is_empty()
        && let Some(provider) = &default_provider
    {
        skills.push(Skill {
            id: provider.clone(),
            description: format!("Delegate a task to the \"{provider}\" provider."),
            provider: provider.clone(),
            agent: None,
        });
    }
    for agent in runnable.catalog.agents() {
        if skills.iter().any(|skill| skill.id == agent.name) {
            continue;
        }
        let Some(provider) = agent.provider.clone().or_else(|| default_provider.clone()) else {
            continue;
        };
        skills.push(Skill {
            id: agent.name.clone(),
            description: agent.description.clone(),
            provider,
            agent: Some(agent),
        });
    }
    skills
}

/// `subagent serve`.
pub(crate) async fn serve(
    args: ServeArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    // First: the connections' default bounds follow the limit in force.
    let fd_limit = subagent_server::raise_fd_limit();
    let token = listen::token(&args.token)?;
    check_bounds(&args)?;
    let connections = connection_bounds(&args, fd_limit)?;
    let addr = listen::address(&args.listen, token.as_ref())?;
    // The token's variable is a configured secret: no run's child inherits it.
    let runnable = setup::runnable_withholding(
        &args.preset.project,
        &(&args.preset).into(),
        args.model.as_deref(),
        setup::KeySwitch::AsWritten,
        factories,
        &args.token.token_env.iter().cloned().collect::<Vec<_>>(),
    )?;
    if crate::kinds::uses_default_model(&runnable.preset, factories, None) {
        runnable.model.require()?;
    }
    warnings::print(&runnable.catalog, &runnable.cwd);
    // The configured MCP servers start once, for every in-process child this server runs.
    runnable.mcp.start().await;
    let skills = skills(&runnable);
    if skills.is_empty() {
        return Err(Refusal::invalid(
            "the preset has no enabled provider to serve",
        ));
    }
    let mut config = ServerConfig::new(&runnable.cwd);
    config.permission_rules = runnable.rules.child_rules();
    config.token = token;
    config.max_depth = runnable.registry.max_depth();
    config.public_url = args.public_url.clone();
    config.max_concurrent_runs = args.max_runs;
    config.body_limit = args.max_body;
    config.drain_deadline = Duration::from_secs(args.drain_secs);
    config.keep_tasks = args.keep_tasks;
    config.keep_task_bytes = args.keep_task_bytes;
    (config.max_connections, config.max_connections_per_peer) = connections;
    config.header_timeout = Duration::from_secs(args.header_timeout_secs);
    if !args.keep_transcripts {
        config.delete_transcripts_in = runnable
            .sessions
            .as_ref()
            .map(|store| store.dir().to_path_buf());
    }
    let stop = crate::stop::stop_signal();
    let (listener, bound) = listen::bind(addr)?;
    announce(bound, &skills, &runnable.cwd);
    let server = Server::new(Arc::clone(&runnable.registry), skills, config);
    match server.serve(listener, stop).await {
        Ok(()) => {
            eprintln!("subagent serve: stopped");
            Ok(ExitCode::from(EXIT_COMPLETED))
        }
        Err(error) => {
            eprintln!("error: {error}");
            Ok(ExitCode::from(EXIT_NOT_COMPLETED))
        }
    }
}

fn announce(addr: SocketAddr, skills: &[Skill], cwd: &Path) {
    let names: Vec<&str> = skills.iter().map(|skill| skill.id.as_str()).collect();
    eprintln!(
        "subagent serve: A2A 1.0 on http://{addr}{} (card: http://{addr}{}), skills: {}, runs in {}",
        subagent_server::RPC_PATH,
        subagent_server::AGENT_CARD_PATH,
        names.join(", "),
        cwd.display()
    );
}
