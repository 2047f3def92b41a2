//! From a preset to something that runs: factories, the model, the configured secrets, the
//! registry, the catalog.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use subagent_catalog::{
    BuiltinOptions, Catalog, CatalogConfig, ProviderTable, Skills, Source, SourceDir, standard_dirs,
};
use subagent_core::registry::Registry;
use subagent_core::{Extensions, ProviderFactory};
use subagent_model::{Model, ModelConfig, ModelKind};
use subagent_preset::{ModelSection, Preset, ToolRow};
use subagent_runtime::{DefaultModel, Secrets, SessionStore, TaskDir, ToolResultCap};

use crate::Refusal;
use crate::args::{PresetArgs, ProjectArgs, SettingsFlags};
use crate::preset_choice::{PRESET_VAR, PresetChoice, PresetSource, choose_preset};
use crate::settings::{load_settings, settings_rules};
use subagent_runtime::SettingsRules;
use subagent_settings::EffectiveSettings;

/// The standard preset, compiled in for when `--preset` is not given.
const STANDARD_PRESET: &str = include_str!("../../../presets/standard.yaml");

/// Every provider kind this build knows: the built-in ones ([`crate::built_in_kinds`], the one
/// list of them), then `extra`, the kinds of an embedder's own binary (`crate::main_with`). A kind
/// given twice is refused: a preset's `kind:` must name one factory.
pub(crate) fn factories(
    extra: Vec<Arc<dyn ProviderFactory>>,
) -> Result<Vec<Arc<dyn ProviderFactory>>, Refusal> {
    let mut factories = crate::kinds::built_in_factories();
    let built_in = factories
        .iter()
        .map(|factory| factory.kind().to_owned())
        .collect::<Vec<_>>()
        .join(", ");
    for factory in extra {
        if factories.iter().any(|known| known.kind() == factory.kind()) {
            return Err(Refusal::invalid(format!(
                "two provider factories of kind \"{}\": each kind must be given once (built in: {built_in})",
                factory.kind()
            )));
        }
        factories.push(factory);
    }
    Ok(factories)
}

/// A variable of our environment, unless empty, through `subagent_session::env` (which keeps
/// the secrets `main` withdrew): every variable the CLI reads goes through here.
pub(crate) fn env(name: &str) -> Option<String> {
    subagent_session::env::var(name).filter(|value| !value.is_empty())
}

