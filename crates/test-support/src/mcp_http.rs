//! A small MCP streamable HTTP client for the tests of `subagent mcp --listen`: plain HTTP
//! (`reqwest`), so a test sees every status, header and server-sent event as they come.
//!
//! One session: [`Client::initialize`] sends `initialize` and `notifications/initialized` and
//! keeps the `Mcp-Session-Id`; [`Client::post`] sends one message and returns the response,
//! whose events [`Events`] reads one JSON-RPC message at a time.

use std::time::Duration;

use serde_json::{Value, json};

/// The protocol version the client asks for.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// A client of one MCP endpoint (`http://127.0.0.1:PORT/mcp`).
#[derive(Clone, Debug)]
pub struct Client {
    url: String,
    token: Option<String>,
    session: Option<String>,
    http: reqwest::Client,
}

impl Client {
    /// A client of `url` presenting `token` (as `Authorization: Bearer`) when given.
    pub fn new(url: impl Into<String>, token: Option<&str>) -> Self {
        Self {
            url: url.into(),
            token: token.map(str::to_owned),
            session: None,
            http: reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
        }
    }

    /// The session id the server gave, once initialized.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// A request to the endpoint with the headers of the protocol (and the token and the
    /// session, when there are).
    pub fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .request(method, &self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", PROTOCOL_VERSION);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        request
    }

    /// `POST`s one message; the response as it came.
    pub async fn post(&self, message: Value) -> reqwest::Response {
        self.request(reqwest::Method::POST)
            .body(message.to_string())
            .send()
            .await
            .unwrap_or_else(|error| panic!("POST {}: {error}", self.url))
    }

    /// Opens a session: `initialize` (id 0), its answer read, then
    /// `notifications/initialized`. Returns the `initialize` result.
    pub async fn initialize(&mut self) -> Value {
        let response = self
            .post(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}),
            )
            .await;
        assert_eq!(response.status(), 200, "initialize");
        self.session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let answer = Events::new(response).answer(0).await;
        let initialized = self
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(initialized.status(), 202, "notifications/initialized");
        answer["result"].clone()
    }

    /// Sends request `id` of `method` with `params` and returns its answer (the whole
    /// JSON-RPC message), skipping what comes before it.
    pub async fn ask(&self, id: u64, method: &str, params: Value) -> Value {
        let response = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        assert_eq!(response.status(), 200, "{method}");
        Events::new(response).answer(id).await
    }

    /// Sends `notifications/cancelled` for request `id`.
    pub async fn cancel(&self, id: u64) -> reqwest::Response {
        self.post(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "changed my mind"}}),
        )
        .await
    }

    /// Ends the session (`DELETE`).
    pub async fn delete(&self) -> reqwest::Response {
        self.request(reqwest::Method::DELETE)
            .send()
            .await
            .unwrap_or_else(|error| panic!("DELETE {}: {error}", self.url))
    }
}

/// The JSON-RPC messages of a response's event stream, one at a time.
#[derive(Debug)]
pub struct Events {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl Events {
    /// The events of `response` (a `text/event-stream`).
    pub fn new(response: reqwest::Response) -> Self {
        Self {
            response,
            buffer: Vec::new(),
        }
    }

    /// The next message (an event's `data`, when it is JSON), or `None` once the stream ends.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            while let Some(end) = find(&self.buffer, b"\n\n") {
                let event: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let text = String::from_utf8_lossy(&event);
                let data: Vec<&str> = text
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if let Ok(message) = serde_json::from_str(&data.join("\n")) {
                    return Some(message);
                }
            }
            match self.response.chunk().await {
                Ok(Some(chunk)) => self.buffer.extend_from_slice(&chunk),
                Ok(None) | Err(_) => return None,
            }
        }
    }

    /// Reads until the answer to request `id` and returns it.
    pub async fn answer(&mut self, id: u64) -> Value {
        while let Some(message) = self.next().await {
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
        panic!("the stream ended before the answer to request {id}")
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
