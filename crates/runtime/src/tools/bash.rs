//! The bash tool: one command per call, run by `subagent-process` (the one owner of child
//! processes): its own process group, the parent-death signal, stdin `/dev/null`, stdout and
//! stderr captured up to the output cap. On timeout or cancellation the group gets SIGTERM, then
//! after a short grace the whole tree SIGKILL; when the command's shell exits, what is left of
//! its group is killed, so no grandchild outlives the call. (When the run drops the call on
//! cancellation, dropping the process kills the tree at once.)
//!
//! Environment: the user's own, minus the model products' variables
//! (`subagent_process::Scrub::ModelKeys`). The command runs in the user's project on the user's
//! behalf, so it sees what their shell would (`GITHUB_TOKEN`, `SSH_AUTH_SOCK`, a cloud profile),
//! but not the agent's model keys, which a model-written command could print or send away. Nor
//! does it see the run's configured secrets (`AgentConfig::secrets`: the preset's key variable
//! whatever its name, and any variable holding the same value); should its output show a
//! secret's value anyway (read from a file), the run redacts it from the result.

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use subagent_model::ToolSpec;
use subagent_process::{ProcessSpec, Scrub, StopPolicy};

use super::{Tool, ToolContext, ToolKind, ToolOutput, opt_bool, opt_str, opt_u64, str_arg};
use crate::report::command_report;
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

/// How long a command may take to exit after SIGTERM (on timeout or cancellation) before its
/// whole tree gets SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

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
                "timeout_ms": {"type": "integer", "minimum": 1, "description": "Timeout in milliseconds (not for a background command)."},
                "description": {"type": "string", "description": "What the command does, in a few words."},
                "run_in_background": {"type": "boolean", "description": "Return at once with a task id: the command runs on (without a timeout) as a background task you read with task_output and stop with task_stop; a <task-notification> tells you when it ends. It is stopped when your run ends."}
            }, "required": ["command"]}),
        }
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn cut_hint(&self) -> &str {
        "write the output to a file (`command > out.txt`) and read that in parts (read_file with offset and limit, or head, tail and grep)"
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
        let limit = self.config.output_limit;
        let background = opt_bool(&input, "run_in_background")?.unwrap_or(false);
        // A background command runs until it ends, is stopped, or the run ends (its token is a
        // child of the run's): no timeout.
        let cancel = match background {
            true => context.cancel.child_token(),
            false => context.cancel.clone(),
        };
        // `bash -c <command>`: the model's command string IS the program here, so this is the
        // one legitimate `-c`. It is passed as one argv element, unchanged; nothing else is ever
        // interpolated into it.
        let child = ProcessSpec::new("bash", context.env.roots.cwd())
            .args(["-c", command])
            .scrub(Scrub::ModelKeys)
            .withhold(context.env.secrets.clone())
            .envs(
                context
                    .env
                    .permissions
                    .settings_env()
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            )
            .capture_output(limit)
            .overall_timeout((!background).then(|| Duration::from_millis(timeout)))
            .stop_policy(StopPolicy::default().grace(GRACE))
            .cancel(cancel.clone())
            .spawn()
            .map_err(|e| Error::Tool(format!("cannot start bash: {e}")))?;
        if background {
            let description = match opt_str(&input, "description")? {
                Some(description) if !description.trim().is_empty() => description.to_owned(),
                _ => subagent_core::default_description(command),
            };
            let task = context.env.tasks.adopt_process(
                child,
                cancel,
                context.call_id.clone(),
                description,
                limit,
            );
            let file = task
                .output_file
                .map(|path| format!(" Its output goes to {}.", path.display()))
                .unwrap_or_default();
            return Ok(ToolOutput::ok(format!(
                "Started background command {}.{file} Read it with task_output, stop it with task_stop; a <task-notification> tells you when it ends.",
                task.id
            )));
        }
        let output = child
            .wait_with_output()
            .await
            .map_err(|e| Error::Tool(format!("waiting for bash failed: {e}")))?;
        let (text, is_error) = command_report(&output, Some(timeout), limit, "");
        Ok(ToolOutput {
            content: text,
            is_error,
            attached: Vec::new(),
        })
    }
}
