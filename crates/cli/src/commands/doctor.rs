//! `subagent doctor`: what the preset's enabled rows need, and whether it is there.
//!
//! One check per line, each `ok`, `warn` (it runs, but not as tested) or `missing` (it cannot
//! run), with what to do: the preset's model (its key, as every command chooses it, and its
//! endpoint reachable), each enabled row (a product CLI found as the row would find it — its
//! `binary`/`command`, else `PATH` — and its version against the one its crate is tested with;
//! a row's own model, keys and endpoints; an a2a agent's card URL and a nats server reachable)
//! and the state dir writable. Exit 0 when nothing is `missing`, else 1.
//!
//! Deliberately not here: building the registry or starting an agent. Nothing runs but a product
//! CLI's `--version` when its npm package does not say its version, and nothing is sent to an
//! endpoint: "reachable" is a TCP connect with a short timeout.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::{BoxFuture, join_all, ready};
use serde_json::{Value, json};
use subagent_core::{
    BuildContext, Endpoint, Placement, ProviderFactory, Requirements, TestedVersion,
};
use subagent_model::{ModelConfig, ModelKind};
use subagent_preset::{Preset, ProviderRow};
use subagent_process::ProcessSpec;

use crate::args::DoctorArgs;
use crate::setup::{self, KeySwitch};
use crate::{EXIT_COMPLETED, EXIT_NOT_COMPLETED, Refusal};
use probe::{asked_version, package_version, reach};

mod probe;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Ok,
    Warn,
    Missing,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Warn => "warn",
            Self::Missing => "missing",
        }
    }
}

/// One line of the report.
#[derive(Debug)]
struct Check {
    status: Status,
    /// What is checked: `model`, `model endpoint`, `state dir`, a row's name.
    subject: String,
    /// What was found.
    detail: String,
    /// What to do about it.
    fix: Option<String>,
    /// A check of the preset's model (its key, its endpoint).
    of_preset_model: bool,
    /// An in-process row on the preset's model: it runs only if that model does.
    on_preset_model: bool,
}

impl Check {
    fn ok(subject: &str, detail: impl Into<String>) -> Self {
        Self {
            status: Status::Ok,
            subject: subject.to_owned(),
            detail: detail.into(),
            fix: None,
            of_preset_model: false,
            on_preset_model: false,
        }
    }

    fn warn(subject: &str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            status: Status::Warn,
            subject: subject.to_owned(),
            detail: detail.into(),
            fix: Some(fix.into()),
            of_preset_model: false,
            on_preset_model: false,
        }
    }

    fn missing(subject: &str, detail: impl Into<String>, fix: Option<String>) -> Self {
        Self {
            status: Status::Missing,
            subject: subject.to_owned(),
            detail: detail.into(),
            fix,
            of_preset_model: false,
            on_preset_model: false,
        }
    }

    fn line(&self) -> String {
        let mut line = format!(
            "{:<8} {}: {}",
            self.status.as_str(),
            self.subject,
            self.detail
        );
        if let Some(fix) = &self.fix {
            line.push_str(" — ");
            line.push_str(fix);
        }
        line
    }

    fn json(&self) -> Value {
        let mut value = json!({
            "status": self.status.as_str(),
            "subject": self.subject,
            "detail": self.detail,
        });
        if let (Some(fix), Some(object)) = (&self.fix, value.as_object_mut()) {
            object.insert("fix".into(), json!(fix));
        }
        value
    }
}

