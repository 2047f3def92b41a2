//! The A2A 1.0 wire as both sides read it, and `subagent serve`'s request handling in process.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use axum::body::Body;
use axum::http::{Method, Request, header};
use serde_json::Value;
use subagent_a2a::Assembly;
use subagent_a2a::card::AgentCard;
use subagent_a2a::ext::{CardParams, RequestFields};
use subagent_a2a::requests::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, SendMessageRequest, SendMessageResponse,
    SubscribeToTaskRequest, trim_history,
};
use subagent_a2a::rpc::{self, PROTOCOL_VERSION, VERSION_HEADER};
use subagent_a2a::types::{StreamResponse, Task, apply, joined_text};
use subagent_core::registry::Registry;
use subagent_core::{Capabilities, Outcome, Run, RunEvent, StartRequest, SubagentProvider};
use subagent_server::{AGENT_CARD_PATH, RPC_PATH, Server, ServerConfig, Skill};
use tower::ServiceExt;

fn provider_side(data: &[u8], ours: bool) {
    let mut decoder = subagent_a2a::sse::Decoder::new(64 * 1024);
    let Ok(events) = decoder.feed(data) else {
        return;
    };
    let mut assembly = Assembly::new(ours);
    let mut task = Task::default();
    for event in events {
        let Ok(response) = serde_json::from_str::<rpc::Response>(&event.data) else {
            continue;
        };
        let Some(result) = response.result else {
            continue;
        };
        let Ok(event) = serde_json::from_value::<StreamResponse>(result) else {
            continue;
        };
        let _ = event.state();
        let _ = assembly.take(&event);
        apply(&mut task, &event);
        if assembly.ended() {
            break;
        }
    }
    let _ = assembly.task_id();
    let _ = assembly.outcome("fuzz");
    trim_history(&mut task, Some(1));
}

fn server_side(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(request) = serde_json::from_value::<rpc::Request>(value.clone()) {
        let params = request.params;
        if let Ok(send) = serde_json::from_value::<SendMessageRequest>(params.clone()) {
            let _ = RequestFields::from_metadata(send.message.metadata.as_ref());
            let _ = joined_text(&send.message.parts);
        }
        let _ = serde_json::from_value::<GetTaskRequest>(params.clone());
        let _ = serde_json::from_value::<ListTasksRequest>(params.clone());
        let _ = serde_json::from_value::<CancelTaskRequest>(params.clone());
        let _ = serde_json::from_value::<SubscribeToTaskRequest>(params);
    }
    let _ = serde_json::from_value::<SendMessageResponse>(value.clone());
    let _ = serde_json::from_value::<AgentCard>(value.clone());
    let _ = serde_json::from_value::<CardParams>(value);
}

/// The A2A wire: the provider side reads the bytes (after a first byte whose low bit says
/// whether the peer is a `subagent serve`) as an SSE stream of JSON-RPC responses into a run
/// (`subagent_a2a::sse::Decoder`, `Assembly`, `types::apply`); the server side reads them as a
/// JSON-RPC request with every params type `subagent serve` reads, and as an agent card.
pub fn a2a_wire(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    provider_side(rest, mode & 1 == 0);
    server_side(rest);
}

/// Answers every request at once (one text event, then completed).
struct Echo;

#[async_trait]
impl SubagentProvider for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ALL
    }

    async fn start(&self, request: StartRequest) -> subagent_core::Result<Run> {
        let (sender, run) = Run::channel("echo", &request);
        sender.emit(RunEvent::Text {
            text: "echo".to_owned(),
            parent_tool_use_id: None,
        });
        sender.finish(Outcome::completed("echo"));
        Ok(run)
    }
}

struct Harness {
    runtime: tokio::runtime::Runtime,
    router: axum::Router,
}

/// One server for every input of a process: tasks persist between inputs, so later inputs can
/// get, list, cancel and subscribe to earlier ones.
fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let registry = Registry::new();
        if registry.register(Arc::new(Echo)).is_err() {
            panic!("registering the echo provider failed");
        }
        let skills = vec![Skill {
            id: "echo".to_owned(),
            description: "Says the prompt back.".to_owned(),
            provider: "echo".to_owned(),
            agent: None,
        }];
        let mut config = ServerConfig::new(std::env::temp_dir());
        config.body_limit = 64 * 1024;
        config.keep_tasks = 256;
        config.keep_events = Duration::from_millis(200);
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => panic!("no tokio runtime: {error}"),
        };
        let router = {
            let _entered = runtime.enter();
            Server::new(Arc::new(registry), skills, config).into_router("http://127.0.0.1:9")
        };
        Harness { runtime, router }
    })
}

/// `subagent serve`'s request handling in process (`Server::into_router`, doc-hidden): one
/// HTTP request an input, its first byte choosing the card or the JSON-RPC endpoint and
/// whether the version and content-type headers are sent, the rest its body; through auth,
/// the body limit, JSON-RPC parsing, every method, the registry's gates and a run of a provider
/// that answers at once. The whole answer is read; one that does not end within 5 s is a
/// finding.
pub fn a2a_server(data: &[u8]) {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let harness = harness();
    let mut request = Request::builder();
    request = if mode & 0b100 != 0 {
        request.method(Method::GET).uri(AGENT_CARD_PATH)
    } else {
        request.method(Method::POST).uri(RPC_PATH)
    };
    if mode & 0b1 == 0 {
        request = request.header(VERSION_HEADER, PROTOCOL_VERSION);
    }
    if mode & 0b10 == 0 {
        request = request.header(header::CONTENT_TYPE, "application/json");
    }
    let Ok(request) = request.body(Body::from(body.to_vec())) else {
        return;
    };
    let router = harness.router.clone();
    harness.runtime.block_on(async move {
        let answer = async {
            let Ok(response) = router.oneshot(request).await;
            let _ = axum::body::to_bytes(response.into_body(), 16 * 1024 * 1024).await;
        };
        if tokio::time::timeout(Duration::from_secs(5), answer)
            .await
            .is_err()
        {
            panic!("the server's answer did not end within 5 s");
        }
    });
}
