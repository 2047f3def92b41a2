//! The hook runner: Claude Code's command hooks, run for one event ([`HookRunner::run`]) and
//! their results folded into one [`HookVerdict`].
//!
//! Owns: choosing the configured commands for an event and tool (through
//! `subagent_settings::Hooks::for_event`: matchers, a command configured twice runs once),
//! building the event's JSON for their stdin, running them in parallel, each as `bash -c
//! <command>` through `subagent-process` (own process group, the model products' keys scrubbed
//! and the run's secrets withheld, `CLAUDE_PROJECT_DIR`/`SUBAGENT_PROJECT_DIR` set, stdout kept
//! up to [`MAX_STDOUT_BYTES`], stderr up to [`MAX_STDERR_BYTES`], the hook's timeout, the
//! caller's cancellation; whatever the hook started is killed when it exits), and reading what
//! each said: exit 0 (JSON on stdout, or plain text), exit 2 (blocks, stderr fed back), any other
//! end (a non-blocking error for the user).
//!
//! Deliberately not here: what a verdict does to the run (the tool loop's: skipping a call,
//! asking the user, adding context, stopping), where hooks are configured (`subagent-settings`),
//! and hook types other than `command` (the settings loader warns about and skips them).
//! docs/hooks.md is the user's description.

mod verdict;

use std::path::PathBuf;
use std::time::Duration;

use futures::future::join_all;
use serde_json::{Map, Value};
use subagent_process::{CancellationToken, ProcessSpec, Scrub, Secrets, StdinMode, StopPolicy};
use subagent_settings::{HookCommand, HookEvent, Hooks};
use tokio::io::AsyncWriteExt;

use verdict::{Context, Outcome};
pub use verdict::{HookDecision, HookVerdict};

/// The most of a hook's stdout kept (the rest is read and dropped, so the hook never blocks on
/// a full pipe): 1 MiB.
pub const MAX_STDOUT_BYTES: usize = 1024 * 1024;

/// The most of a hook's stderr kept: 64 KiB.
pub const MAX_STDERR_BYTES: usize = 64 * 1024;

/// How long a hook may take to exit after SIGTERM (at its timeout or on cancellation) before its
/// whole process group gets SIGKILL.
const GRACE: Duration = Duration::from_secs(1);

/// What every event's JSON carries and where hooks run.
#[derive(Clone, Debug)]
pub struct HookBase {
    /// The session's id (`session_id`).
    pub session_id: String,
    /// The session's transcript file (`transcript_path`; `null` when the run keeps none).
    pub transcript_path: Option<PathBuf>,
    /// The run's working directory (`cwd`), where hooks run.
    pub cwd: PathBuf,
    /// The project's directory (`CLAUDE_PROJECT_DIR` and `SUBAGENT_PROJECT_DIR` in a hook's
    /// environment).
    pub project_dir: PathBuf,
    /// The permission mode in Claude Code's name (`default`, `acceptEdits`, `plan`, `dontAsk`,
    /// `bypassPermissions`) (`permission_mode`).
    pub permission_mode: String,
    /// The run's configured secrets: withheld from a hook's environment.
    pub secrets: Secrets,
}

/// Runs the configured hooks of a run. Cheap to keep when none is configured:
/// [`HookRunner::run`] then returns at once without building anything.
#[derive(Clone, Debug)]
pub struct HookRunner {
    hooks: Hooks,
    base: HookBase,
    empty: bool,
    /// Variables every hook gets (the settings' `env`).
    env: Vec<(String, String)>,
}

impl HookRunner {
    /// A runner of `hooks` for a run described by `base`.
    pub fn new(hooks: Hooks, base: HookBase) -> Self {
        let empty = hooks.is_empty();
        Self {
            hooks,
            base,
            empty,
            env: Vec::new(),
        }
    }

    /// With variables every hook gets (the settings' `env`), set before our own.
    #[must_use]
    pub fn with_env(mut self, env: Vec<(String, String)>) -> Self {
        self.env = env;
        self
    }

    /// Whether no hook is configured (callers may skip building an event's input).
    pub fn is_empty(&self) -> bool {
        self.empty
    }

    /// The configuration it runs.
    pub fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    /// What it sends with every event.
    pub fn base(&self) -> &HookBase {
        &self.base
    }

