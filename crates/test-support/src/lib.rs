//! `subagent-test-support`: fake model servers for tests, `xtask` and humans.
//!
//! Owns [`FakeServer`]: one HTTP server on 127.0.0.1 (port 0) that speaks Anthropic
//! `POST /v1/messages` (also `?beta=true`), OpenAI `POST /v1/responses` and
//! `POST /v1/chat/completions` with real SSE streaming, answers `HEAD /` and `GET /v1/models`,
//! and is scripted by scenario files (`subagent_model::scenario`: the same code the offline
//! scripted model uses). It records every request (secrets redacted), checks protocol
//! invariants, offers gates and keep-alives (Anthropic `ping`, SSE comments, empty events; a
//! while or without end) for timeout and cancel tests, and counts streams the client dropped.
//! The `fake-model` binary serves a scenario file until killed. [`cli_lines`] holds inputs for
//! testing parsers of product CLIs' JSON lines (recorded transcripts, proptest strategies).
//!
//! [`alone::in_own_process`] runs a test that reads process-wide state in a process of its own
//! under any harness.
//!
//! The fixtures tests share also live here, once each: [`git`] (a real repository),
//! [`procs`] (the one scan of `/proc`), [`cli::Subagent`] (the `subagent` binary with its
//! environment cleared, HOME, keys, a preset, args and stdin; it takes the binary's path, so
//! this crate never depends on the CLI), [`runs`] (a run driven to its end, the product
//! providers' shared end-to-end checks) and [`FakeServer::model`] (a model client on the fake
//! server), [`mcp_http::Client`] (an MCP streamable HTTP client that shows every status and
//! event, for `subagent mcp --listen`), [`browser::Browser`] (a real headless Chromium driven
//! over the DevTools protocol, for the tests of a web page); [`mod@bench`] holds the benchmarks' shared set-ups (a runtime, a registry of one
//! provider on the scripted model, the fake server on a runtime apart, an installed CLI).
//!
//! Deliberately not here: any model client (that is `subagent-model`), and assertions: the
//! server reports, tests decide.

#![deny(missing_docs)]

pub mod alone;
pub mod bench;
pub mod cli;
pub mod cli_lines;
pub mod cli_peer;
pub mod doubles;
mod encode;
pub mod git;
pub mod mcp_http;
pub mod normalize;
pub mod paired;
pub mod parent;
pub mod procs;
pub mod recorded;
pub mod runs;
pub mod sandbox;
pub mod scenarios;
mod server;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

pub use encode::{Chunk, Protocol, encode, error_body};
pub use server::{RecordedRequest, requests_for, tool_paths};
pub use subagent_model::scenario::{Gate, Scenarios};

use server::State;

/// A running fake model server; it stops when dropped.
pub struct FakeServer {
    addr: SocketAddr,
    state: Arc<State>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl std::fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl FakeServer {
    /// Starts a server on 127.0.0.1 with an OS-chosen port.
    pub async fn start(scenarios: Scenarios) -> std::io::Result<Self> {
        Self::start_on(scenarios, 0).await
    }

    /// Starts a server on 127.0.0.1:`port` (0 = any).
    pub async fn start_on(scenarios: Scenarios, port: u16) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = server::local_addr(&listener)?;
        let state = Arc::new(State::new(scenarios));
        let task = tokio::spawn(server::serve(listener, Arc::clone(&state)));
        Ok(Self { addr, state, task })
    }

    /// Starts a server from scenario YAML.
    pub async fn from_yaml(yaml: &str) -> std::io::Result<Self> {
        let scenarios = Scenarios::from_yaml(yaml).map_err(std::io::Error::other)?;
        Self::start(scenarios).await
    }

    /// Starts a server from a scenario file.
    pub async fn from_file(path: &Path) -> std::io::Result<Self> {
        let scenarios = Scenarios::load(path).map_err(std::io::Error::other)?;
        Self::start(scenarios).await
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT` (no trailing slash, no `/v1`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A model config on this server: model `fake-model` of `kind`, no retries (a test that
    /// wants a retry or another cap changes it before [`subagent_model::build_with_env`]).
    #[must_use]
    pub fn model_config(&self, kind: subagent_model::ModelKind) -> subagent_model::ModelConfig {
        let mut config =
            subagent_model::ModelConfig::new(kind, "fake-model").with_base_url(self.url());
        config.retry.max_retries = 0;
        config
    }

    /// A model client of `kind` on this server ([`Self::model_config`], key `test-key`).
    ///
    /// # Panics
    /// When the client cannot be built.
    #[must_use]
    pub fn model(&self, kind: subagent_model::ModelKind) -> Arc<dyn subagent_model::Model> {
        subagent_model::build_with_env(&self.model_config(kind), |_| Some("test-key".to_owned()))
            .unwrap_or_else(|e| panic!("a model client on the fake server: {e}"))
    }

    /// The gate of this name (created closed on first use).
    pub fn gate(&self, name: &str) -> Gate {
        self.state.gates.gate(name)
    }

    /// Keeps only the latest `keep` requests from now on (0: none), so a long load run does not
    /// hold every request it made; [`requests`](Self::requests) then sees only those, and
    /// [`wait_requests`](Self::wait_requests) still counts every request.
    pub fn keep_requests(&self, keep: usize) {
        self.state.keep_requests(keep);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests()
    }

    /// The model requests (POSTs to a model endpoint) so far.
    pub fn model_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && encode_protocol(&r.path).is_some())
            .collect()
    }

    /// Protocol invariant violations seen so far (empty is good).
    pub fn violations(&self) -> Vec<String> {
        self.state.violations()
    }

    /// How many streams the client dropped before their end (cancels, timeouts).
    pub fn dropped_streams(&self) -> usize {
        *self.state.dropped.borrow()
    }

    /// Waits until at least `n` streams were dropped by the client.
    pub async fn wait_dropped(&self, n: usize) {
        let mut rx = self.state.dropped.subscribe();
        let _ = rx.wait_for(|count| *count >= n).await;
    }

    /// Waits until at least `n` requests were received.
    pub async fn wait_requests(&self, n: usize) {
        let mut rx = self.state.requests_seen.subscribe();
        let _ = rx.wait_for(|count| *count >= n).await;
    }
}

fn encode_protocol(path: &str) -> Option<Protocol> {
    let bare = path.split('?').next().unwrap_or(path);
    let bare = bare.strip_prefix("/v1").unwrap_or(bare);
    match bare {
        "/messages" => Some(Protocol::Anthropic),
        "/responses" => Some(Protocol::Responses),
        "/chat/completions" => Some(Protocol::Chat),
        _ => None,
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
