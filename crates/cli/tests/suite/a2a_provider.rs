//! The `a2a` provider kind against our own server: the conformance kit (a `subagent serve` in
//! this process over a spawn row on the fake model server), then the provider's own behaviour:
//! refusals that cross the wire unchanged, a lost stream picked up with nothing lost or
//! doubled, a silent agent, a preset row `kind: a2a` used by `subagent delegate`.

use std::sync::Arc;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_a2a::{A2aConfig, A2aProvider, Token};
use subagent_core::registry::Registry;
use subagent_core::{Error, RunEvent, StartRequest, StopReason, SubagentProvider, ToolFilter};
use subagent_server::{Server, ServerConfig, Skill};
use subagent_test_support::FakeServer;

use super::support::worker_registry;

pub(super) const TOKEN: &str = "a2a-provider-test-token-0123";

/// `subagent serve` in this process on 127.0.0.1:0, its runs in `cwd` (it serves until the
/// runtime ends); its base URL.
pub(super) fn serve(registry: Registry, cwd: &std::path::Path) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    serve_on(registry, cwd, listener, None)
}

/// [`serve`] on `listener`, its card naming `public` (a proxy in front) as where to reach it.
pub(super) fn serve_on(
    registry: Registry,
    cwd: &std::path::Path,
    listener: std::net::TcpListener,
    public: Option<String>,
) -> String {
    listener.set_nonblocking(true).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
    let mut config = ServerConfig::new(cwd);
    config.token = subagent_server::Token::new(TOKEN);
    config.public_url = public;
    let skills = vec![Skill {
        id: "subagent".to_owned(),
        description: "A general-purpose child".to_owned(),
        provider: "spawn".to_owned(),
        agent: None,
    }];
    let server = Server::new(Arc::new(registry), skills, config);
    tokio::spawn(server.serve(listener, std::future::pending()));
    base
}

/// An a2a provider named `remote` in front of `base`.
pub(super) fn provider(base: &str, idle_ms: Option<u64>) -> A2aProvider {
    let mut config = A2aConfig::new(base);
    if let Some(idle) = idle_ms {
        config.timeouts.idle_ms = idle;
    }
    A2aProvider::connect_blocking("remote", config, Token::new(TOKEN)).unwrap()
}

mod conformance {
    use std::sync::Arc;

    use subagent_a2a::A2aFactory;

    use super::super::support::Remote;
    use super::{provider, serve};

    subagent_conformance::suite!(Remote::new(Arc::new(A2aFactory), |registry, cwd| {
        Arc::new(provider(&serve(registry, cwd), None))
    }));
}

const SCENARIOS: &str = r#"
- name: gated
  match: "GATED"
  steps:
    - text: "one "
      tool_calls: [{name: ls, input: {}}]
    - wait_gate: go
      text: "two three"
- name: hello
  match: "HELLO"
  steps:
    - text: "Hi there."
"#;

/// A refusal by the remote server's gate comes back as the same error, with the same code and
/// fields, as the local registry would have given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_remote_servers_refusals_come_back_unchanged() {
    let model = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = serve(worker_registry(&model, dir.path()), dir.path());
    let remote = provider(&base, None);
    // Past the server's depth cap (3): the local registry (cap 5) lets it through, the remote
    // server refuses.
    let local = Registry::with_max_depth(5);
    local.register(Arc::new(remote)).unwrap();
    let deep = StartRequest::builder("HELLO")
        .cwd(dir.path())
        .depth(3)
        .build();
    let refused = local.start("remote", deep).await.err();
    assert_eq!(
        refused,
        Some(Error::DepthExceeded {
            child_depth: 4,
            max_depth: 3
        })
    );
    // A finished task that left no session to continue (asked through the provider directly,
    // past the registry's gate): NOT_RESUMABLE from the server.
    let remote = local.get("remote").unwrap();
    let gone = StartRequest::builder("HELLO")
        .cwd(dir.path())
        .resume(subagent_core::SessionRef {
            provider: "remote".to_owned(),
            id: "no-such-task".to_owned(),
            cwd: None,
            transcript: None,
        })
        .build();
    let error = remote.start(gone).await.err().unwrap();
    assert_eq!(
        error.code(),
        subagent_core::ErrorCode::NotResumable,
        "{error}"
    );
    assert_eq!(model.model_requests(), Vec::new(), "nothing refused ran");
}

