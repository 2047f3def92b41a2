//! `subagent-cli`: the `subagent` command — the command-line front of `subagents`, and the one
//! place that links every provider (the distribution) — as a library with a thin binary.
//!
//! Subcommands: `delegate` (one child on a provider or agent type), `run` (a parent agent with
//! the preset's delegation tools), `providers` (the capability table), `agents` (the effective
//! catalog), `preset validate|schema`, `doctor` (what the preset needs, and whether it is there),
//! `completions` and `man` (generated from the clap definitions). Progress goes to stderr (live on a terminal, plain lines
//! otherwise); results go to stdout (text, or JSON lines with `--json`). Exit codes are listed in
//! `subagent --help` and `docs/cli.md`.
//!
//! The library entry, [`main_with`], is the whole command with extra provider kinds registered
//! beside the built-in ones: a binary of your own ships a provider of your own without forking
//! the project (`docs/writing-a-provider.md`). The `subagent` binary is `main_with` with none.
//!
//! Deliberately not here: provider logic, preset parsing, the agent loop — those live in their
//! crates; this crate only wires them and talks to the user.

/// `println!` for results on stdout, through [`render::out`]: a reader that has gone (`| head`)
/// ends the output quietly instead of a panic.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::render::out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

#[cfg(feature = "acp")]
mod acp;
mod activity;
mod args;
mod background;
mod bg;
mod broker;
mod commands;
mod drive;
mod features;
mod flags;
mod kinds;
mod line;
#[cfg(any(feature = "serve", feature = "mcp", feature = "ui"))]
mod listen;
mod logging;
#[cfg(feature = "mcp")]
mod mcp;
mod mcp_client;
mod parent;
mod preset_choice;
mod prompt;
mod recording;
mod render;
#[cfg(feature = "serve")]
mod serve;
mod settings;
mod setup;
mod skills;
#[cfg(any(feature = "serve", feature = "mcp", feature = "nats", feature = "ui"))]
mod stop;
mod teams;
#[cfg(feature = "ui")]
mod ui;
mod warnings;
mod withdraw;
#[cfg(feature = "nats")]
mod worker;

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use subagent_core::ProviderFactory;

pub use kinds::{BuiltInKind, built_in_factories, built_in_kinds};

/// `docs/writing-a-provider.md`, compiled: its Rust blocks run as doctests (the conformance kit
/// runs against its example provider; its own binary calls [`main_with`]), so the guide cannot
/// rot.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/writing-a-provider.md")]
pub struct WritingAProviderGuide;

/// Exit code: the run completed.
pub const EXIT_COMPLETED: u8 = 0;
/// Exit code: the child ran but did not complete.
pub const EXIT_NOT_COMPLETED: u8 = 1;
/// Exit code: refused before anything started.
pub const EXIT_REFUSED: u8 = 2;
/// Exit code: cancelled by the user.
pub const EXIT_CANCELLED: u8 = 130;

/// The stable code of a [`Refusal`], spelled one way ([`RefusalCode::as_str`]) on stderr and in
/// `--json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalCode {
    /// The seam's (`UNKNOWN_PROVIDER`, `INVALID_ARGUMENTS`, `NOT_RESUMABLE`, …): most refusals,
    /// the preset's and the registry's included.
    Core(subagent_core::ErrorCode),
    /// The model client's (`subagent_model::Error::code`), when the preset's model cannot be
    /// built.
    Model(subagent_model::ErrorCode),
    /// The settings' (`subagent_settings::Error::code`: `SETTINGS_INVALID`,
    /// `PERMISSION_RULE_INVALID`, `HOOK_MATCHER_INVALID`, …), when a settings file or flag
    /// cannot be used.
    Settings(&'static str),
    /// The MCP client's (`subagent_mcp_client::ErrorCode`: `MCP_CONFIG_INVALID`, …), when the
    /// configured MCP servers cannot be used.
    Mcp(subagent_mcp_client::ErrorCode),
    /// The record of runs' (`ps`, `logs`, `stop`): `RUN_NOT_FOUND`, `RUN_AMBIGUOUS`,
    /// `RUN_NOT_RUNNING`, `RUN_OWNER_GONE`, `RUNS_UNAVAILABLE`.
    Runs(&'static str),
}

impl RefusalCode {
    /// The code as text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Core(code) => code.as_str(),
            Self::Model(code) => code.as_str(),
            Self::Settings(code) => code,
            Self::Mcp(code) => code.as_str(),
            Self::Runs(code) => code,
        }
    }
}

impl std::fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<subagent_core::ErrorCode> for RefusalCode {
    fn from(code: subagent_core::ErrorCode) -> Self {
        Self::Core(code)
    }
}

/// A refusal before anything started: a stable code and a message. Exit code 2.
#[derive(Debug)]
pub struct Refusal {
    /// The stable code.
    pub code: RefusalCode,
    /// What is wrong, for people.
    pub message: String,
}

impl Refusal {
    /// A refusal with this code.
    pub fn new(code: impl Into<RefusalCode>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }

    /// `INVALID_ARGUMENTS`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(subagent_core::ErrorCode::InvalidArguments, message)
    }

    /// Prints the refusal (JSON on stdout with `--json`, else on stderr) and returns exit 2.
    pub fn report(&self, json: bool) -> ExitCode {
        if json {
            render::print_json_line(&render::error_json(self.code.as_str(), &self.message));
        } else {
            eprintln!("error[{}]: {}", self.code, self.message);
        }
        ExitCode::from(EXIT_REFUSED)
    }
}

impl From<subagent_core::Error> for Refusal {
    fn from(error: subagent_core::Error) -> Self {
        Self::new(error.code(), error.to_string())
    }
}

/// The `subagent` command, with `extra` provider kinds beside the built-in ones
/// ([`built_in_kinds`]): what the `main` of a binary of your own calls, after
/// `subagent_process::guard::init()` (which must come first: the guardian of every child
/// process is a re-executed copy of the binary) and, to keep keys out of what a model's commands
/// can read of this process, `subagent_process::withdraw::withdraw()` (without it, the preset's
/// secrets are not withdrawn either). Reads the command line; a preset then names the
/// extra kinds in its `providers:` like any other. Two factories of one kind are refused (exit 2).
pub fn main_with(extra: Vec<Arc<dyn ProviderFactory>>) -> ExitCode {
    run_with(std::env::args_os(), extra)
}

/// A command line clap refuses: as clap prints it (exit 2; help and version exit 0), or with
/// `--json` among the arguments as one `{"type": "error", "code": "INVALID_ARGUMENTS",
/// "message"}` line on stdout, as every refusal is then.
fn usage_error(error: &clap::Error, args: &[OsString]) -> ExitCode {
    use clap::error::ErrorKind;
    let informational = matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if informational || !args.iter().skip(1).any(|arg| arg == "--json") {
        error.exit();
    }
    let text = error.render().to_string();
    let message = text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_owned();
    Refusal::invalid(message).report(true)
}

/// [`main_with`] on the command line `args` (the first item is the program's name).
pub fn run_with<I, T>(args: I, extra: Vec<Arc<dyn ProviderFactory>>) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let factories = match setup::factories(extra) {
        Ok(factories) => factories,
        Err(refusal) => return refusal.report(false),
    };
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match args::Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error, &args),
    };
    // Before any thread: the preset's secrets out of the environment block too.
    withdraw::configured(&cli.command, &factories);
    logging::init(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::from(EXIT_REFUSED);
        }
    };
    let code = runtime.block_on(commands::dispatch(cli.command, &factories));
    // Children are owned by `subagent-process` and were stopped with their runs; do not wait
    // for stray blocking tasks.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    code
}
