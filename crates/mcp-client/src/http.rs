//! Servers reached over MCP's streamable HTTP: rmcp's client transport driven by the
//! workspace's `reqwest` (rmcp's own reqwest client wants another major version of it).
//!
//! A POST carries each message; the answer is `202` (nothing to read), one JSON message, or a
//! stream of server-sent events; a GET opens the server's own stream; a DELETE ends the
//! session. Every body is read within a bound (one message or one event, the bound the caller
//! gives), so a server cannot fill memory with one answer.
//!
//! Deliberately not here: OAuth (a server that asks for it gets the configured `headers` and
//! nothing more), the older SSE transport (rmcp no longer has it: such servers are refused with
//! [`crate::ErrorCode::UnsupportedTransport`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::stream::{BoxStream, Stream, StreamExt};
use http::{HeaderName, HeaderValue, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse, SseStream};

/// The transport to the server at `url`, sending `headers` with every request.
///
/// # Errors
/// What is wrong, in words: a header that is not a valid HTTP header.
pub(crate) fn transport(
    url: &str,
    headers: &BTreeMap<String, String>,
    notes: Notes,
    max_bytes: usize,
) -> Result<StreamableHttpClientTransport<HttpClient>, String> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("`{name}` is not an HTTP header name"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header `{name}` is not valid in HTTP"))?;
        custom.insert(header, value);
    }
    let client = HttpClient::new(notes, max_bytes).map_err(|e| e.to_string())?;
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(custom)
        .max_json_response_size(max_bytes)
        .max_sse_event_size(max_bytes);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// What failed on the wire.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct WireError(String);

impl From<reqwest::Error> for WireError {
    fn from(error: reqwest::Error) -> Self {
        // reqwest's own text stops at the outermost cause ("error sending request"): keep the
        // chain, which says "connection refused".
        let mut text = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        Self(text)
    }
}

type HttpResult<T> = Result<T, StreamableHttpError<WireError>>;

/// What the client saw go wrong, for the error the model reads once rmcp's session ends (rmcp
/// says only that its transport closed).
#[derive(Clone, Default)]
pub(crate) struct Notes {
    /// The last failure, in words.
    pub(crate) last: Arc<std::sync::Mutex<Option<String>>>,
    /// Answers that were not MCP messages.
    pub(crate) garbage: Arc<AtomicUsize>,
}

impl Notes {
    fn failed<T>(&self, result: HttpResult<T>) -> HttpResult<T> {
        if let Err(error) = &result {
            if matches!(
                error,
                StreamableHttpError::Deserialize(_)
                    | StreamableHttpError::UnexpectedContentType(_)
                    | StreamableHttpError::Sse(_)
            ) {
                self.garbage.fetch_add(1, Ordering::Relaxed);
            }
            if !matches!(error, StreamableHttpError::ServerDoesNotSupportSse)
                && let Ok(mut last) = self.last.lock()
            {
                *last = Some(error.to_string());
            }
        }
        result
    }
}

/// rmcp's streamable HTTP client over the workspace's `reqwest`.
#[derive(Clone)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    notes: Notes,
    /// The largest event of a stream the server opens.
    max_bytes: usize,
}

impl HttpClient {
    /// A client that follows no redirect (a server's headers never go to another host).
    fn new(notes: Notes, max_bytes: usize) -> Result<Self, WireError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            client,
            notes,
            max_bytes,
        })
    }

    fn request(
        &self,
        method: reqwest::Method,
        uri: &str,
        session: Option<&str>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> reqwest::RequestBuilder {
        let mut request = self
            .client
            .request(method, uri)
            .header(
                http::header::ACCEPT,
                format!("{JSON_MIME_TYPE}, {EVENT_STREAM_MIME_TYPE}"),
            )
            .headers(headers.into_iter().collect());
        if let Some(session) = session {
            request = request.header(HEADER_SESSION_ID, session);
        }
        if let Some(token) = auth {
            request = request.bearer_auth(token);
        }
        request
    }
}

fn wire(error: reqwest::Error) -> StreamableHttpError<WireError> {
    StreamableHttpError::Client(error.into())
}

/// The media type of `response`, without parameters, lower-cased.
fn media_type(response: &reqwest::Response) -> Option<String> {
    let value = response.headers().get(http::header::CONTENT_TYPE)?;
    let value = value.to_str().ok()?;
    Some(
        value
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase(),
    )
}

/// A refusal of the server's, with the start of what it said.
async fn refused(response: reqwest::Response, limit: usize) -> StreamableHttpError<WireError> {
    let status = response.status();
    let body = read_bounded(response, limit.min(1024))
        .await
        .map(|(body, _)| String::from_utf8_lossy(&body).trim().to_owned())
        .unwrap_or_default();
    let hint = if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        " (the server wants credentials: set them in the server's `headers`)"
    } else {
        ""
    };
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
        "HTTP {status}{hint}{}{body}",
        if body.is_empty() { "" } else { ": " }
    )))
}

