//! `subagent-server`: `subagent serve`, a [`Registry`] behind the A2A 1.0 protocol.
//!
//! Serves the agent card at `/.well-known/agent-card.json` (public: the skills are the
//! preset's delegation rows and agent types, our extension carries each one's capability
//! table) and the JSON-RPC binding at [`RPC_PATH`] (`SendMessage`, `SendStreamingMessage` over
//! SSE, `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`). A sent message starts a run
//! through the registry, so a request the gate refuses starts nothing and comes back as an A2A
//! error with our stable code in its data. Runs belong to the server, not to a connection: a
//! client that goes away leaves its run going, and a client that comes back gets the task's
//! snapshot and every later event (`tasks`).
//!
//! Around it: bearer-token auth compared in constant time (`401` and nothing starts), a request
//! body limit (`413`), a bound on concurrent runs (`503` with `Retry-After`), the depth cap,
//! the `A2A-Version` header, bounds on connections and on the time to send a request head that
//! keep clients without a token from starving it (`subagent-http`, shared with `subagent mcp
//! --listen`), and a draining shutdown
//! ([`Server::serve`]): stop accepting, let runs end up to a deadline, then cancel them (their
//! providers stop their process trees).
//!
//! Deliberately not here: no provider (the caller hands over a built registry), no preset or
//! CLI parsing, no TLS (put a reverse proxy in front, `docs/remote.md`), no push notifications
//! and no HTTP+JSON binding yet.

mod card;
mod error;
mod rpc;
mod run;
mod tasks;
mod transcripts;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use subagent_core::CancellationToken;
use subagent_core::registry::Registry;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::task::TaskTracker;

pub use card::is_public_url;
pub use error::{Error, Result};
pub use run::Skill;
pub use subagent_a2a::card::AGENT_CARD_PATH;
pub use subagent_http::{MAX_HEAD, Token, default_bounds, fd_limit, raise_fd_limit, reserved_fds};

/// Where the JSON-RPC binding is served.
pub const RPC_PATH: &str = "/a2a";

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The card's name.
    pub name: String,
    /// The card's description.
    pub description: String,
    /// The URL clients reach this server at (behind a proxy: the proxy's), without the path;
    /// `None`: `http://<listening address>`.
    pub public_url: Option<String>,
    /// The token every request but the card's must present; `None`: no auth (for loopback
    /// only; the CLI refuses a non-loopback address without one).
    pub token: Option<Token>,
    /// The largest request body, in bytes.
    pub body_limit: usize,
    /// The most runs going at once; one more is refused with `503` and `Retry-After`.
    pub max_concurrent_runs: usize,
    /// The `Retry-After` of that refusal.
    pub retry_after: Duration,
    /// The depth cap: a request whose child would run deeper is refused (`DEPTH_EXCEEDED`).
    pub max_depth: u32,
    /// How long a shutdown lets runs finish before cancelling them.
    pub drain_deadline: Duration,
    /// How many tasks are remembered (the oldest finished ones are forgotten first).
    pub keep_tasks: usize,
    /// How many bytes of tasks are remembered, their snapshots measured as JSON and each kept
    /// event as JSON plus its fixed size in memory: past it the events of finished tasks are dropped first (a client that lost its
    /// stream gets the snapshot instead of what it missed), then the events of live tasks that
    /// every stream has read, then the oldest finished tasks no stream still reads (down to
    /// three quarters of it).
    pub keep_task_bytes: usize,
    /// The session store's directory, where the in-process runs write their transcripts: the
    /// transcript there of a task this server ran is deleted once no kept task refers to it
    /// (the task is forgotten past `keep_tasks`, or the server shuts down), as no client can
    /// reach it any more. Only session files directly in it and named by a run of this server
    /// are deleted, never by a scan (it also holds the user's own sessions). `None` (the
    /// default): every transcript stays.
    pub delete_transcripts_in: Option<PathBuf>,
    /// How long a finished task that was streamed keeps its events, for a client that lost
    /// its stream to come back for what it missed (`SubscribeToTask` with our `from`).
    pub keep_events: Duration,
    /// The most connections open at once; past it a newcomer takes the place of the oldest
    /// connection that has made no authenticated request yet, or is answered `503` and closed
    /// when there is none.
    pub max_connections: usize,
    /// The most connections open at once from one peer (an IPv4 address, an IPv6 /64), with
    /// the same rule among that peer's connections.
    pub max_connections_per_peer: usize,
    /// The time a connection has to send a complete request head, from its opening or the end
    /// of its previous response (an idle keep-alive connection is closed then).
    pub header_timeout: Duration,
    /// The working directory runs start in.
    pub cwd: PathBuf,
    /// The permission rules every run holds to (the settings'): a provider that cannot keep
    /// them refuses the task (`UNSUPPORTED_CAPABILITY`, `permission_rules`).
    pub permission_rules: subagent_core::PermissionRules,
}

