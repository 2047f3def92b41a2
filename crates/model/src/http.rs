//! The HTTP layer shared by the three clients: sending with retries before the first byte,
//! classifying error answers, and driving a streamed body through a protocol decoder with
//! first-byte, idle and overall timeouts and cancellation. Only events of the answer move the
//! first-byte and idle timers; keep-alives do not (the decoder tells them apart).

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::answer::limit_answer;
use crate::body::RequestBody;
use crate::config::{ApiKey, DEFAULT_MAX_ANSWER_BYTES, RetryConfig, Timeouts};
use crate::error::{Error, Result, TimeoutKind};
use crate::types::{ModelEvent, ModelStream};

/// How the key travels.
#[derive(Clone, Copy, Debug)]
pub enum AuthStyle {
    /// `x-api-key: KEY` (Anthropic).
    XApiKey,
    /// `authorization: Bearer KEY` (OpenAI and compatibles).
    Bearer,
}

/// A protocol decoder: bytes of a streamed body in, model events out.
pub trait Decoder: Send + 'static {
    /// Feeds a chunk of the body (split anywhere). Returns how many events of the answer the
    /// chunk completed; keep-alives (Anthropic `ping`, SSE comments, events with empty data)
    /// are not counted.
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<ModelEvent>) -> Result<usize>;
    /// The body ended cleanly.
    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<()>;
    /// Whether the final `Stop` event was produced.
    fn is_done(&self) -> bool;
}

/// An HTTP client bound to one server and key.
#[derive(Clone, Debug)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    base: String,
    key: Option<ApiKey>,
    timeouts: Timeouts,
    retry: RetryConfig,
    /// The cap on one answer's bytes ([`crate::ModelConfig::max_answer_bytes`]).
    max_answer_bytes: u64,
}

fn is_loopback(base: &str) -> bool {
    let rest = base
        .strip_prefix("http://")
        .or_else(|| base.strip_prefix("https://"))
        .unwrap_or(base);
    rest.starts_with("127.") || rest.starts_with("localhost") || rest.starts_with("[::1]")
}

/// The error with its sources, one line.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let s = inner.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        source = inner.source();
    }
    text
}

impl HttpClient {
    pub(crate) fn new(
        base: &str,
        key: Option<ApiKey>,
        timeouts: Timeouts,
        retry: RetryConfig,
    ) -> Result<Self> {
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(Error::Config {
                message: format!("base URL must start with http:// or https://: {base}"),
            });
        }
        let mut builder =
            reqwest::Client::builder().connect_timeout(Duration::from_millis(timeouts.connect_ms));
        if is_loopback(base) {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| Error::Config {
            message: error_chain(&e),
        })?;
        Ok(Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
            key,
            timeouts,
            retry,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
        })
    }

    /// Bounds each answer to `max_bytes` (see [`limit_answer`]).
    pub(crate) fn with_max_answer_bytes(mut self, max_bytes: u64) -> Self {
        self.max_answer_bytes = max_bytes;
        self
    }

    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    fn url(&self, path: &str) -> String {
        match (self.base.ends_with("/v1"), path.strip_prefix("/v1")) {
            (true, Some(rest)) => format!("{}{rest}", self.base),
            _ => format!("{}{path}", self.base),
        }
    }

    fn headers(&self, auth: AuthStyle, extra: &[(&'static str, &str)]) -> Result<HeaderMap> {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        for (name, value) in extra {
            let value = HeaderValue::from_str(value).map_err(|_| Error::Config {
                message: format!("invalid value for header {name}"),
            })?;
            headers.insert(HeaderName::from_static(name), value);
        }
        if let Some(key) = &self.key {
            let (name, text) = match auth {
                AuthStyle::XApiKey => ("x-api-key", key.expose().to_owned()),
                AuthStyle::Bearer => ("authorization", format!("Bearer {}", key.expose())),
            };
            let mut value = HeaderValue::from_str(&text).map_err(|_| Error::Config {
                message: "the API key contains characters not allowed in a header".into(),
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        Ok(headers)
    }

    /// Posts `body` and returns a stream of decoded events. Retries 429, 5xx and connection
    /// failures with backoff while nothing of the answer has arrived; never after.
    pub(crate) async fn stream<D: Decoder>(
        &self,
        path: &str,
        auth: AuthStyle,
        extra_headers: &[(&'static str, &str)],
        body: RequestBody,
        decoder: D,
        cancel: CancellationToken,
    ) -> Result<ModelStream> {
        let headers = self.headers(auth, extra_headers)?;
        let url = self.url(path);
        let overall = Limit::after(TimeoutKind::Total, self.timeouts.total_ms);
        let mut attempt = 0u32;
        loop {
            let start = Limit::after(TimeoutKind::FirstByte, self.timeouts.first_byte_ms)
                .or_sooner(overall);
            let send = self
                .client
                .post(&url)
                .headers(headers.clone())
                .body(body.to_http())
                .send();
            let outcome = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Error::Cancelled),
                r = tokio::time::timeout_at(start.at, send) => r,
            };
            let error = match outcome {
                Err(_) => return Err(start.error()),
                Ok(Ok(response)) if response.status().is_success() => {
                    let events = event_stream(
                        response,
                        decoder,
                        cancel,
                        start,
                        overall,
                        self.timeouts.idle_ms,
                    );
                    return Ok(limit_answer(events, self.max_answer_bytes));
                }
                Ok(Ok(response)) => {
                    error_from_response(response, start.at, self.key.as_ref()).await
                }
                Ok(Err(e)) if e.is_timeout() && e.is_connect() => Error::Timeout {
                    kind: TimeoutKind::Connect,
                    after: Duration::from_millis(self.timeouts.connect_ms),
                },
                Ok(Err(e)) if e.is_connect() => Error::network(format!(
                    "cannot connect to {}: {}",
                    self.base,
                    error_chain(&e)
                )),
                Ok(Err(e)) => Error::network(error_chain(&e)),
            };
            if !error.is_retryable() || attempt >= self.retry.max_retries {
                return Err(error);
            }
            attempt += 1;
            let wait = self.retry.delay(attempt, &error);
            // No attempt that would start past the overall limit: the last error it is.
            if Instant::now()
                .checked_add(wait)
                .is_none_or(|t| t >= overall.at)
            {
                return Err(error);
            }
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Error::Cancelled),
                () = tokio::time::sleep(wait) => {}
            }
        }
    }
}

/// The longest wait a `retry-after` is kept as: a larger value (or `inf`) is clamped to it.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// The most bytes of an error answer's body that are read.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A wait in seconds a server or a scenario asked for, bounded: `None` for NaN or a negative
/// number, at most [`MAX_RETRY_AFTER`] (also for infinity). Never panics.
pub(crate) fn bounded_wait(secs: f64) -> Option<Duration> {
    if secs.is_nan() || secs < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(secs).map_or(MAX_RETRY_AFTER, |d| d.min(MAX_RETRY_AFTER)))
}

