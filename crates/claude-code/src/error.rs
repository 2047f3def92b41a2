//! The crate's one error type, and how it becomes the seam's [`subagent_core::Error`].

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The npm package of the Claude Code CLI.
pub const NPM_PACKAGE: &str = "@anthropic-ai/claude-code";

/// The version of `claude` this crate is tested against (`cargo xtask install-clis` pins the
/// same; `subagent doctor` compares the installed one with it). [`INSTALL_HINT`] names it.
pub const TESTED_VERSION: &str = "2.1.197";

/// How to install the pinned CLI, part of every "not found" message.
pub const INSTALL_HINT: &str = "install it with `npm install -g @anthropic-ai/claude-code@2.1.197` (in a clone of \
subagents, `cargo xtask install-clis` puts it in target/clis), or set `binary` in the provider's \
config to its path";

/// What can go wrong before a `claude` child exists.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The provider's config is invalid. Returned by the factory's `build` and by
    /// `ClaudeCodeProvider::new`; becomes `INVALID_ARGUMENTS`. Retrying does not help until the
    /// config is fixed.
    #[error("invalid claude-code provider config: {0}")]
    Config(String),
    /// A request field cannot be mapped onto the CLI (a relative cwd, a schema that is not
    /// JSON…). Returned by `start`; becomes `INVALID_ARGUMENTS`.
    #[error("{0}")]
    Request(String),
    /// The session asked to resume belongs to another provider or another directory. Returned by
    /// `start`; becomes `NOT_RESUMABLE`. Claude Code keys sessions by cwd, so resuming elsewhere
    /// cannot work.
    #[error("{0}")]
    NotResumable(String),
    /// `bypassPermissions` while running as root without `IS_SANDBOX=1`: Claude Code refuses it
    /// ("--dangerously-skip-permissions cannot be used with root/sudo privileges"). Returned by
    /// `start`; becomes `SPAWN_FAILED`. Retrying helps once the config sets `IS_SANDBOX=1` in
    /// `env` (only inside a real sandbox) or picks another permission mode.
    #[error(
        "Claude Code refuses permission mode bypassPermissions when running as root \
         (\"--dangerously-skip-permissions cannot be used with root/sudo privileges\"); set \
         IS_SANDBOX=1 in the provider's `env` if this really is a sandbox, or use another \
         permission_mode (acceptEdits, dontAsk, …)"
    )]
    BypassAsRoot,
    /// The `claude` child could not be started: the program is missing (the text says what
    /// was tried and how to install it) or not executable, the request's cwd is not a directory,
    /// or the OS refused. Returned by `start`; becomes `INVALID_ARGUMENTS` or `SPAWN_FAILED` as
    /// [`subagent_process::Error::blame`] says, with its one text. Retrying helps once the CLI is
    /// installed.
    #[error("{}", .0.start_failure("claude", INSTALL_HINT))]
    Start(#[source] subagent_process::Error),
    /// The file of MCP servers handed to the child (`--mcp-config`) could not be written to the
    /// temporary directory. Returned by `start`; becomes `SPAWN_FAILED`. Retrying helps once
    /// `TMPDIR` is writable.
    #[error("the MCP servers for claude could not be written to a temporary file: {0}")]
    McpConfigFile(#[source] std::io::Error),
}

impl From<subagent_process::Error> for Error {
    fn from(error: subagent_process::Error) -> Self {
        Self::Start(error)
    }
}

impl From<Error> for subagent_core::Error {
    fn from(error: Error) -> Self {
        match error {
            Error::Start(ref source) if source.blame() == subagent_process::Blame::Request => {
                subagent_core::Error::invalid(error.to_string())
            }
            Error::Config(_) | Error::Request(_) => {
                subagent_core::Error::invalid(error.to_string())
            }
            Error::NotResumable(message) => subagent_core::Error::NotResumable { message },
            _ => subagent_core::Error::spawn_failed(error.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use subagent_core::ErrorCode;

    #[test]
    fn not_found_names_the_path_and_how_to_install() {
        let error: subagent_core::Error = Error::from(subagent_process::Error::NotFound {
            program: "/opt/none/claude".into(),
            searched: Vec::new(),
        })
        .into();
        assert_eq!(error.code(), ErrorCode::SpawnFailed);
        let text = error.to_string();
        assert!(text.contains("tried /opt/none/claude"), "{text}");
        assert!(text.contains("cargo xtask install-clis"), "{text}");
        assert!(
            text.contains("npm install -g @anthropic-ai/claude-code@2.1.197"),
            "{text}"
        );
    }

    #[test]
    fn the_install_hint_names_the_tested_version() {
        assert!(INSTALL_HINT.contains(&format!("{NPM_PACKAGE}@{TESTED_VERSION}`")));
    }

    #[test]
    fn bypass_as_root_says_is_sandbox() {
        let error: subagent_core::Error = Error::BypassAsRoot.into();
        assert_eq!(error.code(), ErrorCode::SpawnFailed);
        assert!(error.to_string().contains("IS_SANDBOX=1"));
    }

    #[test]
    fn a_bad_cwd_is_the_requests_fault() {
        let error: subagent_core::Error = Error::from(subagent_process::Error::InvalidCwd {
            cwd: "relative".into(),
            reason: "must be absolute",
        })
        .into();
        assert_eq!(error.code(), ErrorCode::InvalidArguments);
        assert_eq!(
            error.to_string(),
            "invalid arguments: working directory relative: must be absolute"
        );
    }
}