impl ServerConfig {
    /// Defaults: 1 MiB bodies, 64 concurrent runs (retry after 1 s), depth cap 3, a 30 s drain,
    /// 10,000 tasks and 64 MiB of them remembered, a streamed task's events kept 60 s past its end, no token, no
    /// transcript deleted, a 10 s header timeout, and bounds on connections from the process's
    /// limit on open files as it is now ([`default_bounds`]: raise it first,
    /// [`raise_fd_limit`]).
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        let (max_connections, max_connections_per_peer) = default_bounds(fd_limit());
        Self {
            name: "subagents".to_owned(),
            description: "A subagents instance: delegate a task to one of its agents.".to_owned(),
            public_url: None,
            token: None,
            body_limit: 1 << 20,
            max_concurrent_runs: 64,
            retry_after: Duration::from_secs(1),
            max_depth: subagent_core::registry::DEFAULT_MAX_DEPTH,
            drain_deadline: Duration::from_secs(30),
            keep_tasks: 10_000,
            keep_task_bytes: 64 << 20,
            delete_transcripts_in: None,
            keep_events: Duration::from_secs(60),
            max_connections,
            max_connections_per_peer,
            header_timeout: Duration::from_secs(10),
            cwd: cwd.into(),
            permission_rules: subagent_core::PermissionRules::default(),
        }
    }
}

/// What the handlers share.
struct State {
    registry: Arc<Registry>,
    skills: Vec<Skill>,
    config: ServerConfig,
    card: serde_json::Value,
    tasks: tasks::Tasks,
    slots: Arc<Semaphore>,
    runs: TaskTracker,
    draining: AtomicBool,
}

/// A server, ready to [`serve`](Server::serve).
pub struct Server {
    registry: Arc<Registry>,
    skills: Vec<Skill>,
    config: ServerConfig,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("skills", &self.skills)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server starting runs through `registry`; `skills` are what the card offers (the first
    /// one serves messages that name none).
    pub fn new(registry: Arc<Registry>, skills: Vec<Skill>, config: ServerConfig) -> Self {
        Self {
            registry,
            skills,
            config,
        }
    }

    fn state(self, base: &str) -> Arc<State> {
        let card = card::card(&self.registry, &self.skills, &self.config, base);
        Arc::new(State {
            slots: Arc::new(Semaphore::new(self.config.max_concurrent_runs)),
            tasks: tasks::Tasks::new(
                self.config.keep_tasks,
                self.config.keep_task_bytes,
                self.config.delete_transcripts_in.clone(),
            ),
            registry: self.registry,
            skills: self.skills,
            card,
            config: self.config,
            runs: TaskTracker::new(),
            draining: AtomicBool::new(false),
        })
    }

    /// The router [`serve`](Server::serve) serves, for a caller that drives it in process
    /// (the fuzz targets in `fuzz/`): no listener and no draining shutdown. Not part of the
    /// crate's API.
    #[doc(hidden)]
    pub fn into_router(self, base: &str) -> Router {
        router(&self.state(base))
    }

    /// Serves on `listener` until `shutdown` resolves, then drains: stops accepting, refuses
    /// new messages, lets runs end for up to the drain deadline, cancels those still going and
    /// waits for them (and for open streams, which end with their tasks); then deletes the
    /// transcripts of the tasks it kept (with [`ServerConfig::delete_transcripts_in`]).
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<()> {
        let addr = listener.local_addr().map_err(|source| Error::Io {
            addr: "the listener".to_owned(),
            source,
        })?;
        let base = self
            .config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{addr}"));
        let state = self.state(&base);
        let router = router(&state);
        let stop_accepting = CancellationToken::new();
        let max = state.config.max_connections.max(1);
        let bounds = subagent_http::Bounds {
            max,
            per_peer: state.config.max_connections_per_peer.max(1),
            header_timeout: state.config.header_timeout,
            sockets: subagent_http::socket_bound(max, fd_limit()),
        };
        let serving = tokio::spawn(subagent_http::serve(
            listener,
            router,
            bounds,
            state.config.token.clone(),
            stop_accepting.clone(),
        ));
        tracing::info!(
            %addr,
            url = %base,
            max_connections = bounds.max,
            per_peer = bounds.per_peer,
            sockets = bounds.sockets,
            header_timeout_ms = bounds.header_timeout.as_millis(),
            "serving A2A"
        );
        shutdown.await;
        drain(&state, &stop_accepting).await;
        let served = serving.await;
        state.tasks.close().await;
        served.map_err(|join| Error::Io {
            addr: addr.to_string(),
            source: std::io::Error::other(join),
        })
    }
}

fn router(state: &Arc<State>) -> Router {
    Router::new()
        .route(AGENT_CARD_PATH, get(card::serve_card))
        .route(RPC_PATH, post(rpc::handle))
        .layer(DefaultBodyLimit::max(state.config.body_limit))
        .with_state(Arc::clone(state))
}

async fn drain(state: &State, stop_accepting: &CancellationToken) {
    state.draining.store(true, Ordering::SeqCst);
    stop_accepting.cancel();
    state.runs.close();
    let live = state.tasks.all().iter().filter(|t| !t.is_done()).count();
    tracing::info!(
        live,
        deadline_ms = state.config.drain_deadline.as_millis(),
        "draining"
    );
    if tokio::time::timeout(state.config.drain_deadline, state.runs.wait())
        .await
        .is_err()
    {
        let cancelled: Vec<_> = state
            .tasks
            .all()
            .into_iter()
            .filter(|t| !t.is_done())
            .collect();
        tracing::warn!(
            runs = cancelled.len(),
            "drain deadline passed: cancelling the runs still going"
        );
        for task in cancelled {
            task.cancel();
        }
        state.runs.wait().await;
    }
}
