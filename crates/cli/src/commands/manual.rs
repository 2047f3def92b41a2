//! `subagent completions SHELL` and `subagent man [COMMAND]`: generated from the clap
//! definitions of `crate::args`, so they name exactly the commands and flags the binary takes.

use std::process::ExitCode;

use clap::CommandFactory;

use crate::args::{Cli, CompletionsArgs, ManArgs};
use crate::{EXIT_COMPLETED, Refusal};

/// The name the scripts complete and the pages are titled with.
const BIN: &str = "subagent";

/// The completion script of the shell on stdout.
pub(super) fn completions(args: &CompletionsArgs) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), BIN, &mut script);
    crate::render::out(format_args!("{}", String::from_utf8_lossy(&script)));
    ExitCode::from(EXIT_COMPLETED)
}

/// The roff of `subagent(1)`, or of `subagent-COMMAND(1)`, on stdout.
pub(super) fn man(args: &ManArgs) -> Result<ExitCode, Refusal> {
    let mut command = Cli::command().name(BIN);
    // Built, the subcommands carry their display names (`subagent-delegate`): the pages' titles.
    command.build();
    let page = match &args.command {
        None => command,
        Some(name) => command.find_subcommand(name).cloned().ok_or_else(|| {
            let known: Vec<&str> = command
                .get_subcommands()
                .map(clap::Command::get_name)
                .filter(|known| *known != "help")
                .collect();
            Refusal::invalid(format!(
                "no command `{name}` (commands: {})",
                known.join(", ")
            ))
        })?,
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .source(format!("{BIN} {}", env!("CARGO_PKG_VERSION")))
        .render(&mut roff)
        .map_err(|e| Refusal::invalid(format!("cannot render the manual page: {e}")))?;
    crate::render::out(format_args!("{}", String::from_utf8_lossy(&roff)));
    Ok(ExitCode::from(EXIT_COMPLETED))
}
