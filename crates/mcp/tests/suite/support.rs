//! An MCP server over a registry of spawn children on the fake model server, and an MCP client
//! on the official SDK (rmcp's client side) over an in-memory duplex pipe.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, JsonObject,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestHandle, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use subagent_core::PermissionMode;
use subagent_core::agents::{AgentProfile, StaticAgents};
use subagent_core::registry::Registry;
use subagent_mcp::{McpConfig, McpServer};
use subagent_model::{Model, ModelKind};
use subagent_preset::ToolRow;
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::FakeServer;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The client side: records the progress notifications it gets.
#[derive(Clone)]
pub(super) struct Recorder {
    progress: mpsc::UnboundedSender<ProgressNotificationParam>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params);
    }
}

pub(super) struct Harness {
    pub model: FakeServer,
    pub client: RunningService<RoleClient, Recorder>,
    pub progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
    pub serving: JoinHandle<subagent_mcp::Result<()>>,
    pub dir: tempfile::TempDir,
}

/// How a harness is set up.
pub(super) struct Setup {
    pub max_depth: u32,
    pub ceiling: Option<PermissionMode>,
    pub spawn_mode: Option<PermissionMode>,
    pub rows: Vec<ToolRow>,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            max_depth: 3,
            ceiling: None,
            spawn_mode: Some(PermissionMode::AcceptEdits),
            rows: vec![
                row("subagent", "spawn", None),
                row("helper", "spawn", Some("A helper.")),
            ],
        }
    }
}

/// A `tools:` row as a preset would spell it: `name`, `provider` and `description`, defaults
/// otherwise.
pub(super) fn row(name: &str, provider: &str, description: Option<&str>) -> ToolRow {
    let row = serde_json::json!({"name": name, "provider": provider, "description": description});
    serde_json::from_value(row).unwrap()
}

fn model(server: &FakeServer) -> Arc<dyn Model> {
    server.model(ModelKind::Anthropic)
}

pub(super) fn agents() -> StaticAgents {
    let mut explore = AgentProfile::new("explore", "Read-only search of the code.");
    explore.instructions = Some("You only read.".to_owned());
    explore.permission_mode = Some(PermissionMode::Plan);
    let mut elsewhere = AgentProfile::new("elsewhere", "Runs on a provider that is not here.");
    elsewhere.provider = Some("nowhere".to_owned());
    StaticAgents(vec![explore, elsewhere])
}

impl Harness {
    pub(super) async fn start(yaml: &str) -> Self {
        Self::with(yaml, Setup::default()).await
    }

    pub(super) async fn with(yaml: &str, setup: Setup) -> Self {
        let model_server = FakeServer::from_yaml(yaml).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let server = server(&model_server, &dir, &setup);
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_io);
        let serving = tokio::spawn(server.serve(server_read, server_write));
        let (tx, progress) = mpsc::unbounded_channel();
        let client = Recorder { progress: tx }.serve(client_io).await.unwrap();
        Self {
            model: model_server,
            client,
            progress,
            serving,
            dir,
        }
    }

    pub(super) fn project(&self) -> std::path::PathBuf {
        self.dir.path().join("project")
    }

    /// Calls `tool` with `arguments` (a JSON object) and waits for its result.
    pub(super) async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        self.client
            .call_tool(params(tool, arguments))
            .await
            .unwrap()
    }

    /// Sends a call the test may cancel.
    pub(super) async fn start_call(
        &self,
        tool: &str,
        arguments: Value,
    ) -> RequestHandle<RoleClient> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params(tool, arguments)));
        self.client
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .unwrap()
    }
}

/// The MCP server of a harness: one spawn row per `setup` row over `model_server`, its project
/// and sessions under `dir`.
pub(super) fn server(
    model_server: &FakeServer,
    dir: &tempfile::TempDir,
    setup: &Setup,
) -> McpServer {
    let registry = Registry::with_max_depth(3);
    let config = SpawnConfig {
        permission_mode: setup.spawn_mode,
        ..SpawnConfig::default()
    };
    let spawn = SpawnProvider::new("spawn", model(model_server), config).with_sessions(
        subagent_runtime::SessionStore::new(dir.path().join("sessions")),
    );
    registry.register(Arc::new(spawn)).unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let mut config = McpConfig::new(&project);
    config.max_depth = setup.max_depth;
    config.permission_ceiling = setup.ceiling;
    McpServer::new(Arc::new(registry), &setup.rows, Arc::new(agents()), config)
}

pub(super) fn params(tool: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = Some(object(arguments));
    params
}

pub(super) fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// The texts of a result's content, in order.
pub(super) fn texts(result: &CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect()
}
