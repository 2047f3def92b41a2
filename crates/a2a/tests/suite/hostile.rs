//! The a2a provider against a hostile A2A server, written here with axum on 127.0.0.1:0: huge
//! agent cards, endless SSE (events forever, one event that never ends), wrong content types,
//! redirects to other hosts, a card whose interface is on another host than the configured one.
//! Each is refused with a clear error and a stable code, or ends the run saying why; none is
//! read whole or followed.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_a2a::card::AGENT_CARD_PATH;
use subagent_a2a::{A2aConfig, A2aProvider, Token};
use subagent_core::{ErrorCode, RunEvent, StartRequest, StopReason, SubagentProvider};

/// A bound against hanging: every run here ends long before it.
const HANG: Duration = Duration::from_secs(60);

/// What a hostile server was asked: its JSON-RPC methods, and whether a bearer token came.
#[derive(Clone, Debug, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    fn push(&self, what: impl Into<String>) {
        self.0.lock().unwrap().push(what.into());
    }

    fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Whether `method` was called.
    fn asked(&self, method: &str) -> bool {
        self.all().iter().any(|m| m == method)
    }
}

/// A listener on 127.0.0.1:0 and its base URL.
async fn bind() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    (listener, base)
}

fn serve(listener: tokio::net::TcpListener, router: Router) {
    tokio::spawn(async move { axum::serve(listener, router).await });
}

