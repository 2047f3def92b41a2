//! The client side of `cargo xtask load` (issue 17, part 3): many A2A clients streaming runs
//! from one `subagent serve`, as a process of its own. `cargo xtask load` builds it, starts the
//! fake model server and the server, runs this, samples the server's memory and prints the
//! figures; run by hand it needs a server already listening:
//!
//! ```text
//! load --url http://127.0.0.1:PORT [--clients N] [--soak-secs S] [--pace-ms P] [--window-secs W]
//! ```
//!
//! The bearer token, if the server wants one, comes from `SUBAGENT_LOAD_TOKEN`. Each client has
//! its own HTTP connection and sends `SendStreamingMessage` (the JSON-RPC binding, SSE answer),
//! reading the stream to its end as any A2A client does; a run counts as done when its last
//! event puts the task in `TASK_STATE_COMPLETED`, and anything else (an HTTP error, a JSON-RPC
//! error, a broken or idle stream, another final state) is an error, counted by kind.
//!
//! Two phases, each bounded: **burst**, every client starts one run at the same moment (a
//! barrier), so all are in flight together; then **soak**, for S seconds each client starts a
//! run every P ms (staggered; a run that takes longer is followed at once) and stops by itself.
//! The latency measured is the *first event*: from sending the request to the first SSE event
//! of its answer (the task as submitted), what a caller waits before it knows its run started.
//!
//! With `--slowloris N` a third phase, **slowloris** (issue 26): N connections that each send
//! the start of a request head and then one more header line a second, never finishing it, as
//! a client without the token can, held open from `--slowloris-peers P` loopback addresses
//! (`127.0.0.2`, …); one the server closes (its header timeout, or pushed out past its bounds)
//! or refuses (`503`) is counted and opened again. Meanwhile `--slowloris-runs R` authenticated
//! streaming runs go through `--slowloris-clients C` of the clients, and the phase ends when
//! they have. This process raises its own soft limit on open files to the hard one first.
//!
//! Output: one JSON object a line on stdout — `{"phase":"burst",…}`, then one
//! `{"phase":"soak",…}` per window of W seconds, then `{"phase":"soak_total",…}`, then
//! `{"phase":"slowloris",…}`.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use subagent_a2a::rpc;
use subagent_a2a::sse::Decoder;
use subagent_a2a::types::{StreamResponse, TaskState};
use tokio::sync::{Barrier, mpsc, watch};

const USAGE: &str = "usage: load --url http://127.0.0.1:PORT [--clients N] [--soak-secs S] [--pace-ms P] [--window-secs W] [--slowloris N [--slowloris-peers P] [--slowloris-runs R] [--slowloris-clients C]]";

/// The prompt each run sends (the scenario `cargo xtask load` gives the model matches it).
const PROMPT: &str = "LOAD: say hello";

/// A stream that sends nothing, not even a keep-alive (every 15 s), for this long is broken.
const IDLE: Duration = Duration::from_secs(60);

struct Options {
    url: String,
    clients: usize,
    soak_secs: u64,
    pace_ms: u64,
    window_secs: u64,
    slowloris: usize,
    slowloris_peers: u8,
    slowloris_runs: usize,
    slowloris_clients: usize,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        url: String::new(),
        clients: 1_000,
        soak_secs: 600,
        pace_ms: 5_000,
        window_secs: 60,
        slowloris: 0,
        slowloris_peers: 1,
        slowloris_runs: 100,
        slowloris_clients: 10,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        let number = |text: String| -> Result<u64, String> {
            text.parse().map_err(|e| format!("{flag}: {e}\n{USAGE}"))
        };
        match flag.as_str() {
            "--url" => options.url = value()?,
            "--clients" => options.clients = usize::try_from(number(value()?)?).unwrap_or(1),
            "--soak-secs" => options.soak_secs = number(value()?)?,
            "--pace-ms" => options.pace_ms = number(value()?)?.max(1),
            "--window-secs" => options.window_secs = number(value()?)?.max(1),
            "--slowloris" => options.slowloris = usize::try_from(number(value()?)?).unwrap_or(0),
            "--slowloris-peers" => {
                options.slowloris_peers = u8::try_from(number(value()?)?.clamp(1, 250)).unwrap_or(1)
            }
            "--slowloris-runs" => {
                options.slowloris_runs = usize::try_from(number(value()?)?).unwrap_or(100)
            }
            "--slowloris-clients" => {
                options.slowloris_clients = usize::try_from(number(value()?)?.max(1)).unwrap_or(1)
            }
            _ => return Err(USAGE.to_owned()),
        }
    }
    if options.url.is_empty() || options.clients == 0 {
        return Err(USAGE.to_owned());
    }
    Ok(options)
}

/// One client: its own connection to the server.
#[derive(Clone)]
struct Client {
    http: reqwest::Client,
    endpoint: Arc<str>,
    token: Option<Arc<str>>,
}

