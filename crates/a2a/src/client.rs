//! The provider's HTTP side: the card, JSON-RPC calls and SSE streams, with the version header
//! and the bearer token on every request and an idle bound on every read.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{Value, json};

use crate::card::AgentCard;
use crate::config::Limits;
use crate::error::{Error, Result};
use crate::rpc::{self, RpcError};
use crate::sse::Decoder;
use crate::types::StreamResponse;

/// The most redirects followed in one request (each on the same host).
const MAX_REDIRECTS: usize = 10;

/// What of an error answer's body is read (its first characters go into the error).
const ERROR_BODY_BYTES: usize = 4 << 10;

/// A bearer token; `Debug` never shows it.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// A token (surrounding whitespace removed); `None` when empty.
    pub fn new(value: impl AsRef<str>) -> Option<Self> {
        let value = value.as_ref().trim();
        (!value.is_empty()).then(|| Self(value.to_owned()))
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token([redacted])")
    }
}

/// Why a call did not give a result.
#[derive(Debug)]
pub(crate) enum CallError {
    /// No connection, a broken one, an HTTP status other than 200 and 401, or not A2A.
    Unreachable(String),
    /// HTTP 401.
    Unauthorized,
    /// A JSON-RPC error.
    Rpc(RpcError),
    /// The agent did what a client refuses: a redirect to another host, an answer past the
    /// row's bound, an answer of the wrong content type.
    Refused(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unreachable(message) | Self::Refused(message) => f.write_str(message),
            Self::Unauthorized => f.write_str("the token was refused (HTTP 401)"),
            Self::Rpc(error) => write!(f, "{error}"),
        }
    }
}

/// One agent's JSON-RPC endpoint.
#[derive(Clone, Debug)]
pub(crate) struct Peer {
    /// The endpoint (the card's JSON-RPC interface).
    pub endpoint: String,
    token: Option<Token>,
    http: reqwest::Client,
    limits: Limits,
}

/// Whether `to` is on the host of `from` (names compared as the URL parser normalizes them,
/// ports aside) and does not drop from https to http: where a token may follow a request.
pub fn same_host(from: &str, to: &str) -> bool {
    match (reqwest::Url::parse(from), reqwest::Url::parse(to)) {
        (Ok(from), Ok(to)) => same_host_url(&from, &to),
        _ => false,
    }
}

fn same_host_url(from: &reqwest::Url, to: &reqwest::Url) -> bool {
    let hosts = match (from.host_str(), to.host_str()) {
        (Some(from), Some(to)) => from.eq_ignore_ascii_case(to),
        _ => false,
    };
    let downgrade = from.scheme() == "https" && to.scheme() != "https";
    hosts && !downgrade && matches!(to.scheme(), "http" | "https")
}

/// A redirect the client refused.
#[derive(Debug)]
struct RefusedRedirect(String);

impl std::fmt::Display for RefusedRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RefusedRedirect {}

/// Redirects on the same host are followed (up to [`MAX_REDIRECTS`]); one to another host, or
/// from https to http, is refused: the token goes only where the row points.
fn redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.follow();
        };
        if attempt.previous().len() > MAX_REDIRECTS {
            let error = RefusedRedirect(format!("more than {MAX_REDIRECTS} redirects"));
            return attempt.error(error);
        }
        if same_host_url(first, attempt.url()) {
            return attempt.follow();
        }
        let error = RefusedRedirect(format!(
            "redirected to another host ({}, asked {}): refused, a request and its token go \
             only to the host the row names (set `url` to where the agent really is)",
            attempt.url(),
            first
        ));
        attempt.error(error)
    })
}

fn client(connect: Duration) -> std::result::Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .connect_timeout(connect)
        .tcp_nodelay(true)
        .redirect(redirects())
        .build()
        .map_err(|error| format!("cannot make an HTTP client: {error}"))
}

/// A request's error: a refused redirect as [`CallError::Refused`], anything else as
/// [`CallError::Unreachable`], after `what`.
fn request_error(what: &str, error: &reqwest::Error) -> CallError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<RefusedRedirect>() {
            return CallError::Refused(format!("{what}: {refused}"));
        }
        source = cause.source();
    }
    CallError::Unreachable(format!("{what}: {error}"))
}

/// Why a body was not read.
enum BodyError {
    /// Past the bound.
    TooLarge,
    /// The connection failed.
    Read(reqwest::Error),
}

