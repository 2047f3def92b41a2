//! The `codex exec` command line for one request: argv (never a shell), working directory and the
//! environment additions. Pure: nothing here touches the process table.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::{CodexConfig, ModelProviderConfig};
use crate::error::{Error, Result};

/// What a run asks of the command line, taken from the request and the provider's config.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Invocation {
    /// The prompt text.
    pub prompt: String,
    /// The working directory (the parent's cwd).
    pub cwd: PathBuf,
    /// The model (request, else config).
    pub model: Option<String>,
    /// Developer instructions added to codex's own.
    pub persona: Option<String>,
    /// A file holding the output schema.
    pub output_schema_file: Option<PathBuf>,
    /// A thread to continue.
    pub resume_thread: Option<String>,
    /// The loosest permission mode the child may run in (tightens the sandbox).
    pub permission_ceiling: Option<subagent_core::PermissionMode>,
    /// Whether codex's own sub-agents are switched off ([`NO_SUB_AGENTS`]): set whenever the
    /// request carries a depth cap.
    pub no_sub_agents: bool,
    /// How hard the model reasons: `-c model_reasoning_effort=…` (OpenAI's spelling).
    pub effort: Option<subagent_core::Effort>,
}

/// What switches off codex's own sub-agents (0.171.0), all three observed against the real CLI:
/// `agents.enabled=false` removes the sub-agent tools even from a resumed thread (a thread keeps
/// the multi-agent version it was started with, and `--disable` is not applied to it), and
/// disabling the `multi_agent` (v1: `multi_agent_v1` namespace, or `spawn_agent` behind
/// `tool_search` for catalog models) and `multi_agent_v2` (`collaboration` namespace) features
/// makes a new thread start without them. A `spawn_agent` call then answers "unsupported call"
/// and starts nothing.
pub(crate) const NO_SUB_AGENTS: (&str, [&str; 2]) =
    ("agents.enabled=false", ["multi_agent", "multi_agent_v2"]);

/// Whether the child must not run codex's own sub-agents: whenever the request carries a depth
/// cap. The seam's registry does not see codex's sub-agents, so the only nesting depth it can hold
/// codex to is none (as for claude-code). Without `max_depth` nothing changes.
pub(crate) fn no_sub_agents(request: &subagent_core::StartRequest) -> bool {
    request.max_depth.is_some()
}

/// A command ready to hand to the process owner.
#[derive(Clone, Debug, PartialEq)]
pub struct CodexCommand {
    /// The program as configured (a bare name is looked up on `PATH` by the process owner).
    pub program: PathBuf,
    /// The arguments after the program.
    pub args: Vec<OsString>,
    /// The child's working directory.
    pub cwd: PathBuf,
    /// Variables set for the child, on top of the scrubbed environment.
    pub env: Vec<(String, String)>,
    /// Variables of our environment passed through the scrubber.
    pub pass_env: Vec<String>,
}

