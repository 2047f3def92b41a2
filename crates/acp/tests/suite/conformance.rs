//! The conformance kit (`subagent-conformance`) against the real `codex-acp` adapter: a provider
//! built by the factory from a row pointing codex's model provider at the kit's fake server, in
//! a sandbox of temp dirs, its row's mode `accept-edits` (codex-acp's `auto`: writes in the
//! workspace) so that a write happens unless a `plan` ceiling (codex-acp's `read-only`) stops it.

use std::path::PathBuf;
use std::sync::Arc;

use subagent_acp::AcpFactory;
use subagent_conformance::{Adapter, ToolCall};
use subagent_core::{PermissionMode, ProviderFactory, SubagentProvider};
use subagent_test_support::FakeServer;
use tempfile::TempDir;

use super::harness::{self, Adapter as Pinned};

struct CodexAcp {
    root: TempDir,
}

impl CodexAcp {
    fn new() -> Self {
        let root = subagent_test_support::sandbox::dirs("subagent-acp-conformance-", &["project"]);
        Self { root }
    }
}

impl Adapter for CodexAcp {
    fn factory(&self) -> Arc<dyn ProviderFactory> {
        Arc::new(AcpFactory)
    }

    fn provider(&self, server: &FakeServer) -> Arc<dyn SubagentProvider> {
        let mut config = harness::config(Pinned::Codex, server, self.root.path());
        config.permission_mode = PermissionMode::AcceptEdits;
        subagent_conformance::built(&AcpFactory, "codex-acp", &config)
    }

    fn workdir(&self) -> PathBuf {
        self.root.path().join("project")
    }

    fn write_call(&self, file: &str, text: &str) -> Option<ToolCall> {
        subagent_conformance::codex_write_call(file, text)
    }
}

subagent_conformance::suite!(CodexAcp::new());
