//! The subcommands: one module each; what they share is here.

mod agents;
mod delegate;
mod doctor;
mod manual;
mod mcp_servers;
mod preset;
mod providers;
mod run;
mod runs;
mod sessions;
mod settings;
mod skills;

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;
use subagent_core::{ProviderFactory, StopReason};

use crate::args::{Command, PresetCommand};
use crate::drive::StopSignal;
use crate::render::{self, Mode};
use crate::setup::Runnable;
use crate::{EXIT_CANCELLED, EXIT_COMPLETED, EXIT_NOT_COMPLETED, Refusal};

/// Runs one subcommand with the provider kinds of this build (`setup::factories`).
pub(crate) async fn dispatch(command: Command, factories: &[Arc<dyn ProviderFactory>]) -> ExitCode {
    crate::recording::set_kind(command.kind());
    match command {
        Command::Delegate(args) => {
            let json = args.json;
            delegate::delegate(args, factories)
                .await
                .unwrap_or_else(|r| r.report(json))
        }
        Command::Run(args) => {
            let json = args.json;
            run::run(args, factories)
                .await
                .unwrap_or_else(|r| r.report(json))
        }
        #[cfg(feature = "acp")]
        Command::Acp(args) => crate::acp::acp(args, factories)
            .await
            .unwrap_or_else(|r| r.report(false)),
        Command::Providers(args) => {
            let json = args.json;
            providers::providers(&args, factories).unwrap_or_else(|r| r.report(json))
        }
        Command::Skills(args) => {
            let json = args.json;
            skills::skills(&args).unwrap_or_else(|r| r.report(json))
        }
        Command::Agents(args) => {
            let json = args.json;
            agents::agents(&args, factories).unwrap_or_else(|r| r.report(json))
        }
        #[cfg(feature = "serve")]
        Command::Serve(args) => crate::serve::serve(args, factories)
            .await
            .unwrap_or_else(|r| r.report(false)),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => crate::mcp::mcp(args, factories)
            .await
            .unwrap_or_else(|r| r.report(false)),
        #[cfg(feature = "nats")]
        Command::Worker(args) => crate::worker::worker(args, factories)
            .await
            .unwrap_or_else(|r| r.report(false)),
        Command::Preset(PresetCommand::Validate { file, json }) => {
            preset::validate(&file, json, factories)
        }
        Command::Sessions(args) => {
            let json = args.json;
            sessions::sessions(&args).unwrap_or_else(|r| r.report(json))
        }
        Command::Doctor(args) => {
            let json = args.json;
            doctor::doctor(&args, factories)
                .await
                .unwrap_or_else(|r| r.report(json))
        }
        Command::Settings(args) => {
            let json = args.json;
            settings::settings(&args, factories).unwrap_or_else(|r| r.report(json))
        }
        Command::Trust(args) => settings::trust(&args).unwrap_or_else(|r| r.report(false)),
        Command::McpServers(args) => {
            let json = args.json;
            mcp_servers::mcp_servers(&args, factories)
                .await
                .unwrap_or_else(|r| r.report(json))
        }
        Command::Ps(args) => {
            let json = args.json;
            runs::ps(&args).unwrap_or_else(|r| r.report(json))
        }
        Command::Logs(args) => {
            let json = args.json;
            runs::logs(&args).await.unwrap_or_else(|r| r.report(json))
        }
        Command::Stop(args) => {
            let json = args.json;
            runs::stop(&args).await.unwrap_or_else(|r| r.report(json))
        }
        #[cfg(feature = "ui")]
        Command::Ui(args) => crate::ui::ui(&args)
            .await
            .unwrap_or_else(|r| r.report(false)),
        #[cfg(not(feature = "ui"))]
        Command::Ui(_) => crate::features::not_built("ui", "ui").report(false),
        Command::Completions(args) => manual::completions(&args),
        Command::Man(args) => manual::man(&args).unwrap_or_else(|r| r.report(false)),
        // A front door this build left out (`--no-default-features`): say which feature has it.
        #[cfg(not(feature = "acp"))]
        Command::Acp(_) => crate::features::not_built("acp", "acp").report(false),
        #[cfg(not(feature = "serve"))]
        Command::Serve(_) => crate::features::not_built("serve", "serve").report(false),
        #[cfg(not(feature = "mcp"))]
        Command::Mcp(_) => crate::features::not_built("mcp", "mcp").report(false),
        #[cfg(not(feature = "nats"))]
        Command::Worker(_) => crate::features::not_built("worker", "nats").report(false),
        Command::Preset(PresetCommand::Schema) => {
            let schema = subagent_preset::preset_schema_for(factories);
            outln!(
                "{}",
                serde_json::to_string_pretty(&schema).unwrap_or_default()
            );
            ExitCode::from(EXIT_COMPLETED)
        }
    }
}