/// A finished run: when its first event came and when it ended, from the request's start.
#[derive(Clone, Copy)]
struct Timing {
    first: Duration,
    total: Duration,
}

impl Client {
    fn new(endpoint: Arc<str>, token: Option<Arc<str>>) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .tcp_nodelay(true)
            .http1_only()
            .pool_max_idle_per_host(1)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
        Ok(Self {
            http,
            endpoint,
            token,
        })
    }

    /// One streaming run to its end.
    async fn run(&self, id: &str) -> Result<Timing, String> {
        let params = json!({
            "message": {
                "messageId": id,
                "role": "ROLE_USER",
                "parts": [{"text": PROMPT}],
            }
        });
        let body = rpc::Request::new(1, rpc::method::SEND_STREAMING_MESSAGE, params);
        let body = serde_json::to_vec(&body).map_err(|e| format!("request: {e}"))?;
        let mut request = self
            .http
            .post(&*self.endpoint)
            .header(rpc::VERSION_HEADER, rpc::PROTOCOL_VERSION)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(body);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let start = Instant::now();
        let mut response = request
            .send()
            .await
            .map_err(|e| format!("send: {}", kind_of(&e)))?;
        let status = response.status().as_u16();
        let streams = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if status != 200 || !streams {
            let text = response.text().await.unwrap_or_default();
            return Err(format!("HTTP {status}: {}", short(&text)));
        }
        let mut decoder = Decoder::new(8 << 20);
        let mut first = None;
        loop {
            let chunk = match tokio::time::timeout(IDLE, response.chunk()).await {
                Err(_) => return Err("stream idle for 60 s".to_owned()),
                Ok(Err(e)) => return Err(format!("stream broke: {}", kind_of(&e))),
                Ok(Ok(None)) => return Err("stream ended before the task did".to_owned()),
                Ok(Ok(Some(chunk))) => chunk,
            };
            let events = decoder
                .feed(&chunk)
                .map_err(|e| format!("stream unreadable: {e}"))?;
            for event in events {
                let at = start.elapsed();
                first.get_or_insert(at);
                let response: rpc::Response =
                    serde_json::from_str(&event.data).map_err(|e| format!("not JSON-RPC: {e}"))?;
                if let Some(error) = response.error {
                    return Err(format!(
                        "JSON-RPC error {}: {}",
                        error.code,
                        short(&error.message)
                    ));
                }
                let result = response.result.unwrap_or(Value::Null);
                let event: StreamResponse = serde_json::from_value(result)
                    .map_err(|e| format!("not a StreamResponse: {e}"))?;
                if event.ends_stream() {
                    return match event.state() {
                        Some(TaskState::Completed) => Ok(Timing {
                            first: first.unwrap_or(at),
                            total: at,
                        }),
                        other => Err(format!(
                            "ended {}",
                            other.map_or("with a message", TaskState::as_str)
                        )),
                    };
                }
            }
        }
    }
}

/// An error's kind without its per-request details (for counting).
fn kind_of(error: &reqwest::Error) -> String {
    let what = if error.is_connect() {
        "connect"
    } else if error.is_timeout() {
        "timeout"
    } else if error.is_body() || error.is_decode() {
        "body"
    } else {
        "request"
    };
    let mut source: Option<&dyn std::error::Error> = Some(error);
    let mut last = String::new();
    while let Some(inner) = source {
        last = inner.to_string();
        source = inner.source();
    }
    format!("{what}: {}", short(&last))
}

fn short(text: &str) -> String {
    text.trim().chars().take(120).collect()
}

/// Runs and errors of a stretch of time.
#[derive(Default)]
struct Tally {
    firsts: Vec<Duration>,
    totals: Vec<Duration>,
    errors: BTreeMap<String, u64>,
}

impl Tally {
    fn add(&mut self, result: Result<Timing, String>) {
        match result {
            Ok(timing) => {
                self.firsts.push(timing.first);
                self.totals.push(timing.total);
            }
            Err(kind) => *self.errors.entry(kind).or_default() += 1,
        }
    }

    fn merge(&mut self, other: &Tally) {
        self.firsts.extend_from_slice(&other.firsts);
        self.totals.extend_from_slice(&other.totals);
        for (kind, count) in &other.errors {
            *self.errors.entry(kind.clone()).or_default() += count;
        }
    }

    fn json(&mut self) -> Value {
        let errors: u64 = self.errors.values().sum();
        json!({
            "runs": self.firsts.len() as u64 + errors,
            "completed": self.firsts.len(),
            "errors": errors,
            "error_kinds": self.errors,
            "first_event_ms": quantiles(&mut self.firsts),
            "run_ms": quantiles(&mut self.totals),
        })
    }
}

