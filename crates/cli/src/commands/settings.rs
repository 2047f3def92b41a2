//! `subagent settings` (the effective settings and their sources) and `subagent trust` (our
//! record of trusted projects).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use subagent_core::ProviderFactory;

use subagent_settings::Trust;

use crate::args::{ProjectArgs, SettingsArgs, TrustArgs};
use crate::{EXIT_COMPLETED, Refusal, RefusalCode, setup};

/// `subagent settings`.
pub(super) fn settings(
    args: &SettingsArgs,
    factories: &[Arc<dyn ProviderFactory>],
) -> Result<ExitCode, Refusal> {
    let cwd = setup::cwd(&args.project)?;
    let (preset, _) = setup::load_preset(
        &args.project.preset,
        &cwd,
        args.project.cwd.is_some(),
        factories,
    )?;
    let settings = crate::settings::load_settings(
        &cwd,
        &args.settings,
        preset.settings.as_ref(),
        &setup::env,
    )?;
    if args.json {
        crate::render::print_json_line(
            &serde_json::to_value(&settings).unwrap_or(serde_json::Value::Null),
        );
    } else {
        crate::render::out(format_args!("{}", settings.render()));
    }
    Ok(ExitCode::from(EXIT_COMPLETED))
}

/// `subagent trust`.
pub(super) fn trust(args: &TrustArgs) -> Result<ExitCode, Refusal> {
    let home = setup::env("HOME")
        .map(PathBuf::from)
        .filter(|home| home.is_absolute())
        .ok_or_else(|| {
            Refusal::invalid(
                "trust is recorded in ~/.subagents/trusted-projects.json: set HOME to an absolute path",
            )
        })?;
    let record = Trust::record_path(&home);
    let failed = |error: subagent_settings::Error| {
        Refusal::new(RefusalCode::Settings(error.code()), error.to_string())
    };
    if args.list {
        let listed = Trust::list(&home).map_err(failed)?;
        outln!("record: {}", record.display());
        if listed.is_empty() {
            outln!("no project is trusted here (Claude Code's ~/.claude.json may trust some)");
        }
        for project in listed {
            outln!("  {project}");
        }
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    let project = setup::cwd(&ProjectArgs {
        preset: crate::args::PresetArgs { preset: None },
        cwd: args.dir.clone(),
    })?;
    if args.revoke {
        let removed = Trust::revoke(&project, &home).map_err(failed)?;
        let state = Trust::check(&project, &home);
        match (removed, &state.by) {
            (_, Some(by)) => outln!(
                "{} is still trusted by {by}; its allow rules count",
                project.display()
            ),
            (true, None) => outln!(
                "{} is no longer trusted (removed from {}); its allow rules do not count",
                project.display(),
                record.display()
            ),
            (false, None) => outln!("{} was not trusted", project.display()),
        }
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    let added = Trust::record(&project, &home).map_err(failed)?;
    outln!(
        "{} is trusted{}: its settings' allow rules count (recorded in {}; `subagent trust --revoke{}` takes it back)",
        project.display(),
        if added { "" } else { " already" },
        record.display(),
        args.dir
            .as_ref()
            .map(|_| format!(
                " {}",
                crate::commands::shell_word(&project.to_string_lossy())
            ))
            .unwrap_or_default()
    );
    Ok(ExitCode::from(EXIT_COMPLETED))
}