/// The largest prompt read from stdin (`-`), in bytes: 4 MiB.
const MAX_STDIN_PROMPT: u64 = 4 << 20;

pub(crate) fn read_prompt(prompt: &str) -> Result<String, Refusal> {
    let text = if prompt == "-" {
        let bytes = subagent_session::read_bounded(std::io::stdin().lock(), MAX_STDIN_PROMPT)
            .map_err(|e| {
                Refusal::invalid(if e.kind() == std::io::ErrorKind::FileTooLarge {
                    format!(
                        "the prompt on stdin is over {} MiB; put the material in a file and name it in the prompt",
                        MAX_STDIN_PROMPT >> 20
                    )
                } else {
                    format!("cannot read the prompt from stdin: {e}")
                })
            })?;
        String::from_utf8(bytes)
            .map_err(|_| Refusal::invalid("the prompt on stdin is not UTF-8 text"))?
    } else {
        prompt.to_owned()
    };
    if text.trim().is_empty() {
        return Err(Refusal::invalid("the prompt is empty"));
    }
    Ok(text)
}

/// The exit code: 0 when the run completed (even if a stop signal raced its end), else the
/// code of the stop signal received (130, 143, 129), else 130 for a cancelled run and 1.
pub(super) fn exit_for(status: StopReason, interrupted: Option<StopSignal>) -> ExitCode {
    ExitCode::from(match (status, interrupted) {
        (StopReason::Completed, _) => EXIT_COMPLETED,
        (_, Some(signal)) => signal.exit_code(),
        (StopReason::Cancelled, None) => EXIT_CANCELLED,
        (_, None) => EXIT_NOT_COMPLETED,
    })
}

pub(super) fn notice(runnable: &Runnable, mode: Mode) {
    if let Some(notice) = &runnable.model.notice {
        if mode == Mode::Json {
            render::print_json_line(&json!({"type": "notice", "message": notice}));
        } else {
            eprintln!("{notice}");
        }
    }
}

/// The session `id` of `provider`, continued from `cwd`: what `--resume` asks for, of a child
/// (`delegate`) or of the `run` parent.
pub(super) fn session_ref(
    provider: &str,
    id: &str,
    cwd: &std::path::Path,
) -> subagent_core::SessionRef {
    subagent_core::SessionRef {
        provider: provider.to_owned(),
        id: id.to_owned(),
        cwd: Some(cwd.to_path_buf()),
        transcript: None,
    }
}

/// A word as a POSIX shell reads it back: as it is when it holds nothing the shell treats
/// specially, else in single quotes (a quote inside written `'\''`).
pub(crate) fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+-,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The start of the command that continues a session the way this command ran it: `subagent
/// SUBCOMMAND` and what decided where and on what it ran (`--preset` as given, `--cwd` as given,
/// `--offline`), then the `values` that are set and the `switches` that are on; the caller's hint
/// adds `--resume ID PROMPT`. A
/// preset that came from `SUBAGENT_PRESET` or was found in the project is found again the same
/// way, so it is not repeated.
pub(super) fn continue_command(
    subcommand: &str,
    args: &crate::args::RunnableArgs,
    values: &[(&str, Option<String>)],
    switches: &[(&str, bool)],
) -> String {
    let mut words = vec!["subagent".to_owned(), subcommand.to_owned()];
    let mut flag = |name: &str, value: Option<String>| {
        words.push(name.to_owned());
        words.extend(value.as_deref().map(shell_word));
    };
    if let Some(preset) = &args.project.preset.preset {
        flag("--preset", Some(preset.to_string_lossy().into_owned()));
    }
    if let Some(cwd) = &args.project.cwd {
        flag("--cwd", Some(cwd.to_string_lossy().into_owned()));
    }
    if args.offline {
        flag("--offline", None);
    }
    // The rules the run obeyed, so the continued run obeys them too.
    for rules in &args.settings.allowed_tools {
        flag("--allowedTools", Some(rules.clone()));
    }
    for rules in &args.settings.disallowed_tools {
        flag("--disallowedTools", Some(rules.clone()));
    }
    if let Some(settings) = &args.settings.settings {
        flag("--settings", Some(settings.clone()));
    }
    for (name, value) in values {
        if value.is_some() {
            flag(name, value.clone());
        }
    }
    for (name, on) in switches {
        if *on {
            flag(name, None);
        }
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::shell_word;

    #[test]
    fn shell_words_come_back_as_they_went() {
        assert_eq!(shell_word("presets/offline.yaml"), "presets/offline.yaml");
        assert_eq!(
            shell_word("my presets/it's.yaml"),
            "'my presets/it'\\''s.yaml'"
        );
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
    }
}