/// p50, p99 and the largest, in milliseconds.
fn quantiles(values: &mut [Duration]) -> Value {
    if values.is_empty() {
        return Value::Null;
    }
    values.sort_unstable();
    let at = |q: f64| {
        let rank = (q * values.len() as f64).ceil() as usize;
        let d = values[rank.clamp(1, values.len()) - 1];
        (d.as_secs_f64() * 1e5).round() / 100.0
    };
    json!({"p50": at(0.50), "p99": at(0.99), "max": at(1.0)})
}

fn emit(mut line: Value, phase: &str, extra: Value) {
    if let (Value::Object(map), Value::Object(more)) = (&mut line, extra) {
        map.insert("phase".to_owned(), json!(phase));
        map.extend(more);
    }
    println!("{line}");
}

/// Every client starts one run at the same moment.
async fn burst(clients: &[Client]) -> Tally {
    let barrier = Arc::new(Barrier::new(clients.len()));
    let started = Instant::now();
    let tasks: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(i, client)| {
            let client = client.clone();
            let barrier = Arc::clone(&barrier);
            tokio::spawn(async move {
                barrier.wait().await;
                client.run(&format!("burst-{i}")).await
            })
        })
        .collect();
    let mut tally = Tally::default();
    for task in tasks {
        tally.add(
            task.await
                .unwrap_or_else(|e| Err(format!("client task: {e}"))),
        );
    }
    emit(
        tally.json(),
        "burst",
        json!({"clients": clients.len(), "wall_ms": started.elapsed().as_millis() as u64}),
    );
    tally
}

/// Each client starts a run every `pace` until `secs` have passed; a line per window.
async fn soak(clients: &[Client], options: &Options) -> Tally {
    let started = tokio::time::Instant::now();
    let deadline = started + Duration::from_secs(options.soak_secs);
    let pace = Duration::from_millis(options.pace_ms);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let count = clients.len() as u32;
    for (i, client) in clients.iter().enumerate() {
        let client = client.clone();
        let tx = tx.clone();
        let offset = pace.mul_f64(f64::from(i as u32) / f64::from(count));
        tokio::spawn(async move {
            let mut next = started + offset;
            let mut n = 0u64;
            loop {
                tokio::time::sleep_until(next).await;
                if tokio::time::Instant::now() >= deadline {
                    break;
                }
                let began = tokio::time::Instant::now();
                let result = client.run(&format!("soak-{i}-{n}")).await;
                n += 1;
                if tx.send(result).is_err() {
                    break;
                }
                next = (began + pace).max(tokio::time::Instant::now());
            }
        });
    }
    drop(tx);
    let window = Duration::from_secs(options.window_secs);
    let mut ticks = tokio::time::interval_at(started + window, window);
    let mut total = Tally::default();
    let mut current = Tally::default();
    let mut index = 0u64;
    loop {
        tokio::select! {
            result = rx.recv() => match result {
                Some(result) => current.add(result),
                None => break,
            },
            _ = ticks.tick() => {
                index += 1;
                total.merge(&current);
                emit(
                    current.json(), "soak", json!({"window": index, "at_s": started.elapsed().as_secs()}));
                current = Tally::default();
            }
        }
    }
    if !current.firsts.is_empty() || !current.errors.is_empty() {
        index += 1;
        total.merge(&current);
        emit(
            current.json(),
            "soak",
            json!({"window": index, "at_s": started.elapsed().as_secs()}),
        );
    }
    emit(
        total.json(),
        "soak_total",
        json!({"clients": clients.len(), "secs": started.elapsed().as_secs()}),
    );
    total
}

/// What the slowloris connections saw.
#[derive(Default)]
struct Flood {
    /// Open now (connected, not yet closed by the server).
    open: AtomicUsize,
    opened: AtomicU64,
    /// Closed by the server with nothing said (its header timeout, or pushed out).
    closed: AtomicU64,
    /// Answered `503` (past the server's bounds).
    refused: AtomicU64,
    /// Could not connect.
    connect_errors: AtomicU64,
}

