//! `subagent serve`'s request handling, in process: the router the server serves
//! (`subagent_server::Server::into_router`), one HTTP request per input (the JSON-RPC binding at
//! `/a2a`, or the agent card), through auth, the body limit, JSON-RPC parsing, the version
//! header, every method, the registry's gates and a run of a provider that answers at once; the
//! whole answer is read (a stream to its end). Tasks persist between inputs, so later inputs
//! can get, list, cancel and subscribe to earlier ones. Whatever the request, an answer and no
//! panic; an answer that never ends is a finding too.
#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use axum::body::Body;
use axum::http::{Method, Request, header};
use libfuzzer_sys::fuzz_target;
use subagent_a2a::rpc::{PROTOCOL_VERSION, VERSION_HEADER};
use subagent_core::registry::Registry;
use subagent_core::{Capabilities, Outcome, Run, RunEvent, StartRequest, SubagentProvider};
use subagent_server::{AGENT_CARD_PATH, RPC_PATH, Server, ServerConfig, Skill};
use tower::ServiceExt;

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

fuzz_target!(|data: &[u8]| {
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
});
