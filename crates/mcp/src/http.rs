//! `subagent mcp --listen`: the same tools over MCP streamable HTTP, one endpoint
//! ([`MCP_PATH`]: `POST` messages, `GET` the session's stream, `DELETE` the session), on rmcp's
//! tower service with sessions (`Mcp-Session-Id`), behind the accept loop `subagent serve` uses
//! (`subagent-http`: header timeout, bounds on connections).
//!
//! Around rmcp's service, [`check`]:
//! - **Auth.** With a token, a request without `Authorization: Bearer <token>` (compared in
//!   constant time) is answered `401` and reaches nothing.
//! - **DNS rebinding.** Without a token the server is loopback only (the CLI refuses anything
//!   else), and rmcp checks that `Host` is a loopback name and `Origin`, when a browser sends
//!   one, a loopback origin (`403` otherwise). With a token neither is checked: a browser never
//!   sends the token by itself, so a page it did not come from cannot use the server.
//! - **A client that goes away.** A session's end (`DELETE`) cancels its runs at once; a call
//!   whose response stream is dropped (the client closed the connection) is cancelled. The
//!   spec lets a server keep a call going for a client to pick up again; ours does not (no
//!   event store), so a child nobody can hear from is stopped rather than left running.
//!
//! Each session gets its own handler ([`Shared::for_session`]): its runs' tokens are children
//! of the server's, and every call counts in one tracker, so a stop cancels every run and
//! returns once all have ended.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subagent_core::CancellationToken;
use subagent_http::{Bounds, Token};
use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;

use crate::{McpServer, Result, Shared};

/// Where the MCP endpoint is served.
pub const MCP_PATH: &str = "/mcp";

/// The session header of streamable HTTP.
const SESSION_HEADER: &str = "mcp-session-id";

/// The origins a browser page may call from when no token is set: this machine's, any port.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// How long a stop waits for the calls' answers to be written out once every run has ended.
const ANSWERS_OUT: Duration = Duration::from_secs(5);

/// How [`McpServer::serve_http`] serves.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// The token every request must present; `None`: no auth (for loopback only; the CLI
    /// refuses a non-loopback address without one).
    pub token: Option<Token>,
    /// The most connections open at once (`subagent_http::serve`'s rule past it).
    pub max_connections: usize,
    /// The most connections open at once from one peer.
    pub max_connections_per_peer: usize,
    /// The time a connection has to send a complete request head.
    pub header_timeout: Duration,
}

impl HttpConfig {
    /// No token, the bounds on connections [`subagent_http::default_bounds`] gives for the
    /// process's limit on open files, a 10 s header timeout.
    pub fn new() -> Self {
        let (max_connections, max_connections_per_peer) =
            subagent_http::default_bounds(subagent_http::fd_limit());
        Self {
            token: None,
            max_connections,
            max_connections_per_peer,
            header_timeout: Duration::from_secs(10),
        }
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// The sessions whose calls are going, by id: ending one cancels its runs.
#[derive(Debug, Default)]
pub(crate) struct Sessions(Mutex<HashMap<String, CancellationToken>>);

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session `id` ended: its runs are cancelled.
    fn end(&self, id: &str) {
        if let Some(token) = self.lock().remove(id) {
            tracing::debug!(session = id, "the MCP session ended: cancelling its runs");
            token.cancel();
        }
    }
}

/// A session's handler's place in [`Sessions`]: its id, learned from its first call, and
/// forgotten when the handler goes (the session is over).
#[derive(Debug)]
pub(crate) struct SessionSlot {
    sessions: Arc<Sessions>,
    id: OnceLock<String>,
}

impl SessionSlot {
    pub(crate) fn new(sessions: Arc<Sessions>) -> Self {
        Self {
            sessions,
            id: OnceLock::new(),
        }
    }
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        if let Some(id) = self.id.get() {
            self.sessions.lock().remove(id);
        }
    }
}

/// Cancelled when the response stream of the `POST` that carried a call is dropped.
#[derive(Clone, Debug)]
struct Gone(CancellationToken);

/// For a call over HTTP: records its session (so that the session's end cancels it) and
/// returns the token its dropped stream cancels. `None` over stdio.
pub(crate) fn joined(
    shared: &Shared,
    context: &RequestContext<RoleServer>,
) -> Option<CancellationToken> {
    let parts = context.extensions.get::<axum::http::request::Parts>()?;
    if let Some(slot) = &shared.session
        && let Some(id) = parts
            .headers
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
        && slot.id.set(id.to_owned()).is_ok()
    {
        slot.sessions
            .lock()
            .insert(id.to_owned(), shared.connection.clone());
    }
    parts.extensions.get::<Gone>().map(|gone| gone.0.clone())
}

