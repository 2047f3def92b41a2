//! The provider's HTTP side: the card, JSON-RPC calls and SSE streams, with the version header
//! and the bearer token on every request and an idle bound on every read.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{Value, json};

use crate::card::AgentCard;
use crate::error::{Error, Result};
use crate::rpc::{self, RpcError};
use crate::sse::Decoder;
use crate::types::StreamResponse;

/// The longest SSE line read (an event with a large tool result fits; a runaway peer does not).
const MAX_LINE: usize = 8 << 20;

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
pub enum CallError {
    /// No connection, a broken one, an HTTP status other than 200 and 401, or not A2A.
    Unreachable(String),
    /// HTTP 401.
    Unauthorized,
    /// A JSON-RPC error.
    Rpc(RpcError),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unreachable(message) => f.write_str(message),
            Self::Unauthorized => f.write_str("the token was refused (HTTP 401)"),
            Self::Rpc(error) => write!(f, "{error}"),
        }
    }
}

/// One agent's JSON-RPC endpoint.
#[derive(Clone, Debug)]
pub struct Peer {
    /// The endpoint (the card's JSON-RPC interface).
    pub endpoint: String,
    token: Option<Token>,
    http: reqwest::Client,
}

fn client(connect: Duration) -> std::result::Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .connect_timeout(connect)
        .tcp_nodelay(true)
        .build()
        .map_err(|error| format!("cannot make an HTTP client: {error}"))
}

impl Peer {
    /// A peer at `endpoint`.
    pub fn new(endpoint: String, token: Option<Token>, connect: Duration) -> Result<Self> {
        let http = client(connect).map_err(|message| Error::Unreachable {
            url: endpoint.clone(),
            message,
        })?;
        Ok(Self {
            endpoint,
            token,
            http,
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
            .map_err(|error| CallError::Unreachable(format!("{method}: {error}")))?;
        match response.status().as_u16() {
            200 => Ok(response),
            401 => Err(CallError::Unauthorized),
            status => {
                let body = response.text().await.unwrap_or_default();
                let body: String = body.chars().take(300).collect();
                Err(CallError::Unreachable(format!(
                    "{method}: HTTP {status}: {}",
                    body.trim()
                )))
            }
        }
    }

    /// A call answered by one JSON-RPC response: its result.
    pub async fn call(&self, method: &str, params: Value) -> std::result::Result<Value, CallError> {
        let response = self.send(method, params).await?;
        let bytes = response
            .bytes()
            .await
            .map_err(|error| CallError::Unreachable(format!("{method}: {error}")))?;
        result(method, &bytes)
    }

    /// A streaming call: its open stream, or the JSON-RPC error it was refused with.
    pub async fn open(
        &self,
        method: &str,
        params: Value,
    ) -> std::result::Result<Stream, CallError> {
        let response = self.send(method, params).await?;
        let streams = response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        if streams {
            return Ok(Stream {
                response,
                decoder: Decoder::new(MAX_LINE),
                pending: VecDeque::new(),
            });
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|error| CallError::Unreachable(format!("{method}: {error}")))?;
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
pub enum Next {
    /// An event.
    Event(Box<StreamResponse>),
    /// The stream ended with an error event.
    Error(RpcError),
    /// The server closed the stream.
    End,
    /// Nothing at all (not even a keep-alive) for the idle bound.
    Idle,
    /// The connection broke or sent something unreadable.
    Broken(String),
}

/// An open SSE stream of JSON-RPC results.
#[derive(Debug)]
pub struct Stream {
    response: reqwest::Response,
    decoder: Decoder,
    pending: VecDeque<crate::sse::Event>,
}

impl Stream {
    /// The next event; any bytes (a keep-alive comment too) within `idle` keep it waiting.
    pub async fn next(&mut self, idle: Duration) -> Next {
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
                Err(error) => return Next::Broken(error.to_string()),
            }
        }
    }
}

fn decode(event: &crate::sse::Event) -> Next {
    let response: rpc::Response = match serde_json::from_str(&event.data) {
        Ok(response) => response,
        Err(error) => return Next::Broken(format!("an event that is not JSON-RPC: {error}")),
    };
    if let Some(error) = response.error {
        return Next::Error(error);
    }
    let Some(result) = response.result else {
        return Next::Broken("an event with neither result nor error".to_owned());
    };
    match serde_json::from_value(result) {
        Ok(event) => Next::Event(Box::new(event)),
        Err(error) => Next::Broken(format!("an event that is not a StreamResponse: {error}")),
    }
}

/// Reads the card at `url`.
pub async fn fetch_card(url: &str, token: Option<&Token>, connect: Duration) -> Result<AgentCard> {
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
    let response = request
        .send()
        .await
        .map_err(|error| unreachable(format!("cannot read its card: {error}")))?;
    match response.status().as_u16() {
        200 => {}
        401 => {
            return Err(Error::Unauthorized {
                url: url.to_owned(),
            });
        }
        status => return Err(unreachable(format!("its card: HTTP {status}"))),
    }
    let bytes = response
        .bytes()
        .await
        .map_err(|error| unreachable(format!("its card: {error}")))?;
    serde_json::from_slice(&bytes)
        .map_err(|error| unreachable(format!("its card is not an A2A agent card: {error}")))
}

/// [`fetch_card`] from synchronous code (a factory's `build`), inside a tokio runtime or not:
/// the request runs on a thread of its own with a runtime of its own.
pub fn fetch_card_blocking(
    url: &str,
    token: Option<&Token>,
    connect: Duration,
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
                runtime.block_on(fetch_card(url, token, connect))
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
pub fn subscribe_params(task: &str, from: Option<usize>) -> Value {
    match from {
        Some(from) => json!({
            "id": task,
            "metadata": crate::ext::metadata_with(crate::ext::FROM_KEY, json!(from)),
        }),
        None => json!({"id": task}),
    }
}