/// One slowloris connection from `from`, opened again each time the server closes it, until
/// `stop`.
async fn loris(server: SocketAddr, from: IpAddr, flood: Arc<Flood>, stop: watch::Receiver<bool>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    while !*stop.borrow() {
        let socket = match tokio::net::TcpSocket::new_v4() {
            Ok(socket) => socket,
            Err(_) => {
                flood.connect_errors.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let connected = match socket.bind(SocketAddr::new(from, 0)) {
            Ok(()) => socket.connect(server).await,
            Err(error) => Err(error),
        };
        let Ok(mut stream) = connected else {
            flood.connect_errors.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        flood.opened.fetch_add(1, Ordering::Relaxed);
        flood.open.fetch_add(1, Ordering::Relaxed);
        let mut stop = stop.clone();
        let mut head: &[u8] = b"POST /a2a HTTP/1.1\r\nHost: load\r\n";
        let mut buf = [0u8; 512];
        let mut seen = Vec::new();
        let ended = loop {
            if stream.write_all(head).await.is_err() {
                break false;
            }
            head = b"X-Slow: 1\r\n";
            tokio::select! {
                read = stream.read(&mut buf) => match read {
                    Ok(0) | Err(_) => break false,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                },
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = stop.changed() => break true,
            }
        };
        flood.open.fetch_sub(1, Ordering::Relaxed);
        if ended {
            return;
        }
        if seen.starts_with(b"HTTP/1.1 503") {
            flood.refused.fetch_add(1, Ordering::Relaxed);
        } else {
            flood.closed.fetch_add(1, Ordering::Relaxed);
        }
        // A refused or closed connection comes back, as an attacker's would, not in a hot loop.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The slowloris connections held open while authenticated runs go through.
async fn slowloris(clients: &[Client], options: &Options) {
    let Ok(url) = reqwest::Url::parse(&options.url) else {
        eprintln!("load: --url {}: not a URL", options.url);
        return;
    };
    let server = url
        .socket_addrs(|| None)
        .ok()
        .and_then(|addrs| addrs.into_iter().next());
    let Some(server) = server else {
        eprintln!("load: --url {}: no address", options.url);
        return;
    };
    let flood = Arc::new(Flood::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    let started = Instant::now();
    let mut lorises = Vec::new();
    for i in 0..options.slowloris {
        let peer = 2 + (i % usize::from(options.slowloris_peers)) as u8;
        let from = IpAddr::from([127, 0, 0, peer]);
        lorises.push(tokio::spawn(loris(
            server,
            from,
            Arc::clone(&flood),
            stop_rx.clone(),
        )));
    }
    // All opened once before the runs start.
    while flood.opened.load(Ordering::Relaxed) + flood.connect_errors.load(Ordering::Relaxed)
        < options.slowloris as u64
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let opening_ms = started.elapsed().as_millis() as u64;
    let open_at_start = flood.open.load(Ordering::Relaxed);
    let runs_started = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let (tx, mut rx) = mpsc::unbounded_channel();
    for client in clients.iter().take(options.slowloris_clients) {
        let (client, next, tx) = (client.clone(), Arc::clone(&next), tx.clone());
        let total = options.slowloris_runs;
        tokio::spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= total {
                    break;
                }
                if tx
                    .send(client.run(&format!("slowloris-{n}")).await)
                    .is_err()
                {
                    break;
                }
            }
        });
    }
    drop(tx);
    let mut tally = Tally::default();
    let (mut least, mut most) = (usize::MAX, 0);
    let mut ticks = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            result = rx.recv() => match result {
                Some(result) => tally.add(result),
                None => break,
            },
            _ = ticks.tick() => {
                let open = flood.open.load(Ordering::Relaxed);
                least = least.min(open);
                most = most.max(open);
            }
        }
    }
    let runs_ms = runs_started.elapsed().as_millis() as u64;
    let open_at_end = flood.open.load(Ordering::Relaxed);
    let _ = stop_tx.send(true);
    for loris in lorises {
        let _ = loris.await;
    }
    emit(
        tally.json(),
        "slowloris",
        json!({
            "connections": options.slowloris,
            "peers": options.slowloris_peers,
            "opening_ms": opening_ms,
            "held": {"at_start": open_at_start, "least": least.min(open_at_start),
                "most": most.max(open_at_start), "at_end": open_at_end},
            "opened": flood.opened.load(Ordering::Relaxed),
            "closed_by_server": flood.closed.load(Ordering::Relaxed),
            "refused_503": flood.refused.load(Ordering::Relaxed),
            "connect_errors": flood.connect_errors.load(Ordering::Relaxed),
            "runs_ms": runs_ms,
        }),
    );
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("load: no tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let endpoint: Arc<str> = format!(
        "{}{}",
        options.url.trim_end_matches('/'),
        subagent_server::RPC_PATH
    )
    .into();
    let token = std::env::var("SUBAGENT_LOAD_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
        .map(Arc::<str>::from);
    let clients: Result<Vec<Client>, String> = (0..options.clients)
        .map(|_| Client::new(Arc::clone(&endpoint), token.clone()))
        .collect();
    let clients = match clients {
        Ok(clients) => clients,
        Err(message) => {
            eprintln!("load: {message}");
            return ExitCode::FAILURE;
        }
    };
    if options.slowloris > 0 {
        let files = subagent_server::raise_fd_limit();
        eprintln!("load: open files: {files}");
    }
    runtime.block_on(async {
        burst(&clients).await;
        if options.soak_secs > 0 {
            soak(&clients, &options).await;
        }
        if options.slowloris > 0 {
            slowloris(&clients, &options).await;
        }
    });
    ExitCode::SUCCESS
}
