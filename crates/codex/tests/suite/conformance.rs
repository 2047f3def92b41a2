//! The conformance kit (`subagent-conformance`) against the real `codex` CLI: a provider built
//! by the factory from a config pointing codex's model provider at the kit's fake server, in a
//! sandbox of temp dirs (HOME, CODEX_HOME, TMPDIR, a project outside any git repo), with a
//! `workspace-write` sandbox so that a write happens unless a permission ceiling stops it.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use subagent_codex::{CodexFactory, SandboxMode};
use subagent_conformance::{Adapter, ToolCall};
use subagent_core::{ProviderFactory, SubagentProvider};
use subagent_test_support::FakeServer;
use tempfile::TempDir;

use super::harness;

struct Codex {
    root: TempDir,
}

impl Codex {
    fn new() -> Self {
        let root = subagent_test_support::sandbox::dirs(
            "subagent-codex-conformance-",
            &["home", "codex-home", "tmp", "project"],
        );
        assert!(!subagent_codex::inside_git_repo(
            &root.path().join("project")
        ));
        Self { root }
    }
}

impl Adapter for Codex {
    fn factory(&self) -> Arc<dyn ProviderFactory> {
        Arc::new(CodexFactory)
    }

    fn provider(&self, server: &FakeServer) -> Arc<dyn SubagentProvider> {
        let mut config = harness::config(self.root.path(), server);
        config.sandbox = SandboxMode::WorkspaceWrite;
        config.timeout_secs = Some(170);
        subagent_conformance::built(&CodexFactory, "codex", &config)
    }

    fn workdir(&self) -> PathBuf {
        self.root.path().join("project")
    }

    fn write_call(&self, file: &str, text: &str) -> Option<ToolCall> {
        subagent_conformance::codex_write_call(file, text)
    }

    fn delegate_call(&self, prompt: &str) -> Option<ToolCall> {
        Some(
            ToolCall::new("spawn_agent", json!({"message": prompt})).in_namespace("multi_agent_v1"),
        )
    }
}

subagent_conformance::suite!(Codex::new());
