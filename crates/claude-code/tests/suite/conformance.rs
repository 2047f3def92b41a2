//! The conformance kit (`subagent-conformance`) against the real `claude` CLI: a provider built
//! by the factory from a config pointing claude at the kit's fake model server, in a sandbox of
//! temp dirs (HOME, CLAUDE_CONFIG_DIR, CLAUDE_CODE_TMPDIR, a project outside any git repo), with
//! `bypassPermissions` so that a write happens unless a permission ceiling stops it.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use subagent_claude_code::{ClaudeCodeConfig, ClaudeCodeFactory, ClaudePermissionMode};
use subagent_conformance::{Adapter, StructuredAnswer, ToolCall};
use subagent_core::{ProviderFactory, SubagentProvider};
use subagent_test_support::FakeServer;
use tempfile::TempDir;

use super::harness::{claude_binary, inside_git_repo};

struct Claude {
    root: TempDir,
}

impl Claude {
    fn new() -> Self {
        let root = subagent_test_support::sandbox::dirs(
            "subagent-claude-conformance-",
            &["home", "home/.claude", "tmp", "project"],
        );
        assert!(!inside_git_repo(&root.path().join("project")));
        Self { root }
    }
}

impl Adapter for Claude {
    fn factory(&self) -> Arc<dyn ProviderFactory> {
        Arc::new(ClaudeCodeFactory)
    }

    fn provider(&self, server: &FakeServer) -> Arc<dyn SubagentProvider> {
        let dir = |name: &str| self.root.path().join(name).display().to_string();
        let config = ClaudeCodeConfig {
            binary: claude_binary(),
            permission_mode: ClaudePermissionMode::BypassPermissions,
            env: [
                ("HOME".to_owned(), dir("home")),
                ("CLAUDE_CONFIG_DIR".to_owned(), dir("home/.claude")),
                ("CLAUDE_CODE_TMPDIR".to_owned(), dir("tmp")),
                ("ANTHROPIC_BASE_URL".to_owned(), server.url()),
                ("ANTHROPIC_API_KEY".to_owned(), "dummy".to_owned()),
                ("IS_SANDBOX".to_owned(), "1".to_owned()),
            ]
            .into(),
            grace_ms: 5000,
            idle_timeout_secs: Some(120),
            timeout_secs: Some(170),
            ..ClaudeCodeConfig::default()
        };
        subagent_conformance::built(&ClaudeCodeFactory, "claude", &config)
    }

    fn workdir(&self) -> PathBuf {
        self.root.path().join("project")
    }

    fn write_call(&self, file: &str, text: &str) -> Option<ToolCall> {
        Some(ToolCall::new(
            "Bash",
            json!({"command": format!("printf '%s' '{text}' > {file}"), "description": "write a file"}),
        ))
    }

    fn structured_answer(&self) -> StructuredAnswer {
        StructuredAnswer::Tool("StructuredOutput".to_owned())
    }

    fn delegate_call(&self, prompt: &str) -> Option<ToolCall> {
        Some(ToolCall::new(
            "Agent",
            json!({"description": "nested task", "prompt": prompt, "subagent_type": "general-purpose"}),
        ))
    }
}

subagent_conformance::suite!(Claude::new());