/// Loads the preset [`choose_preset`] picks for a command working in `start` (`--cwd` when
/// `by_flag`), and says on stderr which one it is and why.
pub(crate) fn load_preset(
    args: &PresetArgs,
    start: &Path,
    by_flag: bool,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<(Preset, PresetChoice), Refusal> {
    let choice = choose_preset(args, start, by_flag, &env);
    eprintln!("{}", choice.line());
    let preset = read_preset(&choice, factories)?;
    Ok((preset, choice))
}

/// Reads and checks the preset `choice` names, quietly.
pub(crate) fn read_preset(
    choice: &PresetChoice,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<Preset, Refusal> {
    let result = match &choice.path {
        Some(path) => Preset::load(path, factories, &env),
        None => Preset::parse(
            STANDARD_PRESET,
            Path::new("presets/standard.yaml (built in)"),
            factories,
            &env,
        ),
    };
    let mut preset = result.map_err(|error| {
        let mut refusal = Refusal::new(error.code(), crate::features::preset_error(&error));
        if choice.source == PresetSource::Variable {
            refusal.message = format!("{} (named by {PRESET_VAR})", refusal.message);
        }
        refusal
    })?;
    preset.add_default_rows(&host_kinds(factories));
    Ok(preset)
}

/// The kinds a host binary added to the built-in ones (`crate::main_with`): each gets a row
/// named after it in any preset without one of its kind ([`Preset::add_default_rows`]).
fn host_kinds(known: &[Arc<dyn ProviderFactory>]) -> Vec<Arc<dyn ProviderFactory>> {
    let built_in = factories(Vec::new()).unwrap_or_default();
    known
        .iter()
        .filter(|factory| !built_in.iter().any(|b| b.kind() == factory.kind()))
        .cloned()
        .collect()
}

/// The current directory.
pub(crate) fn current_dir() -> Result<PathBuf, Refusal> {
    std::env::current_dir()
        .map_err(|e| Refusal::invalid(format!("cannot read the current directory: {e}")))
}

/// The parent's working directory: `--cwd`, else the current directory, made absolute.
pub(crate) fn cwd(args: &ProjectArgs) -> Result<PathBuf, Refusal> {
    let dir = match &args.cwd {
        Some(dir) => dir.clone(),
        None => current_dir()?,
    };
    let resolved = std::fs::canonicalize(&dir)
        .map_err(|e| Refusal::invalid(format!("--cwd {}: {e}", dir.display())))?;
    if !resolved.is_dir() {
        return Err(Refusal::invalid(format!(
            "--cwd {}: not a directory",
            dir.display()
        )));
    }
    Ok(resolved)
}

/// The model in-process agents use, and how it was chosen.
pub(crate) struct ChosenModel {
    /// The model.
    pub model: Arc<dyn Model>,
    /// A line for the user when the choice needs saying (offline, switched, an endpoint from
    /// the environment).
    pub notice: Option<String>,
    /// The variable its key was read from, if it has one.
    pub key_env: Option<String>,
    /// Why the preset's model cannot run (its key is not set): an in-process agent must not
    /// start ([`ChosenModel::require`]); `model` is then the scripted one, for building rows
    /// that will not run.
    pub missing: Option<Refusal>,
    /// What `model` was built from (the scripted model's when offline or `missing`): its
    /// endpoint is `base_url`, else the kind's default.
    pub config: ModelConfig,
    /// Whether it is the preset's `model:` as written (not switched by a key, not replaced by
    /// `--offline` or renamed by `--model`): what the preset says of it (its `price`) holds.
    pub as_written: bool,
}

impl ChosenModel {
    /// `MISSING_API_KEY` when the preset's model needs a key that is not set: called before an
    /// in-process agent (the `run` parent, a spawn or fork child) starts, so that a run with a
    /// missing secret fails instead of answering from a script.
    pub(crate) fn require(&self) -> Result<(), Refusal> {
        match &self.missing {
            Some(refusal) => Err(Refusal::new(refusal.code, refusal.message.clone())),
            None => Ok(()),
        }
    }
}

/// What a command does with a key in the environment when its preset's model is scripted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeySwitch {
    /// `run` and `delegate`, typed by the user: a set `ANTHROPIC_API_KEY`/`OPENAI_API_KEY`
    /// moves a scripted preset onto the real model (announced; `--offline` keeps the script).
    Switch,
    /// The servers (`mcp`, `acp`, `serve`, `worker`), started by a client whose environment
    /// they inherit: the preset's model as written, whatever keys that environment holds.
    AsWritten,
}

fn section_to_config(section: &ModelSection) -> ModelConfig {
    let kind = section.kind;
    let mut config = ModelConfig::new(kind, section.name.clone());
    config.base_url.clone_from(&section.base_url);
    config.api_key_env.clone_from(&section.api_key_env);
    config.scenario.clone_from(&section.scenario);
    config.reasoning_effort = section.reasoning_effort;
    if let Some(timeouts) = &section.timeouts {
        if let Some(ms) = timeouts.connect_ms {
            config.timeouts.connect_ms = ms;
        }
        if let Some(ms) = timeouts.first_byte_ms {
            config.timeouts.first_byte_ms = ms;
        }
        if let Some(ms) = timeouts.idle_ms {
            config.timeouts.idle_ms = ms;
        }
        if let Some(ms) = timeouts.total_ms {
            config.timeouts.total_ms = ms;
        }
    }
    if let Some(bytes) = section.max_answer_bytes {
        config.max_answer_bytes = bytes;
    }
    if let Some(retry) = &section.retry {
        if let Some(n) = retry.max_retries {
            config.retry.max_retries = n;
        }
        if let Some(ms) = retry.backoff_base_ms {
            config.retry.backoff_base_ms = ms;
        }
        if let Some(ms) = retry.max_backoff_ms {
            config.retry.max_backoff_ms = ms;
        }
    }
    config
}

/// The default model names used when a scripted preset meets a real key.
const ANTHROPIC_DEFAULT: &str = "claude-sonnet-4-5";
const OPENAI_DEFAULT: &str = "gpt-5.5";

/// The variable of a `kind` model's default base URL, as Claude Code and OpenAI's SDKs read it.
pub(crate) fn base_url_env(kind: ModelKind) -> Option<&'static str> {
    match kind {
        ModelKind::Anthropic => Some("ANTHROPIC_BASE_URL"),
        ModelKind::OpenaiResponses | ModelKind::OpenaiChat => Some("OPENAI_BASE_URL"),
        _ => None,
    }
}

