//! The fake model server: routes, recording, invariant checks, streamed bodies.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};
use subagent_model::scenario::check_invariants;
use subagent_model::scenario::{Action, Gate, Gates, HttpErrorSpec, Piece, Scenarios};
use subagent_session::Message;
use tokio::sync::watch;

use crate::encode::{Chunk, Protocol, encode, error_body, escaped};
use crate::normalize;

/// One request the server received.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// `GET`, `POST`, `HEAD`…
    pub method: String,
    /// Path and query, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Headers in arrival order, names lower-case; `x-api-key` and `authorization` values are
    /// replaced by `<redacted>`.
    pub headers: Vec<(String, String)>,
    /// The parsed JSON body, if any.
    pub body: Option<Value>,
    /// The conversation read from the body (system and developer text left out).
    pub messages: Vec<Message>,
    /// The scenario and step that answered, if one did.
    pub scenario: Option<(String, usize)>,
}

impl RecordedRequest {
    /// The value of a header (first occurrence).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the conversation's first message (the prompt that started it) contains
    /// `marker`.
    #[must_use]
    pub fn started_with(&self, marker: &str) -> bool {
        self.messages
            .first()
            .is_some_and(|m| m.text().contains(marker))
    }

    /// The names of the tools the request offered (its body's `tools`), in order; none when
    /// it offered none.
    #[must_use]
    pub fn tool_names(&self) -> Vec<String> {
        let tools = self.body.as_ref().and_then(|b| b.get("tools"));
        tools
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The tools a request body offered, in order, a Responses namespace's as `namespace/tool`
/// (codex's `multi_agent_v1/spawn_agent`), a tool without a name by its type.
#[must_use]
pub fn tool_paths(body: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        let name = tool["name"]
            .as_str()
            .or(tool["type"].as_str())
            .unwrap_or_default();
        match tool["tools"].as_array() {
            Some(children) if tool["type"] == "namespace" => names.extend(
                children
                    .iter()
                    .map(|child| format!("{name}/{}", child["name"].as_str().unwrap_or_default())),
            ),
            _ => names.push(name.to_owned()),
        }
    }
    names
}

/// The requests of `requests` whose conversation a prompt containing `marker` started (see
/// [`RecordedRequest::started_with`]).
#[must_use]
pub fn requests_for<'a>(requests: &'a [RecordedRequest], marker: &str) -> Vec<&'a RecordedRequest> {
    requests.iter().filter(|r| r.started_with(marker)).collect()
}

pub(crate) struct State {
    scenarios: Scenarios,
    pub(crate) gates: Gates,
    requests: Mutex<Vec<RecordedRequest>>,
    /// The most requests kept (the latest); `usize::MAX` unless a long run lowers it.
    keep: AtomicUsize,
    violations: Mutex<Vec<String>>,
    pub(crate) dropped: watch::Sender<usize>,
    pub(crate) requests_seen: watch::Sender<usize>,
    counter: AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl State {
    pub(crate) fn new(scenarios: Scenarios) -> Self {
        Self {
            scenarios,
            gates: Gates::default(),
            requests: Mutex::new(Vec::new()),
            keep: AtomicUsize::new(usize::MAX),
            violations: Mutex::new(Vec::new()),
            dropped: watch::channel(0).0,
            requests_seen: watch::channel(0).0,
            counter: AtomicUsize::new(0),
        }
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.requests).clone()
    }

    pub(crate) fn violations(&self) -> Vec<String> {
        lock(&self.violations).clone()
    }

    pub(crate) fn keep_requests(&self, keep: usize) {
        self.keep.store(keep, Ordering::Relaxed);
        let mut requests = lock(&self.requests);
        let excess = requests.len().saturating_sub(keep);
        requests.drain(..excess);
    }

    fn record(&self, request: RecordedRequest) {
        let keep = self.keep.load(Ordering::Relaxed);
        {
            let mut requests = lock(&self.requests);
            if keep > 0 {
                let excess = (requests.len() + 1).saturating_sub(keep);
                requests.drain(..excess);
                requests.push(request);
            }
        }
        self.requests_seen.send_modify(|n| *n += 1);
    }
}