pub(super) async fn doctor(
    args: &DoctorArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    let cwd = setup::cwd(&args.preset)?;
    let (preset, _) = setup::load_preset(
        &args.preset.preset,
        &cwd,
        args.preset.cwd.is_some(),
        factories,
    )?;
    let model = model_checks(&preset)
        .map(|mut checks| {
            for check in &mut checks {
                check.of_preset_model = true;
            }
            checks
        })
        .boxed();
    let mut pending = vec![model];
    for row in preset.providers.iter().filter(|row| !row.disabled) {
        pending.push(row_checks(row, &preset, factories, &cwd));
    }
    let mut checks: Vec<Check> = join_all(pending).await.into_iter().flatten().collect();
    checks.push(state_check(setup::state_root(&setup::env)));
    let model_runs = !checks
        .iter()
        .any(|c| c.status == Status::Missing && c.of_preset_model);
    for check in checks
        .iter_mut()
        .filter(|c| c.on_preset_model && !model_runs)
    {
        check.status = Status::Missing;
        check.detail.push_str(", which cannot run (see model)");
    }
    let mut blocked: Vec<&str> = Vec::new();
    for check in checks.iter().filter(|c| c.status == Status::Missing) {
        if !blocked.contains(&check.subject.as_str()) {
            blocked.push(&check.subject);
        }
    }
    let warnings = checks.iter().filter(|c| c.status == Status::Warn).count();
    if args.json {
        let value = json!({
            "preset": preset.path.display().to_string(),
            "ok": blocked.is_empty(),
            "missing": blocked,
            "checks": checks.iter().map(Check::json).collect::<Vec<_>>(),
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        for check in &checks {
            outln!("{}", check.line());
        }
        outln!("{}", summary(&blocked, warnings));
    }
    Ok(ExitCode::from(if blocked.is_empty() {
        EXIT_COMPLETED
    } else {
        EXIT_NOT_COMPLETED
    }))
}

/// The last line: whether everything enabled can run, else what cannot.
fn summary(blocked: &[&str], warnings: usize) -> String {
    let warned = match warnings {
        0 => String::new(),
        1 => " (1 warning)".to_owned(),
        n => format!(" ({n} warnings)"),
    };
    if blocked.is_empty() {
        format!("everything the preset enables can run{warned}")
    } else {
        format!(
            "cannot run: {}{warned}; fix the missing lines, then run `subagent doctor` again",
            blocked.join(", ")
        )
    }
}

/// The preset's model as `run` and `delegate` choose it: its key, then its endpoint.
fn model_checks(preset: &Preset) -> BoxFuture<'static, Vec<Check>> {
    let subject = "model";
    let chosen = match setup::choose_model(
        preset.model.as_ref(),
        None,
        false,
        KeySwitch::Switch,
        &setup::env,
    ) {
        Ok(chosen) => chosen,
        Err(refusal) => return ready(vec![Check::missing(subject, refusal.message, None)]).boxed(),
    };
    if let Some(refusal) = chosen.missing {
        return ready(vec![Check::missing(subject, refusal.message, None)]).boxed();
    }
    let config = chosen.config;
    if config.kind == ModelKind::Scripted {
        let from = config.scenario.as_ref().map_or_else(
            || "the built-in offline demo scenario".to_owned(),
            |path| path.display().to_string(),
        );
        return ready(vec![Check::ok(
            subject,
            format!(
                "scripted {}: answers from {from} (no key, no network)",
                config.model
            ),
        )])
        .boxed();
    }
    let preset_kind = preset.model.as_ref().map(|section| section.kind);
    let switched = preset_kind.is_none_or(|kind| kind == ModelKind::Scripted);
    let mut detail = format!(
        "{} {}, {}",
        config.kind.as_str(),
        config.model,
        key_words(&config)
    );
    if switched {
        detail.push_str(
            " (a key is set: used instead of the preset's scripted model; --offline keeps that)",
        );
    }
    let origin = match (
        preset
            .model
            .as_ref()
            .and_then(|section| section.base_url.as_ref()),
        setup::base_url_env(config.kind),
    ) {
        (Some(_), _) => "the preset's `model.base_url`".to_owned(),
        (None, Some(var)) if config.base_url.is_some() => var.to_owned(),
        (None, Some(var)) => format!("the network, or set `model.base_url` in the preset or {var}"),
        (None, None) => "the network, or set `model.base_url` in the preset".to_owned(),
    };
    let url = endpoint_of(&config);
    let key = Check::ok(subject, detail);
    async move { vec![key, endpoint("model endpoint", &url, &origin).await] }.boxed()
}

/// "key in VAR", or what a model that needs none says.
fn key_words(config: &ModelConfig) -> String {
    match config.key_env() {
        Some(var) if setup::env(&var).is_some() => format!("key in {var}"),
        Some(var) => format!(
            "no key ({var} is not set; {} needs none)",
            config.kind.as_str()
        ),
        None => "no key".to_owned(),
    }
}

/// Where a real model is reached: its `base_url`, else its kind's default.
fn endpoint_of(config: &ModelConfig) -> String {
    config
        .base_url
        .clone()
        .unwrap_or_else(|| config.kind.default_base_url().to_owned())
}

/// An endpoint reachable (a TCP connect), or what to fix: `origin` says where the URL comes from.
async fn endpoint(subject: &str, url: &str, origin: &str) -> Check {
    match reach(url).await {
        Ok(()) => Check::ok(subject, format!("{url} reachable")),
        Err(why) => Check::missing(
            subject,
            format!("{url} unreachable: {why}"),
            Some(format!("start the server, or check {origin}")),
        ),
    }
}

/// One of `endpoint`'s URLs reachable (the first that is, else the first's failure).
async fn any_endpoint(subject: &str, needed: &Endpoint) -> Check {
    let mut found = Vec::new();
    for url in &needed.urls {
        let check = endpoint(subject, url, &needed.origin).await;
        let ok = check.status == Status::Ok;
        found.push(check);
        if ok {
            break;
        }
    }
    match found.iter().position(|c| c.status == Status::Ok) {
        Some(at) => found.swap_remove(at),
        None if found.is_empty() => Check::missing(subject, "no URL", None),
        None => found.swap_remove(0),
    }
}

/// What an enabled row needs.
fn row_checks(
    row: &ProviderRow,
    preset: &Preset,
    factories: &[Arc<dyn ProviderFactory>],
    cwd: &Path,
) -> BoxFuture<'static, Vec<Check>> {
    let name = row.name.clone();
    let context = BuildContext {
        base_dir: preset.base_dir.clone(),
        ..BuildContext::default()
    };
    let row_env: BTreeMap<String, String> = row
        .config
        .get("env")
        .and_then(|env| serde_json::from_value(env.clone()).ok())
        .unwrap_or_default();
    // The keys the row's config names (an in-process row's own model is checked below).
    let mut checks: Vec<Check> = Vec::new();
    let placement = crate::kinds::placement(row, factories);
    if !placement.in_process()
        && let Some(factory) = factories.iter().find(|f| f.kind() == row.kind)
    {
        for var in factory.secret_env(&row.config) {
            checks.push(key_check(&name, &var, &row_env));
        }
    }
    let invalid = |error: subagent_core::Error| {
        ready(vec![Check::missing(&row.name, error.to_string(), None)]).boxed()
    };
    let cwd = cwd.to_path_buf();
    if let Placement::InProcess { model } = placement {
        return in_process_checks(name, model, checks);
    }
    let Some(factory) = factories.iter().find(|f| f.kind() == row.kind) else {
        return ready(checks).boxed();
    };
    let needs = match factory.requirements(&row.name, &row.config, &context) {
        Ok(needs) => needs,
        Err(error) => return invalid(error),
    };
    if needs == Requirements::default() {
        checks.push(Check::ok(
            &name,
            format!("kind {}: nothing known to check", row.kind),
        ));
        return ready(checks).boxed();
    }
    let cli = needs.program.map(|program| Cli {
        program: program.path,
        env: row_env,
        cwd,
        tested: program.tested,
        hint: program.install_hint,
    });
    let mut endpoints = needs.endpoints.into_iter();
    // What the row runs (its program, else the agent it reaches) comes first, then its keys,
    // then the servers it reaches besides.
    let first = if cli.is_none() {
        endpoints.next()
    } else {
        None
    };
    let rest: Vec<Endpoint> = endpoints.collect();
    async move {
        if let Some(cli) = cli {
            checks.insert(0, cli.check(&name).await);
        }
        if let Some(first) = first {
            checks.insert(0, any_endpoint(&name, &first).await);
        }
        for endpoint in &rest {
            checks.push(any_endpoint(&name, endpoint).await);
        }
        checks
    }
    .boxed()
}

