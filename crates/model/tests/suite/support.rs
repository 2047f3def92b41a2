//! Shared helpers: a model of each kind pointed at a fake server, raw HTTP servers.

use std::sync::Arc;

use subagent_model::{
    Model, ModelConfig, ModelEvent, ModelKind, ModelRequest, ModelStream, RetryConfig, Timeouts,
    build_with_env,
};
use subagent_session::Message;
use subagent_test_support::FakeServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub(super) const KINDS: [ModelKind; 3] = [
    ModelKind::Anthropic,
    ModelKind::OpenaiResponses,
    ModelKind::OpenaiChat,
];

pub(super) const SECRET: &str = "sk-test-secret-4242";

pub(super) fn config(url: &str, kind: ModelKind) -> ModelConfig {
    let mut config = ModelConfig::new(kind, "test-model").with_base_url(url);
    config.api_key_env = Some("TEST_MODEL_KEY".into());
    config.timeouts = Timeouts {
        connect_ms: 2_000,
        first_byte_ms: 5_000,
        idle_ms: 5_000,
        total_ms: 30_000,
    };
    config.retry = RetryConfig {
        max_retries: 0,
        backoff_base_ms: 1,
        max_backoff_ms: 20,
    };
    config
}

pub(super) fn build(config: &ModelConfig) -> Arc<dyn Model> {
    build_with_env(config, |name| {
        (name == "TEST_MODEL_KEY").then(|| SECRET.to_owned())
    })
    .unwrap()
}

pub(super) fn model(server: &FakeServer, kind: ModelKind) -> Arc<dyn Model> {
    build(&config(&server.url(), kind))
}

pub(super) fn request(prompt: &str) -> ModelRequest {
    ModelRequest::new("test-model", vec![Message::user(prompt)])
}

/// Drains a stream, keeping every item (events and the final error, if any).
/// `model`'s whole answer to `request`.
pub(super) async fn answer(
    model: &dyn Model,
    request: ModelRequest,
) -> subagent_model::ModelResponse {
    subagent_model::collect(
        model
            .stream(request, tokio_util::sync::CancellationToken::new())
            .await
            .unwrap(),
    )
    .await
    .unwrap()
}

/// The error `model` refuses `request` with before its stream starts.
pub(super) async fn refusal(model: &dyn Model, request: ModelRequest) -> subagent_model::Error {
    model
        .stream(request, tokio_util::sync::CancellationToken::new())
        .await
        .err()
        .unwrap()
}

/// Streams `request(prompt)` from `model` and drains the stream: its events, and the error it
/// ended with, if any.
pub(super) async fn streamed(
    model: &dyn Model,
    prompt: &str,
) -> (Vec<ModelEvent>, Option<subagent_model::Error>) {
    let stream = model
        .stream(request(prompt), tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    drain(stream).await
}

pub(super) async fn drain(
    mut stream: ModelStream,
) -> (Vec<ModelEvent>, Option<subagent_model::Error>) {
    use futures::StreamExt;
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(e) => return (events, Some(e)),
        }
    }
    (events, None)
}

pub(super) fn text_of(events: &[ModelEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Serves 127.0.0.1:0, each connection by `answer` on a task of its own; the server's url.
async fn serve<F, Fut>(answer: F) -> String
where
    F: Fn(tokio::net::TcpStream) -> Fut + Copy + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(answer(socket));
        }
    });
    format!("http://{addr}")
}

/// A one-shot raw HTTP server: answers every connection with `response` verbatim, then closes.
pub(super) async fn raw_server(response: &'static str) -> String {
    serve(move |mut socket| async move {
        let mut buf = vec![0u8; 65536];
        let mut seen = Vec::new();
        // Read until the end of the headers and the announced body.
        loop {
            let n = socket.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&seen);
            if let Some(end) = text.find("\r\n\r\n") {
                let len = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                    })
                    .unwrap_or(0);
                if seen.len() >= end + 4 + len {
                    break;
                }
            }
        }
        let _ = socket.write_all(response.as_bytes()).await;
        let _ = socket.shutdown().await;
    })
    .await
}

/// A raw HTTP server that answers every request with `head` and then a body of `x` that never
/// ends (64 KiB at a time, until the client goes away).
pub(super) async fn endless_server(head: &'static str) -> String {
    serve(move |mut socket| async move {
        let mut buf = vec![0u8; 65536];
        let mut seen = Vec::new();
        while !String::from_utf8_lossy(&seen).contains("\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                return;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let chunk = vec![b'x'; 65536];
        while socket.write_all(&chunk).await.is_ok() {}
    })
    .await
}

/// A port nothing listens on.
pub(super) async fn closed_port_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}