/// A TCP proxy on 127.0.0.1 that can cut every connection through it and refuse new ones
/// until released: a network that drops.
struct Proxy {
    base: String,
    links: Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
    refusing: Arc<std::sync::atomic::AtomicBool>,
}

impl Proxy {
    async fn start(upstream: std::net::SocketAddr) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let links = Arc::new(std::sync::Mutex::new(Vec::new()));
        let refusing = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (held, refuse) = (Arc::clone(&links), Arc::clone(&refusing));
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if refuse.load(std::sync::atomic::Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let link = tokio::spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                held.lock().unwrap().push(link.abort_handle());
            }
        });
        Self {
            base,
            links,
            refusing,
        }
    }

    /// Cuts every connection and refuses new ones.
    fn cut(&self) {
        self.refusing
            .store(true, std::sync::atomic::Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    /// Lets connections through again.
    fn release(&self) {
        self.refusing
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The stream is cut while the remote run goes on and ends; the provider re-subscribes once it
/// can and the run's events are exactly the remote run's, none lost and none twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_stream_is_picked_up_with_no_event_lost_or_doubled() {
    let model = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The server's address is known before the proxy exists, the proxy's before the server
    // serves (its card sends clients through the proxy).
    let upstream = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy = Proxy::start(upstream.local_addr().unwrap()).await;
    let direct = serve_on(
        worker_registry(&model, dir.path()),
        dir.path(),
        upstream,
        Some(proxy.base.clone()),
    );
    let remote = provider(&proxy.base, None);
    let request = StartRequest::builder("GATED: count")
        .cwd(dir.path())
        .tool_filter(ToolFilter::deny(["bash"]))
        .build();
    let mut run = remote.start(request).await.unwrap();
    let mut events = run.take_events().unwrap();
    // Up to the tool's result, through the proxy.
    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        let done = matches!(event, RunEvent::ToolResult { .. });
        seen.push(event);
        if done {
            break;
        }
    }
    // The network drops; meanwhile the remote run goes on to its end (read on the server's
    // own address, as another client).
    proxy.cut();
    model.gate("go").open();
    let client = reqwest::Client::new();
    let call = |method: &str, params: serde_json::Value| {
        client
            .post(format!("{direct}/a2a"))
            .header("A2A-Version", "1.0")
            .bearer_auth(TOKEN)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .send()
    };
    let listed: serde_json::Value = call("ListTasks", json!({}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let task = listed["result"]["tasks"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // SubscribeToTask streams until the task ends (or is refused when it already has).
    let _ = call("SubscribeToTask", json!({"id": task}))
        .await
        .unwrap()
        .bytes()
        .await;
    let state: serde_json::Value = call("GetTask", json!({"id": task}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(state["result"]["status"]["state"], "TASK_STATE_COMPLETED");
    proxy.release();
    seen.extend(events.collect::<Vec<_>>().await);
    let outcome = run.outcome().await;
    // Each event once, in order (text deltas joined: the fake model streams words).
    let mut kinds: Vec<String> = Vec::new();
    for event in seen.iter().filter(|e| !matches!(e, RunEvent::Usage { .. })) {
        match (event, kinds.last_mut()) {
            (RunEvent::Text { text, .. }, Some(last)) if last.starts_with("text ") => {
                last.push_str(text);
            }
            (RunEvent::Text { text, .. }, _) => kinds.push(format!("text {text}")),
            (other, _) => kinds.push(
                serde_json::to_value(other).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            ),
        }
    }
    assert_eq!(
        kinds,
        [
            "started",
            "text one ",
            "tool_call",
            "tool_result",
            "text two three",
            "finished"
        ]
    );
    assert_eq!(
        (outcome.status, outcome.text.as_str()),
        (StopReason::Completed, "two three")
    );
}
