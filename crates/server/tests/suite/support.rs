//! A server on 127.0.0.1:0 over a registry of spawn and fork against the fake model server, and
//! a small A2A client (JSON-RPC calls, SSE streams read with the wire crate's decoder).

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Value, json};
use subagent_a2a::sse::Decoder;
use subagent_a2a::types::StreamResponse;
use subagent_core::agents::AgentProfile;
use subagent_core::registry::Registry;
use subagent_fork::{ForkConfig, ForkProvider};
use subagent_model::{Model, ModelKind};
use subagent_server::{Server, ServerConfig, Skill, Token};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::FakeServer;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub(super) const TOKEN: &str = "test-token-0123456789";

pub(super) struct Harness {
    pub base: String,
    pub model: FakeServer,
    pub client: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
    serving: Option<JoinHandle<subagent_server::Result<()>>>,
    _dir: tempfile::TempDir,
}

fn model(server: &FakeServer) -> Arc<dyn Model> {
    server.model(ModelKind::Anthropic)
}

pub(super) fn skills() -> Vec<Skill> {
    let mut explore = AgentProfile::new("explore", "Read-only search of the code.");
    explore.instructions = Some("You only read.".to_owned());
    vec![
        Skill {
            id: "subagent".to_owned(),
            description: "A general-purpose child".to_owned(),
            provider: "spawn".to_owned(),
            agent: None,
        },
        Skill {
            id: "forked".to_owned(),
            description: "A fork".to_owned(),
            provider: "fork".to_owned(),
            agent: None,
        },
        Skill {
            id: "explore".to_owned(),
            description: "Read-only search of the code.".to_owned(),
            provider: "spawn".to_owned(),
            agent: Some(explore),
        },
    ]
}

impl Harness {
    /// A server with a token, over scenarios `yaml`, configured further by `configure`.
    pub(super) async fn start(yaml: &str, configure: impl FnOnce(&mut ServerConfig)) -> Self {
        let model_server = FakeServer::from_yaml(yaml).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let model = model(&model_server);
        let registry = Registry::with_max_depth(3);
        let sessions = subagent_runtime::SessionStore::new(dir.path().join("sessions"));
        let spawn = SpawnProvider::new("spawn", Arc::clone(&model), SpawnConfig::default())
            .with_sessions(sessions);
        registry.register(Arc::new(spawn)).unwrap();
        registry
            .register(Arc::new(ForkProvider::new(
                "fork",
                ForkConfig::default(),
                Some(model),
            )))
            .unwrap();
        let mut config = ServerConfig::new(dir.path());
        config.token = Token::new(TOKEN);
        config.max_depth = 3;
        configure(&mut config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (shutdown, stop) = oneshot::channel::<()>();
        let server = Server::new(Arc::new(registry), skills(), config);
        let serving = tokio::spawn(server.serve(listener, async move {
            let _ = stop.await;
        }));
        Self {
            base,
            model: model_server,
            client: reqwest::Client::new(),
            shutdown: Some(shutdown),
            serving: Some(serving),
            _dir: dir,
        }
    }

    pub(super) fn rpc_url(&self) -> String {
        format!("{}/a2a", self.base)
    }

    /// A JSON-RPC request with the version header and the token.
    pub(super) fn request(&self, method: &str, params: Value) -> reqwest::RequestBuilder {
        self.client
            .post(self.rpc_url())
            .header("A2A-Version", "1.0")
            .bearer_auth(TOKEN)
            .json(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}))
    }

    /// The JSON body of the response to `request`, whatever its status.
    pub(super) async fn json_of(request: reqwest::RequestBuilder) -> Value {
        request.send().await.unwrap().json().await.unwrap()
    }

    /// A call's whole JSON-RPC response.
    pub(super) async fn call(&self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).send().await.unwrap();
        assert_eq!(response.status(), 200);
        response.json().await.unwrap()
    }

    /// A call's result (panics on an error).
    pub(super) async fn result(&self, method: &str, params: Value) -> Value {
        let response = self.call(method, params).await;
        assert!(response.get("error").is_none(), "{response}");
        response["result"].clone()
    }

    /// A streaming call, as an open stream of events.
    pub(super) async fn stream(&self, method: &str, params: Value) -> Events {
        let response = self
            .request(method, params)
            .header("Accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"],
            "text/event-stream; charset=utf-8"
        );
        Events {
            body: Box::pin(response.bytes_stream()),
            decoder: Decoder::new(1 << 20),
            pending: Vec::new(),
        }
    }

    /// Stops the server (draining) and waits for it.
    pub(super) async fn shutdown(&mut self) {
        self.signal_shutdown();
        self.wait_stopped().await;
    }

    pub(super) fn signal_shutdown(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }

    pub(super) async fn wait_stopped(&mut self) {
        if let Some(serving) = self.serving.take() {
            serving.await.unwrap().unwrap();
        }
    }
}

type Body = std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

/// The events of an SSE response.
pub(super) struct Events {
    body: Body,
    decoder: Decoder,
    pending: Vec<Value>,
}

impl Events {
    /// The next event's `result` (a StreamResponse), or `None` at the end of the stream.
    pub(super) async fn next(&mut self) -> Option<Value> {
        loop {
            if !self.pending.is_empty() {
                return Some(self.pending.remove(0));
            }
            let chunk = self.body.next().await?.unwrap();
            for event in self.decoder.feed(&chunk).unwrap() {
                assert_eq!(event.name, "", "{event:?}");
                let response: Value = serde_json::from_str(&event.data).unwrap();
                assert_eq!(response["id"], 7);
                // Every result is a well-formed StreamResponse.
                serde_json::from_value::<StreamResponse>(response["result"].clone()).unwrap();
                self.pending.push(response["result"].clone());
            }
        }
    }

    /// Every remaining event.
    pub(super) async fn rest(&mut self) -> Vec<Value> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            events.push(event);
        }
        events
    }
}

/// A message params object with text and our request fields.
pub(super) fn send_params(text: &str, fields: Value) -> Value {
    json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}],
        "metadata": {subagent_a2a::EXTENSION_URI: fields}}})
}

/// What an event says, in short: `task SUBMITTED`, `working text: hi`, `artifact result`,
/// `status TASK_STATE_COMPLETED`.
pub(super) fn summary(event: &Value) -> String {
    if let Some(task) = event.get("task") {
        return format!("task {}", task["status"]["state"].as_str().unwrap());
    }
    if let Some(update) = event.get("artifactUpdate") {
        return format!(
            "artifact {}",
            update["artifact"]["artifactId"].as_str().unwrap()
        );
    }
    let update = &event["statusUpdate"];
    let state = update["status"]["state"].as_str().unwrap();
    match update["metadata"][subagent_a2a::EXTENSION_URI].get("event") {
        Some(run_event) => {
            let kind = run_event["type"].as_str().unwrap();
            match kind {
                "text" => format!("working text: {}", run_event["text"].as_str().unwrap()),
                "tool_call" => {
                    format!("working tool_call: {}", run_event["name"].as_str().unwrap())
                }
                other => format!("working {other}"),
            }
        }
        None => state.to_owned(),
    }
}

/// The summaries of events, with usage events left out (their number depends on the model
/// client).
pub(super) fn summaries(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(summary)
        .filter(|s| s != "working usage")
        .collect()
}