/// At most `limit` bytes of `response`'s body, and whether there was more.
async fn read_bounded(
    response: reqwest::Response,
    limit: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > limit {
            body.extend_from_slice(&chunk[..limit - body.len()]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// The events of `response`, none larger than `limit` bytes.
fn events(response: reqwest::Response, limit: usize) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::from_bytes_stream(Bounded {
        inner: response.bytes_stream().boxed(),
        limit,
        pending: 0,
        line_empty: true,
        previous: 0,
    })
    .boxed()
}

/// A byte stream that fails once one event (the bytes between two blank lines) passes `limit`.
struct Bounded {
    inner: BoxStream<'static, Result<Bytes, reqwest::Error>>,
    limit: usize,
    pending: usize,
    line_empty: bool,
    previous: u8,
}

impl Stream for Bounded {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match this.inner.poll_next_unpin(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                for &byte in chunk.iter() {
                    match byte {
                        b'\n' if this.previous == b'\r' => {}
                        b'\n' | b'\r' => {
                            if this.line_empty {
                                this.pending = 0;
                            }
                            this.line_empty = true;
                        }
                        _ => {
                            this.line_empty = false;
                            this.pending += 1;
                        }
                    }
                    this.previous = byte;
                }
                if this.pending > this.limit {
                    return Poll::Ready(Some(Err(std::io::Error::other(format!(
                        "an event of the server's passed {} bytes",
                        this.limit
                    )))));
                }
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(error))) => {
                Poll::Ready(Some(Err(std::io::Error::other(WireError::from(error).0))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl StreamableHttpClient for HttpClient {
    type Error = WireError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let posted = async {
            let body = serde_json::to_vec(&message)?;
            let had_session = session_id.is_some();
            let response = self
                .request(
                    reqwest::Method::POST,
                    &uri,
                    session_id.as_deref(),
                    auth_header,
                    custom_headers,
                )
                .header(http::header::CONTENT_TYPE, JSON_MIME_TYPE)
                .body(body)
                .send()
                .await
                .map_err(wire)?;
            let status = response.status();
            if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
                return Ok(StreamableHttpPostResponse::Accepted);
            }
            if status == StatusCode::NOT_FOUND && had_session {
                return Err(StreamableHttpError::SessionExpired);
            }
            let session = response
                .headers()
                .get(HEADER_SESSION_ID)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let media = media_type(&response);
            if !status.is_success() {
                // A JSON-RPC error answer may come with a failing status: it is the answer.
                if media.as_deref() == Some(JSON_MIME_TYPE) {
                    let (body, cut) = read_bounded(response, limits.max_error_response_size)
                        .await
                        .map_err(wire)?;
                    if !cut
                        && let Ok(message) = serde_json::from_slice::<ServerJsonRpcMessage>(&body)
                    {
                        return Ok(StreamableHttpPostResponse::Json(message, session));
                    }
                    return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                        format!("HTTP {status}: {}", String::from_utf8_lossy(&body).trim()),
                    )));
                }
                return Err(refused(response, limits.max_error_response_size).await);
            }
            match media.as_deref() {
                Some(EVENT_STREAM_MIME_TYPE) => Ok(StreamableHttpPostResponse::Sse(
                    events(response, limits.max_sse_event_size),
                    session,
                )),
                Some(JSON_MIME_TYPE) => {
                    let (body, cut) = read_bounded(response, limits.max_json_response_size)
                        .await
                        .map_err(wire)?;
                    if cut {
                        return Err(StreamableHttpError::ResponseBodyTooLarge {
                            max_size: limits.max_json_response_size,
                        });
                    }
                    if body.is_empty() {
                        return Ok(StreamableHttpPostResponse::Accepted);
                    }
                    Ok(StreamableHttpPostResponse::Json(
                        serde_json::from_slice(&body)?,
                        session,
                    ))
                }
                // An empty success to a notification, as some servers answer it.
                _ if response.content_length() == Some(0) => {
                    Ok(StreamableHttpPostResponse::Accepted)
                }
                other => Err(StreamableHttpError::UnexpectedContentType(
                    other.map(str::to_owned),
                )),
            }
        };
        self.notes.failed(posted.await)
    }
    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        let response = self
            .request(
                reqwest::Method::DELETE,
                &uri,
                Some(&session_id),
                auth_header,
                custom_headers,
            )
            .send()
            .await
            .map_err(wire)?;
        let status = response.status();
        if status.is_success() || status == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        Err(refused(response, 1024).await)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            self.max_bytes,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        let mut request = self.request(
            reqwest::Method::GET,
            &uri,
            session_id.as_deref(),
            auth_header,
            custom_headers,
        );
        if let Some(last) = last_event_id {
            request = request.header(HEADER_LAST_EVENT_ID, last);
        }
        let opened = async {
            let response = request.send().await.map_err(wire)?;
            if response.status() == StatusCode::METHOD_NOT_ALLOWED {
                return Err(StreamableHttpError::ServerDoesNotSupportSse);
            }
            if !response.status().is_success() {
                return Err(refused(response, 1024).await);
            }
            match media_type(&response).as_deref() {
                Some(EVENT_STREAM_MIME_TYPE) => Ok(events(response, max_sse_event_size)),
                other => Err(StreamableHttpError::UnexpectedContentType(
                    other.map(str::to_owned),
                )),
            }
        };
        self.notes.failed(opened.await)
    }
}