/// A streaming plain A2A agent's card, its JSON-RPC interface at `endpoint`.
fn card(endpoint: &str) -> Value {
    json!({
        "name": "hostile", "description": "", "version": "1",
        "supportedInterfaces": [
            {"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "skills": [{"id": "x", "name": "x", "description": "", "tags": []}],
    })
}

fn json_response(value: &Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// A body sent in chunks as the client reads it, no length announced.
fn chunked(chunks: impl futures::Stream<Item = Bytes> + Send + 'static) -> Body {
    Body::from_stream(chunks.map(Ok::<_, Infallible>))
}

fn sse(body: Body) -> Response {
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}

/// `data: <JSON-RPC result>\n\n`.
fn event(result: Value) -> Bytes {
    let response = json!({"jsonrpc": "2.0", "id": 1, "result": result});
    Bytes::from(format!("data: {response}\n\n"))
}

fn task_event() -> Bytes {
    event(json!({"task": {"id": "t1", "contextId": "c1",
        "status": {"state": "TASK_STATE_SUBMITTED"}}}))
}

fn working(text: &str) -> Bytes {
    event(json!({"statusUpdate": {"taskId": "t1", "contextId": "c1",
        "status": {"state": "TASK_STATE_WORKING", "message":
            {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": text}]}}}}))
}

/// A server at a base of its own: the card names its `/a2a`, which `answer` serves (given the
/// JSON-RPC method; every method asked is recorded in `seen`).
async fn agent(
    seen: &Seen,
    answer: impl Fn(&str) -> Response + Clone + Send + Sync + 'static,
) -> String {
    let (listener, base) = bind().await;
    let card = card(&format!("{base}/a2a"));
    let asked = seen.clone();
    let router = Router::new()
        .route(
            AGENT_CARD_PATH,
            get(move || async move { json_response(&card) }),
        )
        .route(
            "/a2a",
            post(move |body: Bytes| async move {
                let request: Value = serde_json::from_slice(&body).unwrap_or_default();
                let method = request["method"].as_str().unwrap_or_default().to_owned();
                asked.push(method.clone());
                answer(&method)
            }),
        );
    serve(listener, router);
    base
}

fn config(base: &str) -> A2aConfig {
    let mut config = A2aConfig::new(base);
    config.timeouts.idle_ms = 2_000;
    config
}

async fn connect(config: A2aConfig) -> Result<A2aProvider, subagent_core::Error> {
    A2aProvider::connect("hostile", config, Token::new("secret-token-0123"))
        .await
        .map_err(Into::into)
}

/// One run of "hi" to its outcome.
async fn run_once(provider: &A2aProvider) -> subagent_core::Outcome {
    let dir = tempfile::tempdir().unwrap();
    let run = provider
        .start(StartRequest::new("hi", dir.path()))
        .await
        .unwrap();
    tokio::time::timeout(HANG, run.outcome()).await.unwrap()
}

/// A card past the row's bound (1 MiB by default) is refused as soon as the bound is passed,
/// whether it is a big valid card or an endless one; never read whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_past_the_bound_is_refused() {
    let (listener, base) = bind().await;
    let mut big = card(&format!("{base}/a2a"));
    big["description"] = json!("x".repeat(2 << 20));
    let big = Bytes::from(big.to_string());
    let router = Router::new()
        .route(
            AGENT_CARD_PATH,
            get(move || {
                let big = big.clone();
                async move {
                    let pieces: Vec<Bytes> = (0..big.len())
                        .step_by(64 << 10)
                        .map(|at| big.slice(at..big.len().min(at + (64 << 10))))
                        .collect();
                    json_body(chunked(futures::stream::iter(pieces)))
                }
            }),
        )
        .route(
            "/endless.json",
            get(|| async {
                let start = futures::stream::once(async { Bytes::from_static(b"{\"name\": \"") });
                let endless = futures::stream::repeat(Bytes::from(vec![b'x'; 64 << 10]));
                json_body(chunked(start.chain(endless)))
            }),
        );
    serve(listener, router);

    let error = connect(config(&base)).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Protocol, "{error}");
    assert!(error.to_string().contains("limits.card_bytes"), "{error}");
    let mut endless = config(&format!("{base}/endless.json"));
    endless.limits.card_bytes = 256 << 10;
    let error = connect(endless).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Protocol, "{error}");
    assert!(error.to_string().contains("262144 bytes"), "{error}");
}

fn json_body(body: Body) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// A card URL that answers a web page says what it got, not just that JSON did not parse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_that_is_a_web_page_says_what_it_got() {
    let (listener, base) = bind().await;
    let router = Router::new().route(
        AGENT_CARD_PATH,
        get(|| async {
            (
                [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                "<html><body>Sign in</body></html>",
            )
        }),
    );
    serve(listener, router);
    let error = connect(config(&base)).await.unwrap_err();
    assert!(error.to_string().contains("text/html"), "{error}");
}

/// A redirect to another host is refused (the token never goes there); one on the same host is
/// followed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_host_is_refused() {
    // The elsewhere server: a valid agent whose requests are recorded.
    let elsewhere = Seen::default();
    let (listener, other) = bind().await;
    let port = other.rsplit(':').next().unwrap().to_owned();
    let other_host = format!("http://localhost:{port}");
    let recorded = elsewhere.clone();
    let other_card = card(&format!("{other_host}/a2a"));
    serve(
        listener,
        Router::new().route(
            AGENT_CARD_PATH,
            get(move |headers: HeaderMap| async move {
                recorded.push(format!(
                    "card, token: {}",
                    headers.contains_key(header::AUTHORIZATION)
                ));
                json_response(&other_card)
            }),
        ),
    );
    // The redirecting server: its card moves to the other host; `/same` to its own card path.
    let (listener, base) = bind().await;
    let own_card = card(&format!("{base}/a2a"));
    let target = format!("{other_host}{AGENT_CARD_PATH}");
    let seen = Seen::default();
    let asked = seen.clone();
    serve(
        listener,
        Router::new()
            .route(
                AGENT_CARD_PATH,
                get(move || async move {
                    (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, target)])
                }),
            )
            .route(
                "/same/card.json",
                get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/own/card.json")]) }),
            )
            .route(
                "/own/card.json",
                get(move || async move { json_response(&own_card) }),
            )
            .route(
                "/a2a",
                post(move || async move {
                    asked.push("post");
                    let to = format!("http://localhost:{port}/a2a");
                    (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, to)])
                }),
            ),
    );

    let error = connect(config(&base)).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Protocol, "{error}");
    assert!(
        error.to_string().contains("redirected to another host"),
        "{error}"
    );
    // Same host: followed. The run's message is then redirected elsewhere: refused too.
    let provider = connect(config(&format!("{base}/same/card.json")))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let error = provider
        .start(StartRequest::new("hi", dir.path()))
        .await
        .err()
        .unwrap();
    assert_eq!(error.code(), ErrorCode::Protocol, "{error}");
    assert!(
        error.to_string().contains("redirected to another host"),
        "{error}"
    );
    assert_eq!(
        (seen.all(), elsewhere.all()),
        (vec!["post".to_owned()], vec![])
    );
}

