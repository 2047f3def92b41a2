//! A server we start: MCP's JSON-RPC messages on its stdin and stdout, one a line, the process
//! under the process owner (`subagent-process`): its own process group, the host's guardian,
//! the model products' keys and the run's secrets withheld from its environment (what its `env`
//! names is added), its tree killed when the run ends, is cancelled, or the host dies. What else
//! it writes on stdout is logged and skipped; its stderr goes to the log.
//!
//! Deliberately not here: the MCP session over these lines (rmcp's, in [`crate::servers`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use subagent_core::CancellationToken;
use subagent_process::{Process, ProcessSpec, Scrub, Secrets, StdinMode, StopPolicy};
use tokio::io::AsyncWriteExt;
use tokio::sync::{Mutex, mpsc};

/// A started server process: the transport to speak MCP over, and what is known of its end.
pub(crate) struct Started {
    pub(crate) transport: LineTransport,
    /// Set once the server's stdout ended: what became of it.
    pub(crate) ended: Arc<std::sync::Mutex<Option<String>>>,
    /// Lines on its stdout that were not MCP messages.
    pub(crate) garbage: Arc<AtomicUsize>,
}

/// Starts `command` with `args` and `env` added in `cwd`, `secrets` withheld, no stdout line over
/// `max_line` bytes, stopped when `stop` is cancelled.
///
/// # Errors
/// What went wrong, in words, when the program cannot be started.
pub(crate) fn start(
    name: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    (cwd, secrets, max_line): (&Path, &Secrets, usize),
    stop: &CancellationToken,
) -> std::result::Result<Started, String> {
    let mut process = ProcessSpec::new(command, cwd)
        .args(args)
        .scrub(Scrub::ModelKeys)
        .withhold(secrets.clone())
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(StdinMode::Piped)
        .max_line_bytes(max_line)
        .stop_policy(StopPolicy::default().grace(Duration::from_secs(2)))
        .cancel(stop.clone())
        .spawn()
        .map_err(|e| format!("`{command}` could not be started: {e}"))?;
    let stdin = process.take_stdin().ok_or("no stdin pipe")?;
    let (sender, incoming) = mpsc::channel(64);
    let ended = Arc::new(std::sync::Mutex::new(None));
    let garbage = Arc::new(AtomicUsize::new(0));
    tokio::spawn(read(
        process,
        sender,
        Arc::clone(&ended),
        Arc::clone(&garbage),
        name.to_owned(),
    ));
    Ok(Started {
        transport: LineTransport {
            stdin: Arc::new(Mutex::new(stdin)),
            incoming,
        },
        ended,
        garbage,
    })
}

/// What the user should know of lines that were not MCP messages.
pub(crate) fn garbage_note(count: usize) -> String {
    if count == 0 {
        String::new()
    } else {
        format!("; it wrote {count} line(s) on stdout that are not MCP messages (see the log, -v)")
    }
}

/// What became of a server whose handshake failed, once its output ended (briefly waited for).
pub(crate) async fn wait_for_end(ended: &std::sync::Mutex<Option<String>>) -> String {
    for _ in 0..50 {
        if let Some(end) = ended.lock().ok().and_then(|e| e.clone()) {
            return format!(" ({end})");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    String::new()
}

/// Reads the server's stdout: each line that is an MCP message goes to the client; at the end,
/// what became of the server is recorded in `ended`.
async fn read(
    mut process: Process,
    sender: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    ended: Arc<std::sync::Mutex<Option<String>>>,
    garbage: Arc<AtomicUsize>,
    name: String,
) {
    let failure = loop {
        match process.next_line().await {
            Ok(Some(line)) if line.trim().is_empty() => {}
            Ok(Some(line)) => match serde_json::from_str(&line) {
                Ok(message) => {
                    if sender.send(message).await.is_err() {
                        process.stop();
                    }
                }
                Err(e) => {
                    garbage.fetch_add(1, Ordering::Relaxed);
                    let start: String = line.chars().take(200).collect();
                    tracing::warn!(target: "subagent::mcp", server = %name, "not an MCP message ({e}): {start}");
                }
            },
            Ok(None) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    drop(sender);
    let end = match process.wait().await {
        Ok(exit) => {
            let tail = exit.stderr_tail.trim();
            let status = match (exit.code(), exit.signal()) {
                (Some(code), _) => format!("it exited with status {code}"),
                (None, Some(signal)) => format!("it was killed by signal {signal}"),
                (None, None) => "it ended".to_owned(),
            };
            let mut end = failure.map_or(status.clone(), |f| format!("{f}; {status}"));
            if !tail.is_empty() {
                end.push_str(&format!(
                    "; its stderr ends: {}",
                    tail.lines().last().unwrap_or_default()
                ));
            }
            end
        }
        Err(e) => failure.unwrap_or_else(|| e.to_string()),
    };
    tracing::debug!(target: "subagent::mcp", server = %name, "{end}");
    if let Ok(mut slot) = ended.lock() {
        *slot = Some(end);
    }
}

/// MCP over a server's stdin and the lines [`read`] hands on.
pub(crate) struct LineTransport {
    stdin: Arc<Mutex<tokio::process::ChildStdin>>,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
}

impl Transport<RoleClient> for LineTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = std::result::Result<(), Self::Error>> + Send + 'static
    {
        let stdin = Arc::clone(&self.stdin);
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let mut stdin = stdin.lock().await;
            stdin.write_all(&line).await?;
            stdin.flush().await
        }
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> std::result::Result<(), Self::Error> {
        self.stdin.lock().await.shutdown().await
    }
}