/// What an in-process row needs: the model it runs on (`model`, its own as the row's config
/// names it, else the preset's, which [`model_checks`] checks once).
fn in_process_checks(
    name: String,
    model: Option<serde_json::Value>,
    mut checks: Vec<Check>,
) -> BoxFuture<'static, Vec<Check>> {
    let own: Option<ModelConfig> = model.and_then(|model| serde_json::from_value(model).ok());
    let Some(model) = own else {
        let mut check = Check::ok(&name, "in-process, on the preset's model");
        check.on_preset_model = true;
        checks.push(check);
        return ready(checks).boxed();
    };
    if model.kind == ModelKind::Scripted {
        checks.push(Check::ok(
            &name,
            format!("in-process, on its own scripted model {}", model.model),
        ));
        return ready(checks).boxed();
    }
    let needs_key = matches!(
        model.kind,
        ModelKind::Anthropic | ModelKind::OpenaiResponses
    );
    match model.key_env() {
        Some(var) if needs_key && setup::env(&var).is_none() => checks.push(Check::missing(
            &name,
            format!(
                "{var} is not set: the row's model ({} {}) needs it",
                model.kind.as_str(),
                model.model
            ),
            Some(format!("set {var}")),
        )),
        _ => checks.push(Check::ok(
            &name,
            format!(
                "in-process, on its own model {} {}, {}",
                model.kind.as_str(),
                model.model,
                key_words(&model)
            ),
        )),
    }
    let url = endpoint_of(&model);
    async move {
        let origin = "the row's `model.base_url`";
        checks.push(endpoint(&name, &url, origin).await);
        checks
    }
    .boxed()
}

/// A variable a row reads a secret from: set by the row's own `env`, or in ours.
fn key_check(subject: &str, var: &str, row_env: &BTreeMap<String, String>) -> Check {
    if row_env.contains_key(var) {
        Check::ok(subject, format!("{var} set by the row's `env`"))
    } else if setup::env(var).is_some() {
        Check::ok(subject, format!("{var} is set"))
    } else {
        Check::missing(
            subject,
            format!("{var} is not set (the row's config names it)"),
            Some(format!("set {var}")),
        )
    }
}

