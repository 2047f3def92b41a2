//! `subagent worker`: the preset's registry behind a NATS JetStream work queue, for the `nats`
//! rows of presets elsewhere (the queue, the acks and crash safety are `subagent-nats`'s; this
//! file builds the registry and the worker's config, as serve does for the A2A server).
//!
//! Credentials come from environment variables, never from the command line. SIGTERM, SIGINT
//! and SIGHUP drain: stop pulling, let the runs going end up to the drain time, then hand their
//! jobs back to the queue. Logs and notices go to stderr; stdout stays empty.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use subagent_core::ProviderFactory;
use subagent_nats::{Credentials, Tls, Worker, WorkerConfig};

use crate::args::WorkerArgs;
use crate::setup;
use crate::{EXIT_COMPLETED, EXIT_NOT_COMPLETED, Refusal, warnings};

/// `worker-<pid>@<host>`.
fn default_name() -> String {
    let host = subagent_session::read_user_text(Path::new("/proc/sys/kernel/hostname"), 256)
        .map(|host| host.trim().to_owned())
        .unwrap_or_default();
    if host.is_empty() {
        format!("worker-{}", std::process::id())
    } else {
        format!("worker-{}@{host}", std::process::id())
    }
}

/// `subagent worker`.
pub(crate) async fn worker(
    args: WorkerArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    let credentials = Credentials {
        token_env: args.token_env.clone(),
        user_env: args.user_env.clone(),
        password_env: args.password_env.clone(),
    };
    let auth = credentials
        .resolve(subagent_session::env::var)
        .map_err(|error| Refusal::invalid(error.to_string()))?;
    // The credentials' variables are configured secrets: no job's child inherits them.
    let runnable = setup::runnable_withholding(
        &args.preset.project,
        &(&args.preset).into(),
        args.model.as_deref(),
        setup::KeySwitch::AsWritten,
        factories,
        &credentials.variables(),
    )?;
    if crate::kinds::uses_default_model(&runnable.preset, factories, None) {
        runnable.model.require()?;
    }
    warnings::print(&runnable.catalog, &runnable.cwd);
    if let Some(notice) = &runnable.model.notice {
        eprintln!("{notice}");
    }
    if runnable.registry.names().is_empty() {
        return Err(Refusal::invalid(
            "the preset has no enabled provider to run jobs on",
        ));
    }
    // The configured MCP servers start once, for every job's in-process children.
    runnable.mcp.start().await;
    let mut config = WorkerConfig::new(&args.nats, &runnable.cwd);
    config.auth = auth;
    config.tls = Tls {
        ca_file: args.tls_ca.clone(),
        cert_file: args.tls_cert.clone(),
        key_file: args.tls_key.clone(),
    };
    config.name = args.name.clone().unwrap_or_else(default_name);
    config.concurrency = args.concurrency;
    config.ack_wait = Duration::from_millis(args.ack_wait_ms);
    config.attempts = args.attempts;
    config.drain = Duration::from_secs(args.drain_secs);
    config.extensions = setup::extensions(&runnable.preset, &runnable.model);
    let stop = crate::stop::stop_signal();
    let worker = Worker::connect(Arc::clone(&runnable.registry), config)
        .await
        .map_err(|error| Refusal::from(subagent_core::Error::from(error)))?;
    eprintln!(
        "subagent worker: rows {} on {} ({} at once), runs in {}",
        worker.rows().join(", "),
        args.nats,
        args.concurrency,
        runnable.cwd.display()
    );
    match worker.run(stop).await {
        Ok(()) => {
            eprintln!("subagent worker: stopped");
            Ok(ExitCode::from(EXIT_COMPLETED))
        }
        Err(error) => {
            eprintln!("error: {error}");
            Ok(ExitCode::from(EXIT_NOT_COMPLETED))
        }
    }
}