/// Encodes `text` as a TOML basic string. JSON string escapes (`\"`, `\\`, `\n`, `\uXXXX`) are
/// all valid TOML basic-string escapes, so serde_json's encoding is exact.
pub(crate) fn toml_string(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// Whether `id` can be written as a bare TOML key (codex's `model_providers.<id>`).
fn is_bare_key(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Checks what the command line cannot express, at build time.
pub(crate) fn validate(config: &CodexConfig) -> Result<()> {
    if config.binary.as_os_str().is_empty() {
        return Err(Error::config("`binary` is empty"));
    }
    if config.max_starting == Some(0) {
        return Err(Error::config(
            "`max_starting` must be at least 1 (or null for the CPU count)",
        ));
    }
    if let Some(provider) = &config.model_provider {
        if !is_bare_key(&provider.id) {
            return Err(Error::config(format!(
                "model_provider.id {:?} must be letters, digits, `_` or `-`",
                provider.id
            )));
        }
        if !(provider.base_url.starts_with("http://") || provider.base_url.starts_with("https://"))
        {
            return Err(Error::config(format!(
                "model_provider.base_url {:?} must start with http:// or https://",
                provider.base_url
            )));
        }
        if provider.env_key.is_empty() {
            return Err(Error::config("model_provider.env_key is empty"));
        }
    }
    for name in config.env.keys().chain(config.pass_env.iter()) {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(Error::config(format!(
                "environment variable name {name:?} is invalid"
            )));
        }
    }
    if config.config_overrides.iter().any(|o| !o.contains('=')) {
        return Err(Error::config(
            "every config_overrides entry must be `key=value`",
        ));
    }
    Ok(())
}

fn provider_table(provider: &ModelProviderConfig) -> String {
    format!(
        "{{name={},base_url={},wire_api=\"responses\",env_key={},request_max_retries={},stream_max_retries={}}}",
        toml_string(&provider.id),
        toml_string(&provider.base_url),
        toml_string(&provider.env_key),
        provider.request_max_retries,
        provider.stream_max_retries,
    )
}

/// Whether `dir` or one of its ancestors holds a git repository: a `.git` file (worktree) or a
/// `.git` directory with a `HEAD`. An empty `.git` directory does not count: codex's
/// workspace-write sandbox leaves one in `/tmp` as a bind-mount target.
pub fn inside_git_repo(dir: &Path) -> bool {
    dir.ancestors().any(|d| {
        let git = d.join(".git");
        git.is_file() || git.join("HEAD").is_file()
    })
}

/// Builds the command line for one run.
pub fn build(config: &CodexConfig, invocation: &Invocation) -> CodexCommand {
    let mut args: Vec<OsString> = vec!["exec".into()];
    let override_ = |args: &mut Vec<OsString>, value: String| {
        args.push("-c".into());
        args.push(value.into());
    };
    if let Some(provider) = &config.model_provider {
        override_(
            &mut args,
            format!("model_provider={}", toml_string(&provider.id)),
        );
        override_(
            &mut args,
            format!(
                "model_providers.{}={}",
                provider.id,
                provider_table(provider)
            ),
        );
    }
    if config.disable_analytics {
        override_(&mut args, "analytics.enabled=false".to_owned());
    }
    if let Some(persona) = &invocation.persona {
        override_(
            &mut args,
            format!("developer_instructions={}", toml_string(persona)),
        );
    }
    for extra in &config.config_overrides {
        override_(&mut args, extra.clone());
    }
    // After the configured overrides, so a configured `agents.enabled` cannot win.
    let (agents_off, features) = NO_SUB_AGENTS;
    if invocation.no_sub_agents {
        override_(&mut args, agents_off.to_owned());
    }
    if config.disable_plugins {
        args.extend(["--disable".into(), "plugins".into()]);
    }
    if invocation.no_sub_agents {
        for feature in features {
            args.extend(["--disable".into(), feature.into()]);
        }
    }
    args.push("--json".into());
    if !inside_git_repo(&invocation.cwd) {
        args.push("--skip-git-repo-check".into());
    }
    // Never looser than the parent: the request's permission ceiling can tighten the sandbox.
    let sandbox = config.sandbox.under(invocation.permission_ceiling);
    args.extend(["--sandbox".into(), sandbox.as_str().into()]);
    if let Some(model) = invocation.model.as_ref().or(config.model.as_ref()) {
        args.extend(["-m".into(), model.into()]);
    }
    if let Some(effort) = invocation.effort {
        args.push("-c".into());
        args.push(format!("model_reasoning_effort={}", toml_string(effort.openai())).into());
    }
    if config.ephemeral {
        args.push("--ephemeral".into());
    }
    if let Some(file) = &invocation.output_schema_file {
        args.push("--output-schema".into());
        args.push(file.clone().into_os_string());
    }
    if let Some(thread) = &invocation.resume_thread {
        args.push("resume".into());
        args.push(thread.into());
    }
    // `--` so a prompt starting with `-` is never read as a flag.
    args.push("--".into());
    args.push(invocation.prompt.clone().into());

    let mut env: Vec<(String, String)> = config
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(home) = &config.codex_home {
        env.retain(|(k, _)| k != "CODEX_HOME");
        env.push(("CODEX_HOME".into(), home.display().to_string()));
    }
    CodexCommand {
        program: config.binary.clone(),
        args,
        cwd: invocation.cwd.clone(),
        env,
        pass_env: config.pass_env.clone(),
    }
}

#[cfg(test)]
mod tests;