/// The whole body of `response`, refused as soon as it passes `limit` bytes (at once when its
/// announced length does).
async fn read_bounded(
    response: &mut reqwest::Response,
    limit: usize,
) -> std::result::Result<Vec<u8>, BodyError> {
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(BodyError::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Read)? {
        if body.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The response's content type, as sent (`(none)` when absent).
fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("content-type")
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .unwrap_or_else(|| "(none)".to_owned())
}

impl Peer {
    /// A peer at `endpoint`, reading what `limits` allow.
    pub(crate) fn new(
        endpoint: String,
        token: Option<Token>,
        connect: Duration,
        limits: Limits,
    ) -> Result<Self> {
        let http = client(connect).map_err(|message| Error::Unreachable {
            url: endpoint.clone(),
            message,
        })?;
        Ok(Self {
            endpoint,
            token,
            http,
            limits,
        })
    }

    /// The body of a 200 answer to `method`, within the row's event bound.
    async fn body(
        &self,
        method: &str,
        response: &mut reqwest::Response,
    ) -> std::result::Result<Vec<u8>, CallError> {
        let limit = self.limits.event_bytes;
        read_bounded(response, limit)
            .await
            .map_err(|error| match error {
                BodyError::TooLarge => CallError::Refused(format!(
                    "{method}: the answer ({}) is longer than {limit} bytes (the row's \
                 limits.event_bytes)",
                    content_type(response)
                )),
                BodyError::Read(error) => CallError::Unreachable(format!("{method}: {error}")),
            })
    }

    fn post(&self, method: &str, params: Value) -> reqwest::RequestBuilder {
        let body = rpc::Request::new(1, method, params);
        let mut request = self
            .http
            .post(&self.endpoint)
            .header(rpc::VERSION_HEADER, rpc::PROTOCOL_VERSION)
            .header(rpc::EXTENSIONS_HEADER, crate::EXTENSION_URI)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&body).unwrap_or_default());
        if let Some(Token(token)) = &self.token {
            request = request.bearer_auth(token);
        }
        request
    }

    async fn send(
        &self,
        method: &str,
        params: Value,
    ) -> std::result::Result<reqwest::Response, CallError> {
        let response = self
            .post(method, params)
            .header("accept", "text/event-stream, application/json")
            .send()
            .await
            .map_err(|error| request_error(method, &error))?;
        match response.status().as_u16() {
            200 => Ok(response),
            401 => Err(CallError::Unauthorized),
            status => {
                let mut response = response;
                let mut body = Vec::new();
                while body.len() < ERROR_BODY_BYTES {
                    match response.chunk().await {
                        Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                        _ => break,
                    }
                }
                let body: String = String::from_utf8_lossy(&body).chars().take(300).collect();
                Err(CallError::Unreachable(format!(
                    "{method}: HTTP {status}: {}",
                    body.trim()
                )))
            }
        }
    }

    /// A call answered by one JSON-RPC response: its result.
    pub(crate) async fn call(
        &self,
        method: &str,
        params: Value,
    ) -> std::result::Result<Value, CallError> {
        let mut response = self.send(method, params).await?;
        let bytes = self.body(method, &mut response).await?;
        result(method, &bytes)
    }

    /// A streaming call: its open stream, or the JSON-RPC error it was refused with.
    pub(crate) async fn open(
        &self,
        method: &str,
        params: Value,
    ) -> std::result::Result<Stream, CallError> {
        let mut response = self.send(method, params).await?;
        let kind = content_type(&response);
        let media = kind.trim_start().to_ascii_lowercase();
        if media.starts_with("text/event-stream") {
            return Ok(Stream {
                response,
                decoder: Decoder::new(self.limits.event_bytes),
                pending: VecDeque::new(),
                limit: self.limits.event_bytes,
            });
        }
        let bytes = self.body(method, &mut response).await?;
        if !media.starts_with("application/json") {
            // An error may come as JSON under another type; anything else is not A2A.
            return match result(method, &bytes) {
                Err(CallError::Rpc(error)) => Err(CallError::Rpc(error)),
                _ => Err(CallError::Refused(format!(
                    "{method}: the agent answered {kind}, neither an event stream nor JSON-RPC"
                ))),
            };
        }
        match result(method, &bytes) {
            Err(error) => Err(error),
            Ok(_) => Err(CallError::Unreachable(format!(
                "{method}: the agent answered with JSON, not a stream"
            ))),
        }
    }
}

fn result(method: &str, bytes: &[u8]) -> std::result::Result<Value, CallError> {
    let response: rpc::Response = serde_json::from_slice(bytes).map_err(|error| {
        CallError::Unreachable(format!("{method}: not a JSON-RPC response: {error}"))
    })?;
    match (response.result, response.error) {
        (_, Some(error)) => Err(CallError::Rpc(error)),
        (Some(result), None) => Ok(result),
        (None, None) => Err(CallError::Unreachable(format!(
            "{method}: a JSON-RPC response with neither result nor error"
        ))),
    }
}