    /// Runs every hook configured for `event` (and `tool`: our name or Claude Code's, matched
    /// as Claude Code's; for an event without a tool `None`, or what its matcher selects, like
    /// `SessionStart`'s source) in parallel, each with the event's JSON on stdin: the common
    /// keys (`session_id`, `transcript_path`, `cwd`, `permission_mode` — except on
    /// `SessionStart` and `SessionEnd`, as the pinned `claude` sends them — and
    /// `hook_event_name`) followed by `input`, the event's own keys (`tool_name` in Claude Code's
    /// name, `tool_input`, `tool_use_id`, `tool_response`, `prompt`, `source`, `reason`,
    /// `stop_hook_active`, `last_assistant_message`, …), which may also replace a common key.
    /// Returns when every hook has ended (or been killed at its timeout, or on `cancel`).
    pub async fn run(
        &self,
        event: &HookEvent,
        tool: Option<&str>,
        input: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> HookVerdict {
        if self.empty {
            return HookVerdict::default();
        }
        let commands = self.hooks.for_event(event, tool);
        if commands.is_empty() {
            return HookVerdict::default();
        }
        let stdin = self.stdin_json(event, input);
        let tool = tool.map(|t| subagent_settings::claude_tool_name(t).unwrap_or(t));
        let outcomes = join_all(
            commands
                .iter()
                .map(|hook| self.run_one(event, hook, &stdin, cancel)),
        )
        .await;
        let mut verdict = HookVerdict::default();
        for (hook, outcome) in commands.iter().zip(outcomes) {
            let context = Context {
                event,
                tool,
                command: &hook.command,
            };
            verdict.absorb(&context, outcome);
        }
        verdict
    }

    /// The event's JSON: the common keys, then `input`'s.
    fn stdin_json(&self, event: &HookEvent, input: Map<String, Value>) -> Vec<u8> {
        let base = &self.base;
        let mut json = Map::new();
        json.insert("session_id".into(), base.session_id.clone().into());
        json.insert(
            "transcript_path".into(),
            base.transcript_path
                .as_ref()
                .map_or(Value::Null, |p| p.to_string_lossy().into_owned().into()),
        );
        json.insert("cwd".into(), base.cwd.to_string_lossy().into_owned().into());
        if !matches!(event, HookEvent::SessionStart | HookEvent::SessionEnd) {
            json.insert(
                "permission_mode".into(),
                base.permission_mode.clone().into(),
            );
        }
        json.insert("hook_event_name".into(), event.name().into());
        json.extend(input);
        let mut bytes = Value::Object(json).to_string().into_bytes();
        bytes.push(b'\n');
        bytes
    }

    async fn run_one(
        &self,
        event: &HookEvent,
        hook: &HookCommand,
        stdin: &[u8],
        cancel: &CancellationToken,
    ) -> Outcome {
        let command = hook.command.as_str();
        let project = self.base.project_dir.as_os_str();
        // `bash -c <command>`: the configured command line IS the program, as Claude Code runs
        // it; passed as one argv element, unchanged.
        let spawned = ProcessSpec::new("bash", &self.base.cwd)
            .args(["-c", command])
            .scrub(Scrub::ModelKeys)
            .withhold(self.base.secrets.clone())
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("CLAUDE_PROJECT_DIR", project)
            .env("SUBAGENT_PROJECT_DIR", project)
            .stdin(StdinMode::Piped)
            .capture_output(MAX_STDOUT_BYTES)
            .overall_timeout(Some(hook.timeout))
            .stop_policy(StopPolicy::default().grace(GRACE))
            .cancel(cancel.clone())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                return Outcome::Failed(format!("{event} hook [{command}] cannot start: {e}"));
            }
        };
        // Written beside the wait, so a hook that reads nothing or reads late never blocks us
        // on a full pipe; whatever is left unwritten when the hook ends is dropped.
        let pipe = child.take_stdin();
        let writer = async move {
            if let Some(mut pipe) = pipe {
                // A hook may exit without reading its stdin: a broken pipe is no error.
                let _ = pipe.write_all(stdin).await;
            }
        };
        let wait = child.wait_with_output();
        tokio::pin!(writer, wait);
        let mut written = false;
        let captured = loop {
            tokio::select! {
                captured = &mut wait => break captured,
                () = &mut writer, if !written => written = true,
            }
        };
        let captured = match captured {
            Ok(captured) => captured,
            Err(e) => return Outcome::Failed(format!("{event} hook [{command}] failed: {e}")),
        };
        if let Some(cause) = captured.exit.stopped {
            let why = match cause {
                subagent_process::StopCause::OverallTimeout => {
                    format!("timed out after {}", seconds(hook.timeout))
                }
                other => other.describe().to_owned(),
            };
            return Outcome::Failed(format!("{event} hook [{command}] {why}; killed"));
        }
        let Some(code) = captured.exit.code() else {
            let signal = captured.exit.signal().unwrap_or_default();
            return Outcome::Failed(format!(
                "{event} hook [{command}] was ended by signal {signal}"
            ));
        };
        let mut stderr = captured.stderr;
        stderr.truncate(MAX_STDERR_BYTES);
        Outcome::Exited {
            code,
            stdout: String::from_utf8_lossy(&captured.stdout).into_owned(),
            stdout_truncated: captured.stdout_truncated,
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        }
    }
}

/// `1 s`, `1.5 s`.
fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}