/// Parses `retry-after-ms` or, when it is absent or unusable, `retry-after` (seconds, possibly
/// fractional; the HTTP-date form is ignored). NaN, negative and non-numeric values are ignored;
/// the result is at most [`MAX_RETRY_AFTER`].
pub fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    number("retry-after-ms")
        .and_then(|ms| bounded_wait(ms / 1000.0))
        .or_else(|| number("retry-after").and_then(bounded_wait))
}

/// Reads a server error body: Anthropic `{error:{type,message}}`, OpenAI
/// `{error:{message,type,code}}`, or raw text.
pub(crate) fn parse_error_body(text: &str) -> (String, String) {
    let value: Option<Value> = serde_json::from_str(text).ok();
    let error = value
        .as_ref()
        .and_then(|v| v.get("error"))
        .or(value.as_ref());
    let field = |name: &str| {
        error
            .and_then(|e| e.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let message = field("message").unwrap_or_else(|| text.trim().to_owned());
    let kind = field("type")
        .filter(|t| t != "error")
        .or_else(|| field("code"))
        .unwrap_or_default();
    (kind, message)
}

async fn error_from_response(
    response: reqwest::Response,
    deadline: Instant,
    key: Option<&ApiKey>,
) -> Error {
    let status = response.status();
    let retry_after = parse_retry_after(response.headers());
    let body = tokio::time::timeout_at(deadline, read_bounded(response, MAX_ERROR_BODY))
        .await
        .unwrap_or_default();
    let mut text = String::from_utf8_lossy(&body).into_owned();
    // A server or proxy may quote the key it refused: never let it into an error.
    if let Some(key) = key.map(ApiKey::expose).filter(|k| !k.is_empty()) {
        text = text.replace(key, "[redacted]");
    }
    let (kind, mut message) = parse_error_body(&text);
    if message.is_empty() {
        message = status.to_string();
    }
    Error::from_server(status.as_u16(), &kind, message, retry_after)
}

/// Reads a body up to `limit` bytes (what arrived before a read error is kept).
async fn read_bounded(mut response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let take = chunk.len().min(limit - body.len());
                body.extend_from_slice(&chunk[..take]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    body
}

/// Further than any timer needs to look (a century): configured limits are clamped to it, so
/// no deadline overflows.
const FAR: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// A deadline and the timeout it stands for.
#[derive(Clone, Copy, Debug)]
struct Limit {
    at: Instant,
    kind: TimeoutKind,
    after: Duration,
}

impl Limit {
    /// `ms` milliseconds from now.
    fn after(kind: TimeoutKind, ms: u64) -> Self {
        let after = Duration::from_millis(ms);
        Self {
            at: Instant::now() + after.min(FAR),
            kind,
            after,
        }
    }

    /// This limit, or `other` when it runs out first.
    fn or_sooner(self, other: Limit) -> Self {
        if other.at < self.at { other } else { self }
    }

    fn error(self) -> Error {
        Error::Timeout {
            kind: self.kind,
            after: self.after,
        }
    }
}

type Body = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

struct Driver<D> {
    body: Option<Body>,
    decoder: D,
    pending: VecDeque<Result<ModelEvent>>,
    cancel: CancellationToken,
    /// What runs out next: the first-byte limit until the answer's first event, then the idle
    /// limit from its latest event; never later than `overall`.
    limit: Limit,
    overall: Limit,
    idle_ms: u64,
    scratch: Vec<ModelEvent>,
}

impl<D: Decoder> Driver<D> {
    fn end(&mut self, error: Option<Error>) {
        // Dropping the body closes the connection.
        self.body = None;
        if let Some(error) = error {
            self.pending.push_back(Err(error));
        }
    }

    fn take_scratch(&mut self) {
        self.pending.extend(self.scratch.drain(..).map(Ok));
    }

    async fn step(&mut self) {
        let Some(body) = self.body.as_mut() else {
            return;
        };
        let limit = self.limit;
        let next = tokio::select! {
            biased;
            () = self.cancel.cancelled() => {
                self.end(Some(Error::Cancelled));
                return;
            }
            r = tokio::time::timeout_at(limit.at, body.next()) => r,
        };
        match next {
            Err(_) => self.end(Some(limit.error())),
            Ok(Some(Err(e))) => self.end(Some(Error::network(format!(
                "the stream broke before the answer was complete: {}",
                error_chain(&e)
            )))),
            Ok(Some(Ok(bytes))) => {
                let result = self.decoder.feed(&bytes, &mut self.scratch);
                self.take_scratch();
                match result {
                    Err(e) => self.end(Some(e)),
                    Ok(_) if self.decoder.is_done() => self.end(None),
                    // Only keep-alives (or part of an event): the timer runs on.
                    Ok(0) => {}
                    Ok(_) => {
                        self.limit =
                            Limit::after(TimeoutKind::Idle, self.idle_ms).or_sooner(self.overall);
                    }
                }
            }
            Ok(None) => {
                let result = self.decoder.finish(&mut self.scratch);
                self.take_scratch();
                match result {
                    Err(e) => self.end(Some(e)),
                    Ok(()) if !self.decoder.is_done() => self.end(Some(Error::protocol(
                        "the stream ended before the model finished its answer",
                    ))),
                    Ok(()) => self.end(None),
                }
            }
        }
    }
}

fn event_stream<D: Decoder>(
    response: reqwest::Response,
    decoder: D,
    cancel: CancellationToken,
    start: Limit,
    overall: Limit,
    idle_ms: u64,
) -> ModelStream {
    let driver = Driver {
        body: Some(Box::pin(response.bytes_stream())),
        decoder,
        pending: VecDeque::new(),
        cancel,
        limit: start,
        overall,
        idle_ms,
        scratch: Vec::new(),
    };
    Box::pin(futures::stream::unfold(driver, |mut d| async move {
        loop {
            if let Some(item) = d.pending.pop_front() {
                return Some((item, d));
            }
            d.body.as_ref()?;
            d.step().await;
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The longest wait a `retry-after` may ask for.
    const DAY: Duration = Duration::from_secs(24 * 60 * 60);

    fn headers(name: &'static str, value: &str) -> Option<HeaderMap> {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_str(value).ok()?);
        Some(headers)
    }

    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<f64>().prop_map(|f| f.to_string()),
            any::<f64>().prop_map(|f| format!("{f:e}")),
            any::<i64>().prop_map(|i| i.to_string()),
            "[-+]?[0-9]{0,400}(\\.[0-9]{0,5})?([eE][-+]?[0-9]{1,4})?",
            "(?i)[-+]?(inf|infinity|nan)",
            "\\PC{0,20}",
        ]
    }

    proptest! {
        #[test]
        fn retry_after_never_panics_and_stays_bounded(value in number()) {
            for name in ["retry-after-ms", "retry-after"] {
                if let Some(headers) = headers(name, &value) {
                    let parsed = parse_retry_after(&headers);
                    prop_assert!(parsed.is_none_or(|d| d <= DAY), "{name}: {value} → {parsed:?}");
                }
            }
        }
    }
}