/// What reading a stream gave.
#[derive(Debug)]
pub(crate) enum Next {
    /// An event.
    Event(Box<StreamResponse>),
    /// The stream ended with an error event.
    Error(RpcError),
    /// The server closed the stream.
    End,
    /// Nothing at all (not even a keep-alive) for the idle bound.
    Idle,
    /// The connection broke.
    Broken(String),
    /// The agent sent what is not A2A (an event that does not read, one past the row's
    /// bound): asking again would get the same.
    Invalid(String),
}

/// An open SSE stream of JSON-RPC results.
#[derive(Debug)]
pub(crate) struct Stream {
    response: reqwest::Response,
    decoder: Decoder,
    pending: VecDeque<crate::sse::Event>,
    limit: usize,
}

impl Stream {
    /// The next event; any bytes (a keep-alive comment too) within `idle` keep it waiting.
    pub(crate) async fn next(&mut self, idle: Duration) -> Next {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return decode(&event);
            }
            let chunk = match tokio::time::timeout(idle, self.response.chunk()).await {
                Err(_) => return Next::Idle,
                Ok(Err(error)) => return Next::Broken(error.to_string()),
                Ok(Ok(None)) => return Next::End,
                Ok(Ok(Some(chunk))) => chunk,
            };
            match self.decoder.feed(&chunk) {
                Ok(events) => self.pending.extend(events),
                Err(_) => {
                    return Next::Invalid(format!(
                        "an event longer than {} bytes (the row's limits.event_bytes)",
                        self.limit
                    ));
                }
            }
        }
    }
}

fn decode(event: &crate::sse::Event) -> Next {
    let response: rpc::Response = match serde_json::from_str(&event.data) {
        Ok(response) => response,
        Err(error) => return Next::Invalid(format!("an event that is not JSON-RPC: {error}")),
    };
    if let Some(error) = response.error {
        return Next::Error(error);
    }
    let Some(result) = response.result else {
        return Next::Invalid("an event with neither result nor error".to_owned());
    };
    match serde_json::from_value(result) {
        Ok(event) => Next::Event(Box::new(event)),
        Err(error) => Next::Invalid(format!("an event that is not a StreamResponse: {error}")),
    }
}

/// Reads the card at `url`, at most `limit` bytes of it.
pub(crate) async fn fetch_card(
    url: &str,
    token: Option<&Token>,
    connect: Duration,
    limit: usize,
) -> Result<AgentCard> {
    let unreachable = |message: String| Error::Unreachable {
        url: url.to_owned(),
        message,
    };
    let http = client(connect).map_err(unreachable)?;
    let mut request = http
        .get(url)
        .header(rpc::VERSION_HEADER, rpc::PROTOCOL_VERSION)
        .timeout(connect.saturating_mul(3));
    if let Some(Token(token)) = token {
        request = request.bearer_auth(token);
    }
    let mut response = match request.send().await {
        Ok(response) => response,
        Err(error) => {
            return Err(match request_error("cannot read its card", &error) {
                CallError::Refused(message) => Error::Refused {
                    url: url.to_owned(),
                    message,
                },
                other => unreachable(other.to_string()),
            });
        }
    };
    match response.status().as_u16() {
        200 => {}
        401 => {
            return Err(Error::Unauthorized {
                url: url.to_owned(),
            });
        }
        status => return Err(unreachable(format!("its card: HTTP {status}"))),
    }
    let bytes = match read_bounded(&mut response, limit).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => {
            return Err(Error::Refused {
                url: url.to_owned(),
                message: format!(
                    "its card is longer than {limit} bytes (the row's limits.card_bytes)"
                ),
            });
        }
        Err(BodyError::Read(error)) => return Err(unreachable(format!("its card: {error}"))),
    };
    crate::card::read_card(&bytes, &content_type(&response)).map_err(unreachable)
}

/// [`fetch_card`] from synchronous code (a factory's `build`), inside a tokio runtime or not:
/// the request runs on a thread of its own with a runtime of its own.
pub(crate) fn fetch_card_blocking(
    url: &str,
    token: Option<&Token>,
    connect: Duration,
    limit: usize,
) -> Result<AgentCard> {
    let fetch = || {
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| Error::Unreachable {
                        url: url.to_owned(),
                        message: format!("cannot start a runtime to read the card: {error}"),
                    })?;
                runtime.block_on(fetch_card(url, token, connect, limit))
            });
            worker.join().unwrap_or_else(|_| {
                Err(Error::Unreachable {
                    url: url.to_owned(),
                    message: "reading the card panicked".to_owned(),
                })
            })
        })
    };
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(fetch)
        }
        _ => fetch(),
    }
}

/// `{"id": task}` plus, for a `subagent serve`, our `from` (the events already read).
pub(crate) fn subscribe_params(task: &str, from: Option<usize>) -> Value {
    match from {
        Some(from) => json!({
            "id": task,
            "metadata": crate::ext::metadata_with(crate::ext::FROM_KEY, json!(from)),
        }),
        None => json!({"id": task}),
    }
}