/// A product CLI as a row runs it.
struct Cli {
    /// The row's `binary`/`command`, resolved against the preset.
    program: PathBuf,
    /// The row's `env` (a `PATH` there is where the row finds the program).
    env: BTreeMap<String, String>,
    cwd: PathBuf,
    tested: Option<TestedVersion>,
    hint: String,
}

impl Cli {
    async fn check(self, subject: &str) -> Check {
        let spec = ProcessSpec::new(&self.program, &self.cwd).envs(self.env.clone());
        let path = match spec.resolve_program() {
            Ok(path) => path,
            Err(subagent_process::Error::NotFound { program, searched }) => {
                let detail = if searched.is_empty() {
                    format!("{} not found", program.display())
                } else {
                    format!("`{}` not found on PATH", program.display())
                };
                return Check::missing(subject, detail, Some(self.hint));
            }
            Err(error) => return Check::missing(subject, error.to_string(), None),
        };
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let Some(tested) = &self.tested else {
            return Check::ok(subject, format!("{name} at {}", path.display()));
        };
        let version = match package_version(&path, &tested.package) {
            Some(version) => Some(version),
            None if tested.asks_version => asked_version(spec).await,
            None => None,
        };
        let fix = format!(
            "`npm install -g {}@{}` installs the tested version",
            tested.package, tested.version
        );
        match version {
            Some(version) if version == tested.version => Check::ok(
                subject,
                format!(
                    "{name} {version} at {} (the tested version)",
                    path.display()
                ),
            ),
            Some(version) => Check::warn(
                subject,
                format!(
                    "{name} {version} at {}, tested with {}",
                    path.display(),
                    tested.version
                ),
                fix,
            ),
            None => Check::warn(
                subject,
                format!(
                    "{name} at {}: version unknown, tested with {}",
                    path.display(),
                    tested.version
                ),
                fix,
            ),
        }
    }
}

/// The state dir writable (a directory made and removed in it, or in the nearest existing
/// directory above it when it does not exist yet).
fn state_check(root: Option<PathBuf>) -> Check {
    let subject = "state dir";
    let Some(root) = root else {
        return Check::missing(
            subject,
            "none: neither XDG_STATE_HOME nor HOME is an absolute path, so no session, task output or worktree can be kept",
            Some("set HOME (or XDG_STATE_HOME) to an absolute path".to_owned()),
        );
    };
    let fix = Some(format!(
        "make {} writable by you, or set XDG_STATE_HOME to a directory you can write",
        root.display()
    ));
    let Some(existing) = root.ancestors().find(|dir| dir.exists()) else {
        return Check::missing(subject, format!("{}: no directory", root.display()), fix);
    };
    if !existing.is_dir() {
        return Check::missing(
            subject,
            format!(
                "{}: {} is not a directory",
                root.display(),
                existing.display()
            ),
            fix,
        );
    }
    let probe = existing.join(format!(".subagent-doctor-{}", std::process::id()));
    match std::fs::create_dir(&probe) {
        Ok(()) => {
            let _ = std::fs::remove_dir(&probe);
            if existing == root {
                Check::ok(subject, format!("{} writable", root.display()))
            } else {
                Check::ok(
                    subject,
                    format!(
                        "{} (made when first needed; {} is writable)",
                        root.display(),
                        existing.display()
                    ),
                )
            }
        }
        Err(error) => Check::missing(
            subject,
            format!(
                "{}: cannot write in {}: {error}",
                root.display(),
                existing.display()
            ),
            fix,
        ),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_line_says_status_subject_detail_and_fix() {
        assert_eq!(
            Check::missing(
                "codex",
                "`codex` not found on PATH",
                Some("install it".into())
            )
            .line(),
            "missing  codex: `codex` not found on PATH — install it"
        );
        assert_eq!(Check::ok("model", "fine").line(), "ok       model: fine");
        assert_eq!(
            summary(&["model", "codex"], 1),
            "cannot run: model, codex (1 warning); fix the missing lines, then run `subagent doctor` again"
        );
        assert_eq!(summary(&[], 0), "everything the preset enables can run");
    }

    #[test]
    fn the_state_dir_is_writable_or_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("state/subagents");
        let check = state_check(Some(root.clone()));
        assert_eq!(check.status, Status::Ok, "{check:?}");
        assert!(!root.exists(), "doctor leaves nothing behind");
        std::fs::create_dir_all(&root).unwrap();
        assert_eq!(
            state_check(Some(root.clone())).detail,
            format!("{} writable", root.display())
        );
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let blocked = state_check(Some(file.join("subagents")));
        assert_eq!(blocked.status, Status::Missing);
        assert_eq!(state_check(None).status, Status::Missing);
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    }
}
