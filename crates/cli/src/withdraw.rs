//! The second withdrawal of secrets from our environment block (`main` made the first, by name
//! and by the command line's `--…-env` flags: `subagent_process::withdraw`): the variables the
//! command's preset names as holding keys (its model's `api_key_env`, a row's `token_env`, …)
//! whatever their names, and the command's own `--token-env`/`--user-env`/`--password-env`.
//! Done after parsing the command line and before the async runtime starts (no thread yet): a
//! variable still in the block makes the process start again without it, once.
//!
//! Only the commands that run agents (`delegate`, `run`, `acp`, `serve`, `mcp`, `worker`) look:
//! their descendants run commands a model wrote. The preset is read here quietly and read again
//! by the command, which reports what is wrong with it.

use std::sync::Arc;

use subagent_core::ProviderFactory;

use crate::args::{Command, ProjectArgs};
use crate::setup;

/// Withdraws what `command` names as secrets, when some of it is still in the environment
/// block (the process then starts again and this does not return); a failure is a warning.
pub(crate) fn configured(command: &Command, factories: &[Arc<dyn ProviderFactory>]) {
    let names = names(command, factories);
    if names.is_empty() {
        return;
    }
    if let Err(error) = subagent_process::withdraw::withdraw_also(&names) {
        eprintln!("warning: {error}");
    }
}

/// The variables `command` and its preset name as holding secrets.
fn names(command: &Command, factories: &[Arc<dyn ProviderFactory>]) -> Vec<String> {
    let (project, flagged): (&ProjectArgs, Vec<Option<String>>) = match command {
        Command::Delegate(args) => (&args.preset.project, Vec::new()),
        Command::Run(args) => (&args.preset.project, Vec::new()),
        Command::Acp(args) => (&args.preset.project, Vec::new()),
        Command::Mcp(args) => (&args.preset.project, vec![args.token.token_env.clone()]),
        Command::Serve(args) => (&args.preset.project, vec![args.token.token_env.clone()]),
        Command::Worker(args) => (
            &args.preset.project,
            vec![
                args.token_env.clone(),
                args.user_env.clone(),
                args.password_env.clone(),
            ],
        ),
        _ => return Vec::new(),
    };
    let mut names: Vec<String> = flagged.into_iter().flatten().collect();
    if let Ok(cwd) = setup::cwd(project) {
        let choice = crate::preset_choice::choose_preset(
            &project.preset,
            &cwd,
            project.cwd.is_some(),
            &setup::env,
        );
        if let Ok(preset) = setup::read_preset(&choice, factories) {
            names.extend(setup::secret_names(&preset, factories));
        }
    }
    names
}
