//! The kit's isolator: it moves a child that asks for isolation into a fresh empty directory
//! of its own (under the system's temp dir) and removes that directory when the run ends. Not a
//! git worktree (`subagent-worktree` is, and each provider's own tests run it with real git):
//! what the kit checks is the seam's part, that a provider declaring `isolation` passes the
//! gate and runs a child in the `parent.cwd` it is given.

use std::path::PathBuf;

use async_trait::async_trait;
use subagent_core::isolation::{Isolated, Isolator};
use subagent_core::{Error, Isolation, Result, Run, RunId, StartRequest};

pub(crate) struct Apart;

struct Place(PathBuf);

#[async_trait]
impl Isolator for Apart {
    async fn prepare(
        &self,
        _isolation: Isolation,
        request: &mut StartRequest,
    ) -> Result<Box<dyn Isolated>> {
        let dir = std::env::temp_dir().join(format!("subagent-kit-apart-{}", RunId::new().short()));
        std::fs::create_dir(&dir).map_err(|e| {
            Error::spawn_failed(format!("conformance: cannot make {}: {e}", dir.display()))
        })?;
        request.parent.cwd.clone_from(&dir);
        Ok(Box::new(Place(dir)))
    }
}

#[async_trait]
impl Isolated for Place {
    fn attach(self: Box<Self>, run: Run) -> Run {
        let (sender, relayed) = Run::relay(&run);
        tokio::spawn(async move {
            let outcome = sender.forward(run).await;
            std::fs::remove_dir_all(&self.0).ok();
            sender.finish(outcome);
        });
        relayed
    }

    async fn abandon(self: Box<Self>) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}
