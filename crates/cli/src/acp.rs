//! `subagent acp`: the `run` parent served to an editor over the Agent Client Protocol on
//! stdio (the protocol is `subagent-acp-agent`'s; this file only builds the parent).
//!
//! Each ACP session names its own working directory: the preset, the model and the agent
//! catalog are loaded for it the way `run` loads them for `--cwd` (once per directory, its
//! warnings on stderr). stdout carries the protocol only; logs and notices go to stderr.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use subagent_acp_agent::SessionTools;
use subagent_core::ProviderFactory;
use subagent_core::mcp::McpServerSpec;
use subagent_runtime::{Agent, PermissionBroker, PermissionPolicy};

use crate::args::{AcpArgs, PresetArgs, ProjectArgs};
use crate::setup::{self, Runnable};
use crate::{EXIT_COMPLETED, EXIT_NOT_COMPLETED, Refusal, warnings};

/// Builds a session's parent from the preset, as `run` does.
struct CliParent {
    args: AcpArgs,
    factories: Vec<Arc<dyn ProviderFactory>>,
    /// What was loaded for each session directory.
    loaded: Mutex<HashMap<PathBuf, Arc<Runnable>>>,
}

impl CliParent {
    fn runnable(&self, cwd: &Path) -> Result<Arc<Runnable>, Refusal> {
        if let Some(runnable) = self
            .loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(cwd)
        {
            return Ok(Arc::clone(runnable));
        }
        let project = ProjectArgs {
            preset: PresetArgs {
                preset: self.args.preset.project.preset.preset.clone(),
            },
            cwd: Some(cwd.to_path_buf()),
        };
        let runnable = Arc::new(setup::runnable(
            &project,
            &(&self.args.preset).into(),
            self.args.model.as_deref(),
            setup::KeySwitch::AsWritten,
            &self.factories,
        )?);
        runnable.model.require()?;
        warnings::print(&runnable.catalog, &runnable.cwd);
        self.loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(cwd.to_path_buf(), Arc::clone(&runnable));
        Ok(runnable)
    }
}

impl subagent_acp_agent::ParentFactory for CliParent {
    fn build(
        &self,
        cwd: &Path,
        broker: Arc<dyn PermissionBroker>,
        session: &SessionTools,
    ) -> Result<Agent, String> {
        let runnable = self
            .runnable(cwd)
            .map_err(|r| format!("{}: {}", r.code, r.message))?;
        let mode = crate::settings::permission_mode(self.args.permission_mode, &runnable.settings);
        let permissions = PermissionPolicy::new(mode)
            .with_settings(Arc::clone(&runnable.rules))
            .with_broker(broker);
        crate::parent::parent_agent(&runnable, self.args.max_turns, permissions, &session.tools)
            .map_err(|r| format!("{}: {}", r.code, r.message))
    }

    fn takes_mcp_servers(&self) -> bool {
        true
    }

    /// The project's configured servers (started once per directory, shared by its sessions)
    /// and the session's own, which stop with the session.
    fn session_tools<'a>(
        &'a self,
        cwd: &'a Path,
        servers: Vec<McpServerSpec>,
    ) -> BoxFuture<'a, Result<SessionTools, String>> {
        Box::pin(async move {
            let runnable = self
                .runnable(cwd)
                .map_err(|r| format!("{}: {}", r.code, r.message))?;
            runnable.mcp.start().await;
            Ok(crate::mcp_client::session_servers(servers, cwd, &runnable.secrets).await)
        })
    }
}

/// Serves ACP on stdin/stdout until the client closes stdin.
pub(crate) async fn acp(
    args: AcpArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    // The preset and the model are checked before anything is served, as `run` does.
    let runnable = setup::runnable(
        &args.preset.project,
        &(&args.preset).into(),
        args.model.as_deref(),
        setup::KeySwitch::AsWritten,
        factories,
    )?;
    runnable.model.require()?;
    warnings::print(&runnable.catalog, &runnable.cwd);
    if let Some(notice) = &runnable.model.notice {
        eprintln!("{notice}");
    }
    let cwd = runnable.cwd.clone();
    let parent = CliParent {
        args,
        factories: factories.to_vec(),
        loaded: Mutex::new(HashMap::from([(cwd, Arc::new(runnable))])),
    };
    tracing::debug!("serving ACP on stdio");
    match subagent_acp_agent::serve(Arc::new(parent), tokio::io::stdin(), tokio::io::stdout()).await
    {
        Ok(()) => Ok(ExitCode::from(EXIT_COMPLETED)),
        Err(error) => {
            eprintln!("error[{}]: {error}", subagent_core::ErrorCode::Protocol);
            Ok(ExitCode::from(EXIT_NOT_COMPLETED))
        }
    }
}