/// Chooses the model: the preset's, with `--model` replacing its name.
/// - The endpoint is the preset's `base_url`, else `ANTHROPIC_BASE_URL`/`OPENAI_BASE_URL`,
///   else the provider's own; one from the environment is announced.
/// - A scripted preset uses a real model when `ANTHROPIC_API_KEY` or `OPENAI_API_KEY` is set
///   and `switch` allows it (unless `offline`), announced.
/// - `offline` makes any model the scripted one, announced.
/// - A real model whose key is not set is `missing` ([`ChosenModel::require`]): never a silent
///   canned answer.
pub(crate) fn choose_model(
    section: Option<&ModelSection>,
    model_flag: Option<&str>,
    offline: bool,
    switch: KeySwitch,
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<ChosenModel, Refusal> {
    let mut config = match section {
        Some(section) => section_to_config(section),
        None => ModelConfig::new(ModelKind::Scripted, "scripted-offline"),
    };
    let mut notice = None;
    let mut as_written = section.is_some() && model_flag.is_none();
    if config.kind == ModelKind::Scripted && !offline && switch == KeySwitch::Switch {
        let switched = [
            (
                "ANTHROPIC_API_KEY",
                ModelKind::Anthropic,
                ANTHROPIC_DEFAULT,
                "Anthropic",
            ),
            (
                "OPENAI_API_KEY",
                ModelKind::OpenaiResponses,
                OPENAI_DEFAULT,
                "OpenAI",
            ),
        ]
        .into_iter()
        .find(|(key, ..)| get(key).is_some());
        if let Some((key, kind, name, vendor)) = switched {
            as_written = false;
            config = ModelConfig::new(kind, name);
            notice = Some(format!(
                "{key} is set: using the {vendor} model {} instead of the preset's scripted model (--offline keeps it)",
                model_flag.unwrap_or(name)
            ));
        }
    }
    if let Some(name) = model_flag {
        config.model = name.to_owned();
    }
    let mut endpoint_from = None;
    if config.base_url.is_none()
        && let Some(var) = base_url_env(config.kind)
        && let Some(url) = get(var)
    {
        config.base_url = Some(url);
        endpoint_from = Some(var);
    }
    let key_env = config.key_env();
    let needs_key = matches!(
        config.kind,
        ModelKind::Anthropic | ModelKind::OpenaiResponses
    );
    let mut missing = None;
    if config.kind != ModelKind::Scripted {
        let key_missing = needs_key && key_env.as_deref().and_then(get).is_none();
        if offline {
            as_written = false;
            notice = Some(
                "offline: --offline given, the scripted model answers (no network)".to_owned(),
            );
            config = ModelConfig::new(ModelKind::Scripted, "scripted-offline");
        } else if key_missing {
            as_written = false;
            missing = Some(Refusal::new(
                subagent_core::ErrorCode::MissingApiKey,
                format!(
                    "{} is not set: the preset's model ({} {}) needs it. Set it, or give --offline to use the scripted offline model (no network)",
                    key_env.as_deref().unwrap_or("the API key"),
                    config.kind.as_str(),
                    config.model
                ),
            ));
            config = ModelConfig::new(ModelKind::Scripted, "scripted-offline");
        } else if let Some(var) = endpoint_from {
            let at = format!(
                "model: {} {} at {} ({var})",
                config.kind.as_str(),
                config.model,
                config.base_url.as_deref().unwrap_or_default()
            );
            notice = Some(match notice {
                Some(switched) => format!("{switched}\n{at}"),
                None => at,
            });
        }
    }
    if config.kind == ModelKind::Scripted && notice.is_none() && missing.is_none() {
        notice = Some(format!(
            "offline: the scripted model answers from {} (no network)",
            config
                .scenario
                .as_deref()
                .map_or("the built-in offline demo scenario".to_owned(), |p| p
                    .display()
                    .to_string())
        ));
    }
    // The preset's cap on an answer holds whatever model answers (switched by a key, or the
    // scripted one).
    if let Some(bytes) = section.and_then(|section| section.max_answer_bytes) {
        config.max_answer_bytes = bytes;
    }
    let model = subagent_model::build_with_env(&config, get)
        .map_err(|e| Refusal::new(crate::RefusalCode::Model(e.code()), format!("model: {e}")))?;
    let key_env = match config.kind {
        ModelKind::Scripted => None,
        _ => key_env,
    };
    Ok(ChosenModel {
        model,
        notice,
        key_env,
        missing,
        config,
        as_written,
    })
}

/// The configured secrets, with their values from our environment: the key variable of the
/// preset's model (named, else its protocol's default), of the model chosen, and every key
/// variable a provider row names ([`ProviderFactory::secret_env`]: a spawn or fork row's own
/// model, a codex row's `model_provider.env_key`); and `also`, those the command's flags name
/// (`serve --token-env`).
pub(crate) fn secrets(
    preset: &Preset,
    factories: &[Arc<dyn ProviderFactory>],
    model: &ChosenModel,
    also: &[String],
) -> Secrets {
    let mut names = secret_names(preset, factories);
    names.extend(model.key_env.clone());
    names.extend(also.iter().cloned());
    Secrets::from_names(names, env)
}

/// The variables `preset` names as holding secrets: its model's key variable (named, else its
/// protocol's default) and every one a provider row names ([`ProviderFactory::secret_env`]).
pub(crate) fn secret_names(preset: &Preset, factories: &[Arc<dyn ProviderFactory>]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    names.extend(
        preset
            .model
            .as_ref()
            .and_then(|section| section_to_config(section).key_env()),
    );
    for row in &preset.providers {
        if let Some(factory) = factories.iter().find(|f| f.kind() == row.kind) {
            names.extend(factory.secret_env(&row.config));
        }
    }
    names
}

/// Extensions the in-process providers read: the default model; and the preset's cap on a tool
/// result, which an in-process agent started with them (a request's extensions: `delegate`,
/// `mcp`, `worker`) takes when its own configuration sets none. (The configured secrets go in
/// the build context's own field, [`build_context`].)
pub(crate) fn extensions(preset: &Preset, model: &ChosenModel) -> Extensions {
    let mut extensions = Extensions::new();
    extensions.insert(DefaultModel(Arc::clone(&model.model)));
    if let Some(cap) = tool_result_cap(preset) {
        extensions.insert(ToolResultCap(cap));
    }
    extensions
}

/// The build context of `preset`'s rows: its directory, the configured `secrets` (every
/// provider keeps them from its children and out of its output) and `extensions`.
pub(crate) fn build_context(
    preset: &Preset,
    secrets: &Secrets,
    extensions: Extensions,
) -> subagent_core::BuildContext {
    subagent_core::BuildContext {
        secrets: secrets.clone(),
        ..preset.build_context(extensions)
    }
}

/// The preset's `max_tool_result_bytes`, for the runtime.
pub(crate) fn tool_result_cap(preset: &Preset) -> Option<usize> {
    preset
        .max_tool_result_bytes
        .map(|cap| usize::try_from(cap).unwrap_or(usize::MAX))
}

/// The longest directory key kept in a sessions path (a file name has at most 255 bytes).
const MAX_PROJECT_KEY: usize = 200;

/// Where in-process runs of the project in `cwd` keep their transcripts (`delegate --resume`
/// continues them): [`session_dir`] with our environment. `None` when there is no state dir:
/// then nothing is written and nothing can be resumed.
pub(crate) fn session_store(cwd: &Path) -> Option<SessionStore> {
    session_dir(cwd, &env).map(SessionStore::new)
}

/// The sessions directory of the project in `cwd`, in the state dir beside the worktrees:
/// `$XDG_STATE_HOME/subagents/sessions/<key>` (when absolute), else
/// `$HOME/.local/state/subagents/sessions/<key>`; the key is the project's absolute path with
/// every character but ASCII letters and digits replaced by `-` (its last 200 at most), as
/// Claude Code keys its sessions by directory. `None` when neither variable is absolute.
pub(crate) fn session_dir(cwd: &Path, get: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    project_state_dir(cwd, get, "sessions")
}

/// Where the runs of the project in `cwd` keep their background tasks' output files:
/// `<state dir>/subagents/tasks/<key>`, keyed as [`session_dir`]; without a state dir, the
/// runtime's default (the temp dir).
pub(crate) fn task_dir(cwd: &Path) -> Option<TaskDir> {
    project_state_dir(cwd, &env, "tasks").map(TaskDir::new)
}

/// Where `run --teams` keeps the teams of the project in `cwd`:
/// `<state dir>/subagents/teams/<key>`, keyed as [`session_dir`].
pub(crate) fn team_dir(cwd: &Path) -> Option<PathBuf> {
    project_state_dir(cwd, &env, "teams")
}

pub(crate) use crate::recording::state_root;

/// `<state dir>/subagents/<what>/<project key>`: see [`session_dir`].
fn project_state_dir(
    cwd: &Path,
    get: &dyn Fn(&str) -> Option<String>,
    what: &str,
) -> Option<PathBuf> {
    let root = state_root(get)?;
    let key: String = cwd
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let key = &key[key.len().saturating_sub(MAX_PROJECT_KEY)..];
    Some(root.join(what).join(key))
}

/// A loaded preset made runnable.
pub(crate) struct Runnable {
    pub preset: Preset,
    pub registry: Arc<Registry>,
    pub tools: Vec<ToolRow>,
    pub catalog: Arc<Catalog>,
    pub model: ChosenModel,
    pub secrets: Secrets,
    pub cwd: PathBuf,
    /// Where in-process runs keep their transcripts ([`session_store`]).
    pub sessions: Option<SessionStore>,
    /// Where runs keep their background tasks' output files ([`task_dir`]).
    pub tasks: Option<TaskDir>,
    /// The settings the runs obey ([`load_settings`]).
    pub settings: Arc<EffectiveSettings>,
    /// Their permission rules, as every in-process run applies them.
    pub rules: Arc<SettingsRules>,
    /// Its in-process agents' MCP servers (started by `McpSetup::start`).
    pub mcp: crate::mcp_client::McpSetup,
    /// The skills of the user and the project (`crate::skills::load`).
    pub skills: Arc<Skills>,
}

/// Loads the preset, chooses the model (the scripted one when `offline`), builds the registry
/// and the catalog.
pub(crate) fn runnable(
    args: &ProjectArgs,
    runner: &RunnerFlags<'_>,
    model_flag: Option<&str>,
    switch: KeySwitch,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<Runnable, Refusal> {
    runnable_withholding(args, runner, model_flag, switch, factories, &[])
}

/// [`runnable`] for a command that runs no agent but lists what a run would have (`agents`,
/// `mcp-servers`): the scripted model, so that no key is looked for, and no settings flags.
pub(crate) fn listing(
    args: &ProjectArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<Runnable, Refusal> {
    let no_flags = SettingsFlags::default();
    let runner = RunnerFlags {
        offline: true,
        settings: &no_flags,
    };
    runnable(args, &runner, None, KeySwitch::AsWritten, factories)
}

/// What the commands that run agents say besides the project: `--offline` and the settings
/// flags.
pub(crate) struct RunnerFlags<'a> {
    /// `--offline`.
    pub offline: bool,
    /// `--allowedTools`, `--disallowedTools`, `--settings`.
    pub settings: &'a SettingsFlags,
}

impl<'a> From<&'a crate::args::RunnableArgs> for RunnerFlags<'a> {
    fn from(args: &'a crate::args::RunnableArgs) -> Self {
        Self {
            offline: args.offline,
            settings: &args.settings,
        }
    }
}

/// [`runnable`] with the variables `also` (a command's `--token-env`) among the configured
/// secrets: no child inherits them, and their values are redacted from output.
pub(crate) fn runnable_withholding(
    args: &ProjectArgs,
    runner: &RunnerFlags<'_>,
    model_flag: Option<&str>,
    switch: KeySwitch,
    factories: &[Arc<dyn ProviderFactory>],
    also: &[String],
) -> Result<Runnable, Refusal> {
    let offline = runner.offline;
    let cwd = cwd(args)?;
    let (preset, _) = load_preset(&args.preset, &cwd, args.cwd.is_some(), factories)?;
    let settings = load_settings(&cwd, runner.settings, preset.settings.as_ref(), &env)?;
    for warning in &settings.warnings {
        eprintln!("warning: {warning}");
    }
    let rules = Arc::new(settings_rules(&settings));
    let model = choose_model(preset.model.as_ref(), model_flag, offline, switch, &env)?;
    let secrets = secrets(&preset, factories, &model, also);
    let mcp = crate::mcp_client::McpSetup::configure(&preset, &settings, &cwd, &secrets)?;
    let sessions = session_store(&cwd);
    let mut provided = extensions(&preset, &model);
    provided.insert(mcp.host_tools.clone());
    provided.insert(mcp.handed());
    if let Some(store) = &sessions {
        provided.insert(store.clone());
    }
    let tasks = task_dir(&cwd);
    if let Some(tasks) = &tasks {
        provided.insert(tasks.clone());
    }
    provided.insert((*rules).clone());
    provided.insert(settings.clone());
    let skills = crate::skills::provide(&mut provided, env("HOME").as_deref(), &cwd);
    let context = build_context(&preset, &secrets, provided);
    let built = preset
        .build(factories, &context)
        .map_err(|error| Refusal::new(error.code(), error.to_string()))?;
    // A delegation asking for `isolation: worktree` gets a git worktree of its own.
    let mut registry = built.registry;
    registry.set_isolator(Arc::new(subagent_worktree::Worktrees::new()));
    // Every run it starts is in the user's record of runs (`subagent ps`).
    if let Some(recorder) = crate::recording::recorder() {
        registry.set_recorder(recorder);
    }
    let registry = Arc::new(registry);
    let catalog = Arc::new(load_catalog(&preset, &registry, factories, &cwd));
    tracing::debug!(
        preset = %preset.path.display(),
        providers = %registry.names().join(", "),
        agents = %catalog.names().join(", "),
        catalog_warnings = catalog.warnings().len(),
        "preset loaded"
    );
    Ok(Runnable {
        preset,
        registry,
        tools: built.tools,
        catalog,
        model,
        secrets,
        cwd,
        sessions,
        tasks,
        settings: Arc::new(settings),
        rules,
        mcp,
        skills,
    })
}

/// What `subagent providers` builds each row with, so that a row's table is the one it would
/// run with: the model a run would choose (`run` and `delegate` rules). A real model whose key
/// is missing is built all the same, the key stood in for by a placeholder that is never sent
/// (nothing runs), so the table does not depend on the key being set.
pub(crate) fn listing_context(
    preset: &Preset,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<subagent_core::BuildContext, Refusal> {
    let section = preset.model.as_ref();
    let mut model = choose_model(section, None, false, KeySwitch::Switch, &env)?;
    if model.missing.is_some() {
        let placeholder = |name: &str| {
            env(name).or_else(|| name.ends_with("_API_KEY").then(|| "placeholder".to_owned()))
        };
        model = choose_model(section, None, false, KeySwitch::AsWritten, &placeholder)?;
    }
    let secrets = secrets(preset, factories, &model, &[]);
    Ok(build_context(preset, &secrets, extensions(preset, &model)))
}

/// The catalog: built-ins, the user's and the project's directories, and the preset's.
pub(crate) fn load_catalog(
    preset: &Preset,
    registry: &Registry,
    factories: &[Arc<dyn ProviderFactory>],
    cwd: &Path,
) -> Catalog {
    let home = env("HOME").map(PathBuf::from);
    let default_provider = preset.tools.first().map(|row| row.provider.clone());
    let mut table = ProviderTable::new(default_provider);
    for provider in registry.providers() {
        table = table.with(provider.name(), provider.capabilities());
    }
    let table = crate::warnings::with_provider_tools(table, preset, factories);
    let config = CatalogConfig::new()
        .builtins(Some(BuiltinOptions::with_models(
            preset.builtin_models.clone(),
        )))
        .dirs(standard_dirs(home.as_deref(), Some(cwd)))
        // `memory:` directories: the user's under HOME, the project's under the working
        // directory, as Claude Code puts them.
        .memory(subagent_core::memory::MemoryRoots::new(
            home.as_deref(),
            Some(cwd),
        ))
        .dirs(
            preset
                .agents
                .iter()
                .map(|dir| SourceDir::new(Source::Flag, dir.clone())),
        )
        .providers(table);
    Catalog::load(config)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn dir(cwd: &str, vars: &[(&str, &str)]) -> Option<PathBuf> {
        let get = |name: &str| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        };
        session_dir(Path::new(cwd), &get)
    }

    #[test]
    fn sessions_live_in_the_state_dir_keyed_by_the_project() {
        let home = [("HOME", "/home/u")];
        assert_eq!(
            dir("/work/my project", &home),
            Some(PathBuf::from(
                "/home/u/.local/state/subagents/sessions/-work-my-project"
            ))
        );
        assert_eq!(
            dir("/w", &[("XDG_STATE_HOME", "/state"), ("HOME", "/home/u")]),
            Some(PathBuf::from("/state/subagents/sessions/-w"))
        );
        // A relative XDG_STATE_HOME is ignored, as the XDG spec says; no absolute one: none.
        assert_eq!(
            dir("/w", &[("XDG_STATE_HOME", "state"), ("HOME", "/home/u")]),
            Some(PathBuf::from("/home/u/.local/state/subagents/sessions/-w"))
        );
        assert_eq!(dir("/w", &[("HOME", "relative")]), None);
        assert_eq!(dir("/w", &[]), None);
        // A path longer than a file name keeps its last 200 characters.
        let deep = format!("/{}/end", "d".repeat(300));
        let key = dir(&deep, &home)
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(key, format!("{}-end", "d".repeat(196)));
    }
}