/// A card whose JSON-RPC interface is on another host than the row's URL is refused (the token
/// would go there), unless the row says `allow_other_host`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_naming_another_host_is_refused_unless_the_row_allows_it() {
    let (listener, base) = bind().await;
    let port = base.rsplit(':').next().unwrap().to_owned();
    let elsewhere = format!("http://localhost:{port}/a2a");
    let named = card(&elsewhere);
    serve(
        listener,
        Router::new().route(
            AGENT_CARD_PATH,
            get(move || async move { json_response(&named) }),
        ),
    );
    let error = connect(config(&base)).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArguments, "{error}");
    assert!(error.to_string().contains("allow_other_host"), "{error}");
    let mut allowed = config(&base);
    allowed.allow_other_host = true;
    assert_eq!(connect(allowed).await.unwrap().endpoint(), elsewhere);
}

/// One event that never ends (no newline, or `data:` lines with no blank line after them) fails
/// the run at the row's bound, saying so, and is not asked for again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_that_never_ends_fails_the_run_at_the_bound() {
    for endless_line in [true, false] {
        let seen = Seen::default();
        let base = agent(&seen, move |_| {
            let first = futures::stream::iter([task_event(), Bytes::from_static(b"data: ")]);
            let rest = if endless_line {
                Bytes::from(vec![b'x'; 16 << 10])
            } else {
                Bytes::from(format!("{}\ndata: ", "x".repeat(1000)))
            };
            // 16 MiB, then the end of the event: past any bound here, and finite so a reader
            // without a bound gets a (useless) event rather than hanging.
            let body = (0..1024)
                .map(move |_| rest.clone())
                .chain([Bytes::from_static(b"\n\n")]);
            sse(chunked(first.chain(futures::stream::iter(body))))
        })
        .await;
        let mut config = config(&base);
        config.limits.event_bytes = 64 << 10;
        let provider = connect(config).await.unwrap();
        let outcome = run_once(&provider).await;
        assert_eq!(outcome.status, StopReason::Failed, "{outcome:?}");
        let diagnostic = outcome.diagnostic.unwrap_or_default();
        assert!(
            diagnostic.contains("65536 bytes") && diagnostic.contains("limits.event_bytes"),
            "{diagnostic}"
        );
        assert!(!seen.asked("SubscribeToTask"), "{:?}", seen.all());
    }
}

/// An agent that sends events forever and ignores `CancelTask`: a cancelled run still ends,
/// cancelled, within the idle bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_events_end_when_the_run_is_cancelled() {
    let seen = Seen::default();
    let base = agent(&seen, |method| {
        if method != "SendStreamingMessage" {
            return json_response(&json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        }
        let ticks = futures::stream::unfold(0_u64, |tick| async move {
            // Paced a little so the run's channel is not flooded: the point is that the
            // stream never ends, not how fast it is.
            tokio::time::sleep(Duration::from_millis(1)).await;
            Some((working(&format!("tick {tick}")), tick + 1))
        });
        sse(chunked(
            futures::stream::once(async { task_event() }).chain(ticks),
        ))
    })
    .await;
    let mut config = config(&base);
    config.timeouts.idle_ms = 500;
    let provider = connect(config).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut run = provider
        .start(StartRequest::new("hi", dir.path()))
        .await
        .unwrap();
    let mut events = run.take_events().unwrap();
    loop {
        if let RunEvent::Progress { .. } = events.next().await.unwrap() {
            break;
        }
    }
    drop(events);
    run.cancel();
    let outcome = tokio::time::timeout(HANG, run.outcome()).await.unwrap();
    assert_eq!(outcome.status, StopReason::Cancelled, "{outcome:?}");
    assert!(seen.asked("CancelTask"), "{:?}", seen.all());
}

/// A message answered with something that is not an event stream (a web page, of any size) is
/// refused, saying what came, without reading it whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_of_the_wrong_content_type_is_refused() {
    let seen = Seen::default();
    let base = agent(&seen, |_| {
        let page = futures::stream::iter(
            (0..1024).map(|_| Bytes::from(format!("<p>{}</p>", "x".repeat(16 << 10)))),
        );
        ([(header::CONTENT_TYPE, "text/html")], chunked(page)).into_response()
    })
    .await;
    let mut config = config(&base);
    config.limits.event_bytes = 64 << 10;
    let provider = connect(config).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let error = provider
        .start(StartRequest::new("hi", dir.path()))
        .await
        .err()
        .unwrap();
    assert_eq!(error.code(), ErrorCode::Protocol, "{error}");
    let text = error.to_string();
    assert!(
        text.contains("text/html") && text.contains("65536 bytes"),
        "{text}"
    );
}
