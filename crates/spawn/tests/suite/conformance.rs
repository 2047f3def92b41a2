//! The conformance kit (`subagent-conformance`) against spawn: children on the fake model
//! server, allowed to write (the ceiling check's control), with a delegation tool that starts a
//! second spawn provider (the depth check's nested agent), keeping transcripts in a directory of
//! their own (the resume check).

use std::path::PathBuf;
use std::sync::Arc;

use subagent_conformance::Adapter;
use subagent_core::agents::StaticAgents;
use subagent_core::{ProviderFactory, SubagentProvider};
use subagent_model::ModelKind;
use subagent_runtime::{
    DelegationTool, DelegationToolConfig, PermissionPolicy, SessionStore, Tool,
};
use subagent_spawn::{SpawnConfig, SpawnFactory, SpawnProvider};
use subagent_test_support::FakeServer;
use tempfile::TempDir;

use super::support::model;

struct Spawn {
    dir: TempDir,
    sessions: TempDir,
}

impl Adapter for Spawn {
    fn factory(&self) -> Arc<dyn ProviderFactory> {
        Arc::new(SpawnFactory)
    }

    fn provider(&self, server: &FakeServer) -> Arc<dyn SubagentProvider> {
        let model = model(ModelKind::Anthropic, server);
        let nested = SpawnProvider::new("nested", Arc::clone(&model), SpawnConfig::default());
        let nested = subagent_test_support::bench::registry_of(nested);
        let delegation: Arc<dyn Tool> = Arc::new(DelegationTool::new(
            DelegationToolConfig::new("nested"),
            Arc::new(nested),
            Arc::new(StaticAgents::default()),
        ));
        Arc::new(
            SpawnProvider::new("spawn", model, SpawnConfig::default())
                .with_permissions(PermissionPolicy::bypass())
                .with_tools([delegation])
                .with_sessions(SessionStore::new(self.sessions.path())),
        )
    }

    fn workdir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    subagent_conformance::runtime_tool_calls!();
}

subagent_conformance::suite!(Spawn {
    dir: tempfile::tempdir().unwrap(),
    sessions: tempfile::tempdir().unwrap(),
});
