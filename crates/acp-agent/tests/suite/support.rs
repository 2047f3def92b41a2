//! A parent like `subagent run`'s (built-in tools, a `subagent` delegation tool on spawn) over
//! a fake model server, served on one end of a pipe; the official SDK's client on the other.

use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionNotification, StopReason, TextContent,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent as AcpAgent, ByteStreams, Client};
use serde_json::Value;
use subagent_acp_agent::ParentFactory;
use subagent_core::PermissionMode;
use subagent_core::agents::{AgentDirectory, StaticAgents};
use subagent_core::registry::Registry;
use subagent_model::{Model, ModelKind};
use subagent_runtime::tools::BashConfig;
use subagent_runtime::{
    Agent, AgentConfig, DelegationTool, DelegationToolConfig, PermissionBroker, PermissionPolicy,
    Roots, Tool, ToolSet,
};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::FakeServer;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// Builds the parent the CLI builds, minus the preset.
pub(super) struct TestParent {
    model: Arc<dyn Model>,
    registry: Arc<Registry>,
    mode: PermissionMode,
    pub max_turns: Option<u32>,
}

impl TestParent {
    pub(super) fn new(server: &FakeServer, mode: PermissionMode) -> Self {
        let model = server.model(ModelKind::Anthropic);
        let registry = Registry::with_max_depth(3);
        let spawn = SpawnProvider::new("spawn", Arc::clone(&model), SpawnConfig::default());
        registry.register(Arc::new(spawn)).unwrap();
        Self {
            model,
            registry: Arc::new(registry),
            mode,
            max_turns: None,
        }
    }
}

impl ParentFactory for TestParent {
    fn build(
        &self,
        cwd: &Path,
        broker: Arc<dyn PermissionBroker>,
        _session: &subagent_acp_agent::SessionTools,
    ) -> Result<Agent, String> {
        let agents: Arc<dyn AgentDirectory> = Arc::new(StaticAgents(Vec::new()));
        let delegation: Arc<dyn Tool> = Arc::new(DelegationTool::new(
            DelegationToolConfig::new("spawn"),
            Arc::clone(&self.registry),
            agents,
        ));
        let tools = ToolSet::new(
            ToolSet::builtin(BashConfig::default())
                .into_iter()
                .chain([delegation]),
        );
        let roots = Roots::new(cwd).map_err(|e| e.to_string())?;
        let mut config = AgentConfig::new(Arc::clone(&self.model), roots);
        config.system = Some("You are the parent.".to_owned());
        config.tools = tools;
        config.max_turns = self.max_turns;
        config.permissions = PermissionPolicy::new(self.mode).with_broker(broker);
        Agent::new(config).map_err(|e| e.to_string())
    }
}

/// What the client saw: every `session/update` (as JSON, in order) and every permission
/// question.
#[derive(Clone, Default)]
pub(super) struct Seen {
    pub updates: Arc<Mutex<Vec<Value>>>,
    pub questions: Arc<Mutex<Vec<Value>>>,
}

impl Seen {
    pub(super) fn updates(&self) -> Vec<Value> {
        self.updates.lock().unwrap().clone()
    }

    pub(super) fn questions(&self) -> Vec<Value> {
        self.questions.lock().unwrap().clone()
    }

    /// The `toolCall.<field>` of each question, in order.
    pub(super) fn asked(&self, field: &str) -> Vec<Value> {
        self.questions()
            .iter()
            .map(|q| q["toolCall"][field].clone())
            .collect()
    }

    /// The text of the agent's message chunks, joined.
    pub(super) fn message(&self) -> String {
        self.updates()
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// How the client answers permission questions.
pub(super) type Answer =
    Arc<dyn Fn(&RequestPermissionRequest) -> RequestPermissionOutcome + Send + Sync>;

pub(super) fn select(option: &'static str) -> Answer {
    Arc::new(move |_| RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option)))
}

/// A parent in the default mode on the fake server of `scenarios`, served to a client that opens a
/// session over a temp dir and sends `text`, answering questions with `answer`; the prompt
/// must end its turn. What the client saw, and the dir.
pub(super) async fn prompt_once(
    scenarios: &str,
    answer: Answer,
    text: &str,
) -> (Seen, tempfile::TempDir) {
    let server = FakeServer::from_yaml(scenarios).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let parent = Arc::new(TestParent::new(&server, PermissionMode::Default));
    let (stop, seen) = with_client(parent, answer, async |cx, _| {
        let session = open(&cx, dir.path()).await;
        prompt(&cx, &session, text).await
    })
    .await;
    assert_eq!(stop, Ok(StopReason::EndTurn));
    (seen, dir)
}

/// Serves `factory` on one end of a pipe and runs `body` with a client on the other; the
/// client's end closes when `body` returns and the server's end is awaited.
pub(super) async fn with_client<R>(
    factory: Arc<dyn ParentFactory>,
    answer: Answer,
    body: impl AsyncFnOnce(ConnectionTo<AcpAgent>, Seen) -> R,
) -> (R, Seen) {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_end);
    let server = tokio::spawn(subagent_acp_agent::serve(
        factory,
        server_read,
        server_write,
    ));
    let (client_read, client_write) = tokio::io::split(client_end);
    let seen = Seen::default();
    let (updates, questions) = (Arc::clone(&seen.updates), Arc::clone(&seen.questions));
    let body_seen = seen.clone();
    let result = Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx: ConnectionTo<AcpAgent>| {
                let update = serde_json::to_value(&notification.update).unwrap();
                updates.lock().unwrap().push(update);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse>,
                        _cx: ConnectionTo<AcpAgent>| {
                questions
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&request).unwrap());
                responder.respond(RequestPermissionResponse::new(answer(&request)))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(
            ByteStreams::new(client_write.compat_write(), client_read.compat()),
            async move |cx: ConnectionTo<AcpAgent>| Ok(body(cx, body_seen).await),
        )
        .await
        .unwrap();
    server.await.unwrap().unwrap();
    (result, seen)
}

/// initialize + session/new in `cwd`: the session id.
pub(super) async fn open(cx: &ConnectionTo<AcpAgent>, cwd: &Path) -> String {
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
        .block_task()
        .await
        .unwrap();
    let session = cx
        .send_request(NewSessionRequest::new(cwd))
        .block_task()
        .await
        .unwrap();
    session.session_id.0.to_string()
}

/// One text prompt: its stop reason, or the error's JSON.
pub(super) async fn prompt(
    cx: &ConnectionTo<AcpAgent>,
    session: &str,
    text: &str,
) -> Result<StopReason, Value> {
    cx.send_request(PromptRequest::new(
        session.to_owned(),
        vec![ContentBlock::Text(TextContent::new(text))],
    ))
    .block_task()
    .await
    .map(|response| response.stop_reason)
    .map_err(|error| serde_json::to_value(&error).unwrap())
}
