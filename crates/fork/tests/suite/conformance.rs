//! The conformance kit (`subagent-conformance`) against fork, the way the in-process runtime
//! starts it: inside a delegation call, from the parent's snapshot (its conversation, tools,
//! model on the fake server, and a policy that lets it write: the ceiling check's control).
//! A fork never delegates (it runs at its own depth cap), so the adapter has no delegate call
//! and the depth check proves the registry's gate and that a capped request runs. Transcripts go
//! to a directory of their own (the resume check resumes inside a tool call, from the same
//! parent).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use subagent_conformance::{Adapter, ToolCall, runtime_tools};
use subagent_core::{
    ParentContext, ProviderFactory, RunId, StartRequestBuilder, StopReason, SubagentProvider,
};
use subagent_fork::{ForkConfig, ForkFactory, ForkProvider};
use subagent_model::ModelKind;
use subagent_runtime::tools::BashConfig;
use subagent_runtime::{
    EventLog, ParentSnapshot, PermissionPolicy, Roots, RunEnv, Secrets, SessionStore, TaskTable,
    ToolSet,
};
use subagent_session::{ContentBlock, Message, Role, SessionEvent};
use subagent_test_support::FakeServer;
use tempfile::TempDir;

use super::support::{PARENT_SYSTEM, model};

struct Fork {
    dir: TempDir,
    sessions: TempDir,
}

impl Fork {
    /// The parent at the moment it called its delegation tool: one exchange, ending with the
    /// assistant message that made the call.
    fn snapshot(&self, server: &FakeServer) -> ParentSnapshot {
        let messages = vec![
            Message::user("Look into the project, forking where it helps."),
            Message::new(
                Role::Assistant,
                vec![ContentBlock::tool_use(
                    "call_parent_1",
                    "subagent",
                    json!({"prompt": "the fork's task"}),
                )],
            ),
        ];
        let mut log = EventLog::new();
        log.append(SessionEvent::TurnStart { turn: 0 });
        log.extend(messages.iter().cloned().map(SessionEvent::message));
        log.append(SessionEvent::TurnEnd {
            stop_reason: StopReason::Completed,
        });
        let roots = Roots::new(self.dir.path()).unwrap();
        ParentSnapshot {
            system: Some(PARENT_SYSTEM.into()),
            tools: ToolSet::new(ToolSet::builtin(BashConfig::default())),
            model: model(ModelKind::Anthropic, server),
            model_id: None,
            effort: None,
            max_tokens: 4096,
            log,
            messages: messages.into(),
            call_id: "call_parent_1".to_owned(),
            env: Arc::new(RunEnv {
                run_id: RunId::new(),
                roots,
                depth: 0,
                max_depth: 3,
                background: false,
                lineage: Vec::new(),
                permissions: PermissionPolicy::bypass(),
                tasks: Arc::new(TaskTable::default()),
                secrets: Secrets::new(),
                sessions: None,
            }),
        }
    }
}

impl Adapter for Fork {
    fn factory(&self) -> Arc<dyn ProviderFactory> {
        Arc::new(ForkFactory)
    }

    fn provider(&self, _server: &FakeServer) -> Arc<dyn SubagentProvider> {
        Arc::new(
            ForkProvider::new("fork", ForkConfig::default(), None)
                .with_sessions(SessionStore::new(self.sessions.path())),
        )
    }

    fn workdir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    fn request(&self, server: &FakeServer, prompt: &str) -> StartRequestBuilder {
        let mut parent = ParentContext::new(self.workdir());
        parent.extensions.insert(self.snapshot(server));
        subagent_core::StartRequest::builder(prompt).parent(parent)
    }

    fn write_call(&self, file: &str, text: &str) -> Option<ToolCall> {
        runtime_tools::write_call(file, text)
    }
}

subagent_conformance::suite!(Fork {
    dir: tempfile::tempdir().unwrap(),
    sessions: tempfile::tempdir().unwrap(),
});