fn redact(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_ascii_lowercase();
            let value = if name == "x-api-key" || name == "authorization" {
                "<redacted>".to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect()
}

fn json_response(status: StatusCode, value: &Value) -> Response {
    let mut response = Response::new(Body::from(value.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    response
}

fn protocol_of(path: &str) -> Option<Protocol> {
    let path = path.split('?').next().unwrap_or(path);
    let path = path.strip_prefix("/v1").unwrap_or(path);
    match path {
        "/messages" => Some(Protocol::Anthropic),
        "/responses" => Some(Protocol::Responses),
        "/chat/completions" => Some(Protocol::Chat),
        _ => None,
    }
}

pub(crate) async fn handle(state: Arc<State>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let method = parts.method.clone();
    let path = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned());
    let bytes = axum::body::to_bytes(body, 64 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let body: Option<Value> = serde_json::from_slice(&bytes).ok();
    let mut record = RecordedRequest {
        method: method.to_string(),
        path: path.clone(),
        headers: redact(&parts.headers),
        body: body.clone(),
        messages: Vec::new(),
        scenario: None,
    };
    let bare = path.split('?').next().unwrap_or(&path).to_owned();
    if method == Method::HEAD || (method == Method::GET && bare == "/") {
        state.record(record);
        return Response::new(Body::empty());
    }
    if method == Method::GET && (bare == "/v1/models" || bare == "/models") {
        state.record(record);
        return json_response(
            StatusCode::OK,
            &json!({"object": "list", "has_more": false, "data": [
                {"id": "fake-model", "object": "model", "type": "model", "display_name": "Fake model",
                 "created": 0, "owned_by": "subagents"}]}),
        );
    }
    if method == Method::POST && bare.ends_with("/messages/count_tokens") {
        state.record(record);
        return json_response(StatusCode::OK, &json!({"input_tokens": bytes.len() / 4}));
    }
    let Some(protocol) = protocol_of(&path).filter(|_| method == Method::POST) else {
        state.record(record);
        return json_response(
            StatusCode::NOT_FOUND,
            &json!({"type": "error", "error": {"type": "not_found_error", "message": format!("fake model: no route for {method} {path}")}}),
        );
    };
    let Some(body) = body else {
        state.record(record);
        let spec = HttpErrorSpec {
            status: 400,
            kind: "invalid_request_error".into(),
            message: "fake model: the request body is not JSON".into(),
            retry_after: None,
            times: None,
        };
        return json_response(StatusCode::BAD_REQUEST, &error_body(protocol, &spec));
    };
    let messages = match protocol {
        Protocol::Anthropic => normalize::anthropic(&body),
        Protocol::Responses => normalize::responses(&body),
        Protocol::Chat => normalize::chat(&body),
    };
    let n = state.counter.fetch_add(1, Ordering::SeqCst);
    let violations = check_invariants(&messages);
    if !violations.is_empty() {
        lock(&state.violations).extend(
            violations
                .into_iter()
                .map(|v| format!("request {n} ({path}): {v}")),
        );
    }
    record.messages.clone_from(&messages);
    let plan = state.scenarios.plan(&messages);
    let mut plan = match plan {
        Ok(plan) => plan,
        Err(e) => {
            state.record(record);
            let spec = HttpErrorSpec {
                status: 400,
                kind: "invalid_request_error".into(),
                message: e.to_string(),
                retry_after: None,
                times: None,
            };
            return json_response(StatusCode::BAD_REQUEST, &error_body(protocol, &spec));
        }
    };
    // Generated call ids depend on the conversation's length only, so two conversations served
    // by one server (a parent and its nested agent) could get the same ids: make them unique
    // per server with the request's number. Ids a scenario names stay as written.
    for action in &mut plan.actions {
        if let Action::ToolCall(call) = action
            && !call.explicit_id
        {
            call.id = format!("{}_r{n}", call.id);
        }
    }
    record.scenario = Some((plan.scenario.clone(), plan.step));
    state.record(record);
    for action in &plan.before {
        match action {
            Action::Sleep(d) => tokio::time::sleep(*d).await,
            Action::WaitGate(name) => state.gates.gate(name).wait().await,
            _ => {}
        }
    }
    if let Some(error) = &plan.http_error {
        let status =
            StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = json_response(status, &error_body(protocol, error));
        if let Some(after) = error.retry_after
            && let Ok(value) = HeaderValue::from_str(&after.to_string())
        {
            response.headers_mut().insert("retry-after", value);
        }
        return response;
    }
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("fake-model");
    let chunks = encode(protocol, &plan, model, messages.len());
    let mut response = Response::new(Body::from_stream(body_stream(state, chunks)));
    let headers = response.headers_mut();
    headers.insert(
        "content-type",
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    response
}

/// Counts a stream the client dropped before its end.
struct DropGuard {
    state: Arc<State>,
    finished: bool,
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.state.dropped.send_modify(|n| *n += 1);
        }
    }
}

struct BodyState {
    chunks: VecDeque<Chunk>,
    guard: DropGuard,
}

fn body_stream(
    state: Arc<State>,
    chunks: Vec<Chunk>,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let body = BodyState {
        chunks: chunks.into(),
        guard: DropGuard {
            state,
            finished: false,
        },
    };
    futures::stream::unfold(body, |mut b| async move {
        loop {
            let chunk = b.chunks.pop_front()?;
            match chunk {
                Chunk::Bytes(bytes) => {
                    if b.chunks.is_empty() {
                        b.guard.finished = true;
                    }
                    return Some((Ok(bytes), b));
                }
                Chunk::Sleep(d) => tokio::time::sleep(d).await,
                Chunk::Repeat {
                    bytes,
                    every,
                    count,
                } => {
                    if count == Some(0) {
                        continue;
                    }
                    tokio::time::sleep(every).await;
                    let rest = count.map(|n| n - 1);
                    if rest != Some(0) {
                        b.chunks.push_front(Chunk::Repeat {
                            bytes: bytes.clone(),
                            every,
                            count: rest,
                        });
                    }
                    if b.chunks.is_empty() {
                        b.guard.finished = true;
                    }
                    return Some((Ok(bytes), b));
                }
                Chunk::Generate {
                    head,
                    tail,
                    whole,
                    mut repeater,
                } => {
                    let event = match repeater.next_piece() {
                        None => continue,
                        Some(Piece::Whole) => whole.clone(),
                        Some(Piece::Part(part)) => {
                            Bytes::from([&head[..], escaped(part).as_bytes(), &tail[..]].concat())
                        }
                    };
                    if repeater.left() != Some(0) {
                        b.chunks.push_front(Chunk::Generate {
                            head,
                            tail,
                            whole,
                            repeater,
                        });
                    }
                    if b.chunks.is_empty() {
                        b.guard.finished = true;
                    }
                    return Some((Ok(event), b));
                }
                Chunk::Gate(name) => {
                    let gate: Gate = b.guard.state.gates.gate(&name);
                    gate.wait().await;
                }
                Chunk::Disconnect => {
                    // Let hyper flush what was sent so far before the connection is cut.
                    tokio::task::yield_now().await;
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    b.guard.finished = true;
                    b.chunks.clear();
                    return Some((
                        Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionAborted,
                            "scripted disconnect",
                        )),
                        b,
                    ));
                }
            }
        }
    })
}

pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<State>,
) -> std::io::Result<()> {
    let app = axum::Router::new().fallback(move |request: Request| {
        let state = Arc::clone(&state);
        async move { handle(state, request).await }
    });
    axum::serve(listener, app).await
}

pub(crate) fn local_addr(listener: &tokio::net::TcpListener) -> std::io::Result<SocketAddr> {
    listener.local_addr()
}
