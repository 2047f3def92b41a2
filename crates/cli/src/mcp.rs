//! `subagent mcp`: the preset's delegation rows served as MCP tools on stdio, or with `--listen`
//! over streamable HTTP (the protocol is `subagent-mcp`'s; this file builds the registry, the
//! rows and the config; the address and the token are read as `serve` reads them, `listen.rs`).
//!
//! stdout carries the protocol only (over HTTP, nothing); the announcement (over HTTP the URL,
//! with the real port when 0 was asked), the catalog's warnings, the model notice and logs go to
//! stderr. SIGTERM, SIGINT and SIGHUP cancel the runs going (their process trees stop) and end
//! the server, as the client closing stdin does.

use std::process::ExitCode;
use std::sync::Arc;

use subagent_core::ProviderFactory;
use subagent_core::agents::AgentDirectory;
use subagent_mcp::{HttpConfig, MCP_PATH, McpConfig, McpServer};
use subagent_preset::ToolRow;

use crate::args::McpArgs;
use crate::setup::{self, Runnable};
use crate::{EXIT_COMPLETED, EXIT_NOT_COMPLETED, Refusal, listen, warnings};

/// The rows served: the preset's, or, when it has none, one named after its first provider.
fn rows(runnable: &Runnable) -> Vec<ToolRow> {
    if !runnable.tools.is_empty() {
        return runnable.tools.clone();
    }
    runnable
        .registry
        .names()
        .into_iter()
        .next()
        .map(|provider| ToolRow {
            name: provider.clone(),
            provider,
            fork: None,
            max_depth: None,
            background: Default::default(),
            foreground_timeout_ms: None,
            tool_filter: None,
            persona: None,
            description: None,
            budget: None,
            location: Default::default(),
        })
        .into_iter()
        .collect()
}

/// `subagent mcp`.
pub(crate) async fn mcp(
    args: McpArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    // The address and the token first: a bad flag is refused before the preset is read.
    let token = listen::token(&args.token)?;
    let addr = args
        .listen
        .as_deref()
        .map(|listen| listen::address(listen, token.as_ref()))
        .transpose()?;
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
    if let Some(notice) = &runnable.model.notice {
        eprintln!("{notice}");
    }
    let rows = rows(&runnable);
    if rows.is_empty() {
        return Err(Refusal::invalid(
            "the preset has no enabled provider to serve",
        ));
    }
    let mut config = McpConfig::new(&runnable.cwd);
    config.max_depth = runnable.registry.max_depth();
    config.permission_ceiling = args.permission_mode;
    config.extensions = setup::extensions(&runnable.preset, &runnable.model);
    config.permission_rules = runnable.rules.child_rules();
    let agents: Arc<dyn AgentDirectory> = runnable.catalog.clone();
    let server = McpServer::new(Arc::clone(&runnable.registry), &rows, agents, config);
    let stop = crate::stop::stop_signal();
    let tools = server.tool_names().join(", ");
    let cwd = runnable.cwd.display();
    let served = if let Some(addr) = addr {
        subagent_http::raise_fd_limit();
        let (listener, bound) = listen::bind(addr)?;
        let mut http = HttpConfig::new();
        http.token = token;
        eprintln!(
            "subagent mcp: MCP streamable HTTP on http://{bound}{MCP_PATH}, tools: {tools}, runs in {cwd}"
        );
        server.serve_http(listener, http, stop).await
    } else {
        eprintln!("subagent mcp: MCP on stdio, tools: {tools}, runs in {cwd}");
        server
            .serve_until(tokio::io::stdin(), tokio::io::stdout(), stop)
            .await
    };
    match served {
        Ok(()) => Ok(ExitCode::from(EXIT_COMPLETED)),
        Err(error) => {
            eprintln!("error[{}]: {error}", error.code());
            Ok(ExitCode::from(EXIT_NOT_COMPLETED))
        }
    }
}
