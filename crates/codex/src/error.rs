//! The crate's one error type, and how it becomes the seam's [`subagent_core::Error`].

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The npm package of the Codex CLI.
pub const NPM_PACKAGE: &str = "@openai/codex";

/// The version of `codex` this crate is tested against (`cargo xtask install-clis` pins the
/// same; `subagent doctor` compares the installed one with it). [`INSTALL_HINT`] names it.
pub const TESTED_VERSION: &str = "0.171.0";

/// How to install the pinned CLI, appended to every "not found" message.
pub const INSTALL_HINT: &str = "install it with `npm install -g @openai/codex@0.171.0` (in a clone of \
subagents, `cargo xtask install-clis` puts it in target/clis), or set `binary` in the provider's \
config to its path";

/// What can go wrong before a codex child exists.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The provider's config is invalid. Returned by the factory's `build`; becomes
    /// `INVALID_ARGUMENTS`. Retrying does not help until the config is fixed.
    #[error("invalid codex provider config: {0}")]
    Config(String),
    /// The output schema could not be written to the file codex reads it from. Returned by
    /// `start`; becomes `SPAWN_FAILED`. Retrying may help (disk full, temp dir missing).
    #[error("could not write the output schema for codex to a temporary file: {0}")]
    SchemaFile(#[source] std::io::Error),
    /// The `codex` child could not be started: the program is missing (the text says what
    /// was tried and how to install it) or not executable, the request's cwd is not a directory,
    /// or the OS refused. Returned by `start`; becomes `INVALID_ARGUMENTS` or `SPAWN_FAILED` as
    /// [`subagent_process::Error::blame`] says, with its one text. Retrying helps once the CLI is
    /// installed.
    #[error("{}", .0.start_failure("codex", INSTALL_HINT))]
    Start(#[source] subagent_process::Error),
}

impl Error {
    /// A config error.
    pub fn config(message: impl Into<String>) -> Self {
        Self::Config(message.into())
    }
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
            Error::Config(_) => subagent_core::Error::invalid(error.to_string()),
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
            program: "/opt/none/codex".into(),
            searched: Vec::new(),
        })
        .into();
        assert_eq!(error.code(), ErrorCode::SpawnFailed);
        let text = error.to_string();
        assert!(text.contains("tried /opt/none/codex"), "{text}");
        assert!(text.contains("cargo xtask install-clis"), "{text}");
        assert!(
            text.contains("npm install -g @openai/codex@0.171.0"),
            "{text}"
        );
    }

    #[test]
    fn the_install_hint_names_the_tested_version() {
        assert!(INSTALL_HINT.contains(&format!("{NPM_PACKAGE}@{TESTED_VERSION}`")));
    }

    #[test]
    fn config_errors_are_invalid_arguments() {
        let error: subagent_core::Error = Error::config("bad").into();
        assert_eq!(error.code(), ErrorCode::InvalidArguments);
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