/// What [`check`] needs.
struct Guard {
    token: Option<Token>,
    sessions: Arc<Sessions>,
    /// One token per `POST` response still being written, so that a stop lets the calls'
    /// answers out before it ends the sessions.
    streams: TaskTracker,
}

/// In front of rmcp's service: the token, a session's end, a call's stream.
async fn check(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    if let Some(token) = &guard.token
        && !token.admits(
            request
                .headers()
                .get(header::AUTHORIZATION)
                .map(HeaderValue::as_bytes),
        )
    {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "unauthorized: send Authorization: Bearer <token>\n",
        )
            .into_response();
    }
    if request.method() == Method::DELETE
        && let Some(id) = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
    {
        guard.sessions.end(id);
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let gone = CancellationToken::new();
    request.extensions_mut().insert(Gone(gone.clone()));
    let (parts, body) = next.run(request).await.into_parts();
    // Dropped with the body: at its end (the call has answered, nothing left to cancel) or
    // when the connection closes before it.
    let held = (gone.drop_guard(), guard.streams.token());
    let body = Body::from_stream(body.into_data_stream().map(move |chunk| {
        let _held = &held;
        chunk
    }));
    Response::from_parts(parts, body)
}

/// rmcp's settings: sessions, its DNS-rebinding checks as the token decides, `stop` ending
/// every session and stream.
fn rmcp_config(token: bool, stop: CancellationToken) -> StreamableHttpServerConfig {
    let config = StreamableHttpServerConfig::default().with_cancellation_token(stop);
    if token {
        config.disable_allowed_hosts().disable_allowed_origins()
    } else {
        config
            .with_allowed_origins(LOOPBACK_ORIGINS)
            .enforce_origin_validation()
    }
}

impl McpServer {
    /// Serves MCP streamable HTTP on `listener` at [`MCP_PATH`], any number of clients, until
    /// `stop` resolves: then every run is cancelled, the calls they served answer with their
    /// cancelled outcome, the sessions end, the connections close, and this returns once
    /// every run has ended (their providers have stopped their process trees).
    pub async fn serve_http(
        self,
        listener: TcpListener,
        config: HttpConfig,
        stop: impl Future<Output = ()> + Send,
    ) -> Result<()> {
        let shared = Arc::clone(&self.shared);
        let sessions = Arc::new(Sessions::default());
        let ended = CancellationToken::new();
        let factory = {
            let shared = Arc::clone(&shared);
            let sessions = Arc::clone(&sessions);
            move || {
                Ok(McpServer {
                    shared: Arc::new(shared.for_session(Arc::clone(&sessions))),
                })
            }
        };
        let service = StreamableHttpService::new(
            factory,
            Arc::new(LocalSessionManager::default()),
            rmcp_config(config.token.is_some(), ended.clone()),
        );
        let streams = TaskTracker::new();
        let guard = Arc::new(Guard {
            token: config.token.clone(),
            sessions,
            streams: streams.clone(),
        });
        let router = Router::new()
            .route_service(MCP_PATH, service)
            .layer(middleware::from_fn_with_state(guard, check));
        let max = config.max_connections.max(1);
        let bounds = Bounds {
            max,
            per_peer: config.max_connections_per_peer.clamp(1, max),
            header_timeout: config.header_timeout,
            sockets: subagent_http::socket_bound(max, subagent_http::fd_limit()),
        };
        let stop_accepting = CancellationToken::new();
        let serving = tokio::spawn(subagent_http::serve(
            listener,
            router,
            bounds,
            config.token,
            stop_accepting.clone(),
        ));
        stop.await;
        tracing::debug!("told to stop: cancelling every run");
        // The calls answer (cancelled) while their streams are still open, and their answers
        // are let out (a client that reads nothing holds the stop up to ANSWERS_OUT).
        shared.finish().await;
        streams.close();
        if tokio::time::timeout(ANSWERS_OUT, streams.wait())
            .await
            .is_err()
        {
            tracing::debug!("a client did not read its answers: closing its streams");
        }
        ended.cancel();
        stop_accepting.cancel();
        if let Err(error) = serving.await {
            tracing::warn!(%error, "the MCP HTTP server's task failed");
        }
        tracing::debug!("every run the MCP clients started has ended");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ending_a_session_cancels_its_token_once_and_a_slot_forgets_its_id() {
        let sessions = Arc::new(Sessions::default());
        let token = CancellationToken::new();
        sessions.lock().insert("s1".to_owned(), token.clone());
        sessions.end("other");
        assert!(!token.is_cancelled());
        sessions.end("s1");
        assert!(token.is_cancelled());
        let slot = SessionSlot::new(Arc::clone(&sessions));
        slot.id.set("s2".to_owned()).unwrap();
        sessions
            .lock()
            .insert("s2".to_owned(), CancellationToken::new());
        drop(slot);
        assert!(sessions.lock().is_empty());
    }
}
