//! The bash tool: one command per call, in its own process group, with a timeout and an output
//! cap. On timeout, cancellation, or when the command's shell exits, the whole group is killed
//! (SIGKILL), so no grandchild outlives the call.

use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use subagent_model::ToolSpec;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::{Tool, ToolContext, ToolKind, ToolOutput, opt_u64, str_arg};
use crate::{Error, Result};

/// Limits of the bash tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BashConfig {
    /// The timeout when the call gives none, in milliseconds.
    pub default_timeout_ms: u64,
    /// The longest timeout a call may ask for, in milliseconds.
    pub max_timeout_ms: u64,
    /// The most output bytes (stdout and stderr together) returned; the rest is dropped.
    pub output_limit: usize,
}

impl Default for BashConfig {
    fn default() -> Self {
        Self {
            default_timeout_ms: 120_000,
            max_timeout_ms: 600_000,
            output_limit: 30_000,
        }
    }
}

/// Runs a shell command with `bash -c`, in the working directory.
#[derive(Debug, Default)]
pub struct BashTool {
    config: BashConfig,
}

impl BashTool {
    /// A bash tool with these limits.
    pub fn new(config: BashConfig) -> Self {
        Self { config }
    }
}

/// Kills every process of the group led by `pid`. Errors (the group is already gone) are
/// ignored.
fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Reads a pipe to its end, keeping at most `limit` bytes; returns them and whether more came.
async fn read_capped(mut pipe: impl AsyncRead + Unpin, limit: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buffer = [0u8; 8192];
    let mut truncated = false;
    loop {
        match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = limit.saturating_sub(kept.len());
                if n > room {
                    truncated = true;
                }
                kept.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
    (kept, truncated)
}

enum Ending {
    Exited(std::process::ExitStatus),
    TimedOut,
    Cancelled,
}

#[async_trait]
impl Tool for BashTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "bash".into(),
            description: format!(
                "Run a shell command with bash in the working directory and return its exit code, stdout and stderr. The command runs in its own process group: when it finishes, times out (default {} ms, at most {} ms) or is cancelled, every process it started is killed. Output beyond {} bytes is cut.",
                self.config.default_timeout_ms,
                self.config.max_timeout_ms,
                self.config.output_limit
            ),
            input_schema: json!({"type": "object", "properties": {
                "command": {"type": "string", "description": "The command line."},
                "timeout_ms": {"type": "integer", "minimum": 1, "description": "Timeout in milliseconds."}
            }, "required": ["command"]}),
        }
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn permission_subject(&self, input: &Value) -> Option<String> {
        input
            .get("command")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput> {
        let command = str_arg(&input, "command")?;
        let timeout = opt_u64(&input, "timeout_ms")?
            .unwrap_or(self.config.default_timeout_ms)
            .min(self.config.max_timeout_ms);
        // The command is one argv element: bash parses it, we never interpolate it.
        let mut child = tokio::process::Command::new("bash")
            .arg("-c")
            .arg(command)
            .current_dir(context.env.roots.cwd())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| Error::Tool(format!("cannot start bash: {e}")))?;
        let pid = child.id();
        // If this future is dropped mid-command, the group must still die.
        let mut guard = GroupGuard(pid);
        let limit = self.config.output_limit;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let out_task = tokio::spawn(async move {
            match stdout {
                Some(pipe) => read_capped(pipe, limit).await,
                None => (Vec::new(), false),
            }
        });
        let err_task = tokio::spawn(async move {
            match stderr {
                Some(pipe) => read_capped(pipe, limit).await,
                None => (Vec::new(), false),
            }
        });
        let ending = tokio::select! {
            biased;
            () = context.cancel.cancelled() => Ending::Cancelled,
            () = tokio::time::sleep(Duration::from_millis(timeout)) => Ending::TimedOut,
            status = child.wait() => match status {
                Ok(status) => Ending::Exited(status),
                Err(e) => return Err(Error::Tool(format!("waiting for bash failed: {e}"))),
            },
        };
        // Whatever happened, nothing of the command's group survives the call.
        kill_group(pid);
        guard.0 = None;
        let _ = child.wait().await;
        let (stdout, out_cut) = out_task.await.unwrap_or_default();
        let (stderr, err_cut) = err_task.await.unwrap_or_default();
        let mut text = String::new();
        let stdout = String::from_utf8_lossy(&stdout);
        let stderr = String::from_utf8_lossy(&stderr);
        let (code, is_error) = match &ending {
            Ending::Exited(status) => match status.code() {
                Some(code) => (format!("exit code {code}"), code != 0),
                None => ("killed by a signal".to_owned(), true),
            },
            Ending::TimedOut => (format!("timed out after {timeout} ms; killed"), true),
            Ending::Cancelled => ("cancelled; killed".to_owned(), true),
        };
        text.push_str(&code);
        if !stdout.is_empty() {
            text.push_str("\n<stdout>\n");
            text.push_str(&stdout);
            text.push_str("\n</stdout>");
        }
        if !stderr.is_empty() {
            text.push_str("\n<stderr>\n");
            text.push_str(&stderr);
            text.push_str("\n</stderr>");
        }
        if out_cut || err_cut {
            text.push_str(&format!("\n(output cut at {limit} bytes per stream)"));
        }
        Ok(ToolOutput {
            content: text,
            is_error,
        })
    }
}

struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        kill_group(self.0);
    }
}
