//! The crate's one error type, and how it becomes the seam's [`subagent_core::Error`].

use std::path::PathBuf;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How to install the pinned CLI, appended to every "not found" message.
pub const INSTALL_HINT: &str = "install it with `cargo xtask install-clis` (into target/clis) or \
`npm install -g @openai/codex@0.171.0`, or set `binary` in the provider's config to its path";

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
    /// The `codex` executable was not found. Returned by `start`; becomes `SPAWN_FAILED`.
    /// Retrying helps once the CLI is installed.
    #[error("the codex CLI was not found ({tried}); {INSTALL_HINT}", tried = tried_text(program, searched))]
    NotFound {
        /// The path or name tried.
        program: PathBuf,
        /// The `PATH` directories searched for a bare name.
        searched: Vec<PathBuf>,
    },
    /// The child could not be started for another reason (not executable, bad cwd, OS
    /// refusal). Returned by `start`; becomes `SPAWN_FAILED`.
    #[error("could not start codex: {0}")]
    Spawn(#[source] subagent_process::Error),
}

fn tried_text(program: &std::path::Path, searched: &[PathBuf]) -> String {
    if searched.is_empty() {
        format!("tried {}", program.display())
    } else {
        let dirs = searched
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(":");
        format!("tried `{}` on PATH {dirs}", program.display())
    }
}

impl Error {
    /// A config error.
    pub fn config(message: impl Into<String>) -> Self {
        Self::Config(message.into())
    }
}

impl From<subagent_process::Error> for Error {
    fn from(error: subagent_process::Error) -> Self {
        match error {
            subagent_process::Error::NotFound { program, searched } => {
                Self::NotFound { program, searched }
            }
            other => Self::Spawn(other),
        }
    }
}

impl From<Error> for subagent_core::Error {
    fn from(error: Error) -> Self {
        match error {
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
    fn config_errors_are_invalid_arguments() {
        let error: subagent_core::Error = Error::config("bad").into();
        assert_eq!(error.code(), ErrorCode::InvalidArguments);
    }
}
