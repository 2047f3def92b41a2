//! The crate's one error type, and how it becomes the seam's [`subagent_core::Error`].

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The ACP adapters this crate is tested against, as (program, npm package, version):
/// `cargo xtask install-clis` pins the same, `subagent doctor` compares an installed adapter
/// with it, and [`INSTALL_HINT`] names them.
pub const TESTED_ADAPTERS: [(&str, &str, &str); 2] = [
    ("codex-acp", "@zed-industries/codex-acp", "0.16.0"),
    (
        "claude-agent-acp",
        "@zed-industries/claude-agent-acp",
        "0.23.1",
    ),
];

/// How to install the pinned adapters, appended to every "not found" message.
pub const INSTALL_HINT: &str = "install the adapters with `npm install -g \
@zed-industries/codex-acp@0.16.0 @zed-industries/claude-agent-acp@0.23.1` (in a clone of \
subagents, `cargo xtask install-clis` puts them in target/clis), or set `command` in the \
provider's config to the agent's path";

/// What can go wrong before an ACP agent's process exists.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The provider's config is invalid. Returned by the factory's `build`; becomes
    /// `INVALID_ARGUMENTS`. Retrying does not help until the config is fixed.
    #[error("invalid acp provider config: {0}")]
    Config(String),
    /// The request asks for a permission ceiling the row maps to no session mode of the agent
    /// (`modes`), so the agent could run looser than asked. Returned by `start`; becomes
    /// `INVALID_ARGUMENTS`. Retrying does not help until the row maps the mode.
    #[error(
        "acp provider {provider}: the request's permission ceiling {ceiling} is stricter than the \
         row's permission_mode {row}, and the row's `modes` names no session mode of the agent for \
         {ceiling}: refused so the agent cannot run looser than asked"
    )]
    UnmappedCeiling {
        /// The provider's name.
        provider: String,
        /// The mode the run would need.
        ceiling: String,
        /// The row's own mode.
        row: String,
    },
    /// The run's working directory cannot be the root of its file confinement (it does not
    /// exist). Returned by `start`; becomes `INVALID_ARGUMENTS`.
    #[error("the run's working directory cannot confine the agent's file access: {0}")]
    Roots(String),
    /// The agent's process could not be started: the program is missing (the text says what
    /// was tried and how to install it) or not executable, the request's cwd is not a directory,
    /// or the OS refused. Returned by `start`; becomes `INVALID_ARGUMENTS` or `SPAWN_FAILED` as
    /// [`subagent_process::Error::blame`] says, with its one text. Retrying helps once the agent
    /// is installed.
    #[error("{}", .0.start_failure("the ACP agent", INSTALL_HINT))]
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
            Error::Start(_) => subagent_core::Error::spawn_failed(error.to_string()),
            Error::Config(_) | Error::UnmappedCeiling { .. } | Error::Roots(_) => {
                subagent_core::Error::invalid(error.to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use subagent_core::ErrorCode;

    #[test]
    fn codes() {
        let missing: subagent_core::Error = Error::from(subagent_process::Error::NotFound {
            program: "/opt/none/codex-acp".into(),
            searched: Vec::new(),
        })
        .into();
        assert_eq!(missing.code(), ErrorCode::SpawnFailed);
        assert!(missing.to_string().contains(
            "npm install -g @zed-industries/codex-acp@0.16.0 @zed-industries/claude-agent-acp@0.23.1"
        ));
        let unmapped: subagent_core::Error = Error::UnmappedCeiling {
            provider: "p".into(),
            ceiling: "plan".into(),
            row: "default".into(),
        }
        .into();
        assert_eq!(unmapped.code(), ErrorCode::InvalidArguments);
        let config: subagent_core::Error = Error::config("bad").into();
        assert_eq!(config.code(), ErrorCode::InvalidArguments);
    }

    #[test]
    fn the_install_hint_names_the_tested_adapters() {
        for (program, package, version) in TESTED_ADAPTERS {
            assert!(
                INSTALL_HINT.contains(&format!("{package}@{version}")),
                "{program}"
            );
            assert!(package.ends_with(&format!("/{program}")), "{program}");
        }
    }
}
