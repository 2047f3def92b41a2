//! The one error type of the crate, and where in a preset file an error is.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;
use subagent_core::{Capability, ErrorCode};

/// `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A position in a preset file: 1-based line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Position {
    /// Line, from 1 (0 = unknown).
    pub line: u32,
    /// Column, from 1 (0 = unknown).
    pub column: u32,
}

impl Position {
    /// A position.
    pub const fn new(line: u32, column: u32) -> Self {
        Self { line, column }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Where an error is: the file, the position and the key path (e.g. `providers[1].config.model`).
///
/// Displays as `file:line:column: key` (`file:line:column` when the key is empty, `file` alone
/// when the position is unknown).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Site {
    /// The preset file, as given to the loader.
    pub file: PathBuf,
    /// The position (0:0 when unknown).
    #[serde(flatten)]
    pub position: Position,
    /// The key path, in `a.b[2].c` form; empty for the document itself.
    pub key: String,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.position.line > 0 {
            write!(f, ":{}", self.position)?;
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        Ok(())
    }
}

fn join(items: &[String]) -> String {
    if items.is_empty() {
        return "none".to_owned();
    }
    items
        .iter()
        .map(|item| format!("\"{item}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Everything that can make a preset fail to load or build.
///
/// The [`Site`] is boxed to keep `Result`s small.
///
/// Every variant but [`Error::Io`] carries a [`Site`]; the message starts with it
/// (`file:line:column: key: …`). Retrying never helps: the file (or the environment it refers
/// to) must change. [`Error::code`] gives the stable code surfaces print.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read, or is not a regular file (a FIFO, a device, a directory:
    /// refused without being read). Returned by `Preset::load`.
    #[error("{}: cannot read the preset: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// The file is larger than [`crate::MAX_PRESET_BYTES`]; nothing of it was parsed.
    #[error("{site}: the preset is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The file.
        site: Box<Site>,
        /// The bytes seen: the length of a text given whole, `limit + 1` for a file (reading
        /// stops there, so a file's real size is not known).
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The YAML is malformed or does not match the format: a syntax error, an unknown key (a
    /// typo), a missing key, a value of the wrong type.
    #[error("{site}: {message}")]
    Syntax {
        /// Where.
        site: Box<Site>,
        /// The parser's message.
        message: String,
    },
    /// Parsing stopped at a resource budget: too many aliases expanded (a "YAML bomb"), too
    /// deep, too many nodes.
    #[error("{site}: the preset exceeds a parsing budget ({message})")]
    Budget {
        /// Where the budget was exceeded.
        site: Box<Site>,
        /// Which budget.
        message: String,
    },
    /// `version` is not one this build reads.
    #[error("{site}: unsupported preset version {found} (this build reads version {supported})")]
    UnsupportedVersion {
        /// Where.
        site: Box<Site>,
        /// The version in the file.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// A `${VAR}` reference names a variable that is not set (and has no `:-` default).
    #[error(
        "{site}: environment variable {name} is not set (referenced as ${{{name}}}; set it, give a default with ${{{name}:-…}}, or write $${{ for a literal ${{)"
    )]
    UnsetVariable {
        /// The scalar holding the reference.
        site: Box<Site>,
        /// The variable.
        name: String,
    },
    /// A `${` does not start a well-formed `${NAME}` or `${NAME:-default}` reference.
    #[error(
        "{site}: malformed variable reference \"{reference}\" (expected ${{NAME}} or ${{NAME:-default}}; write $${{ for a literal ${{)"
    )]
    MalformedVariable {
        /// The scalar holding the reference.
        site: Box<Site>,
        /// The text from `${` on (bounded).
        reference: String,
    },
    /// A provider row names a kind no factory builds.
    #[error(
        "{site}: unknown provider kind \"{kind}\" (known kinds: {})",
        join(known)
    )]
    UnknownKind {
        /// The row's `kind`.
        site: Box<Site>,
        /// The kind asked for.
        kind: String,
        /// The kinds of the factories passed to the loader.
        known: Vec<String>,
    },
    /// A provider row's `config` does not match its kind's config schema.
    #[error("{site}: invalid config for provider \"{provider}\" (kind {kind}): {}", messages.join("; "))]
    InvalidConfig {
        /// The first offending value (or the `config` key).
        site: Box<Site>,
        /// The row's name.
        provider: String,
        /// The row's kind.
        kind: String,
        /// One message per violation (`/json/pointer: what is wrong`), values masked.
        messages: Vec<String>,
    },
    /// A factory's `config_schema()` is not a valid JSON Schema: a bug in that provider crate.
    #[error("{site}: the config schema of provider kind \"{kind}\" is invalid: {message}")]
    FactorySchema {
        /// The row.
        site: Box<Site>,
        /// The kind.
        kind: String,
        /// The validator's message.
        message: String,
    },
    /// Two provider rows, or two tool rows, share a name.
    #[error("{site}: duplicate {what} name \"{name}\" (first defined at {first})")]
    Duplicate {
        /// The second row.
        site: Box<Site>,
        /// `provider` or `tool`.
        what: &'static str,
        /// The name.
        name: String,
        /// The first row's position.
        first: Position,
    },
    /// A tool row refers to a provider no row defines.
    #[error(
        "{site}: tool \"{tool}\" refers to unknown provider \"{provider}\" (providers: {})",
        join(known)
    )]
    UnknownProvider {
        /// The tool row's `provider`.
        site: Box<Site>,
        /// The tool row's name.
        tool: String,
        /// The provider asked for.
        provider: String,
        /// The provider rows' names.
        known: Vec<String>,
    },
    /// A tool row refers to a provider row that has `disabled: true`.
    #[error(
        "{site}: tool \"{tool}\" refers to provider \"{provider}\", which is disabled (set disabled: false on its row at {row})"
    )]
    DisabledProvider {
        /// The tool row's `provider`.
        site: Box<Site>,
        /// The tool row's name.
        tool: String,
        /// The provider.
        provider: String,
        /// The provider row's position.
        row: Position,
    },
    /// A tool row sets a field its provider cannot honour (`max_depth` needs `depth_limit`,
    /// `tool_filter` needs `tool_filter`, `persona` needs `persona`), so the registry would
    /// refuse every start through that tool.
    #[error(
        "{site}: tool \"{tool}\" sets {field} but provider \"{provider}\" (kind {kind}) does not support {capability} (remove {field}{})",
        if *capability == Capability::DepthLimit { "; the preset's top-level max_depth still caps every provider" } else { "" }
    )]
    UnsupportedField {
        /// The tool row's field.
        site: Box<Site>,
        /// The tool row's name.
        tool: String,
        /// The provider.
        provider: String,
        /// The provider's kind.
        kind: String,
        /// The field (`max_depth`, `tool_filter`, `persona`).
        field: &'static str,
        /// The capability the field needs.
        capability: Capability,
    },
    /// A tool row's `max_depth` is above the preset's cap; a row can only lower it.
    #[error(
        "{site}: tool \"{tool}\" sets max_depth {max_depth}, above the preset's max_depth {cap} (a tool row can only lower the cap)"
    )]
    DepthAboveCap {
        /// The tool row's `max_depth`.
        site: Box<Site>,
        /// The tool row's name.
        tool: String,
        /// The row's value.
        max_depth: u32,
        /// The preset's cap.
        cap: u32,
    },
    /// A `${VAR}` naming a secret (a variable the preset names as holding a key, or whose name
    /// says it holds a credential) in a provider row's command line (`command`, `args`, … of
    /// [`crate::ARGV_KEYS`]), where every process of the machine could read its value in
    /// `/proc/PID/cmdline`. The variable belongs in the row's environment.
    #[error(
        "{site}: provider \"{provider}\" would put ${{{variable}}} on its command line, where any process of the machine reads it (/proc/PID/cmdline); {variable} holds a secret: pass it in the row's environment instead (its `env` or `pass_env`, or the kind's own key setting)"
    )]
    SecretInArgv {
        /// The argument holding the reference.
        site: Box<Site>,
        /// The row's name.
        provider: String,
        /// The variable.
        variable: String,
    },
    /// Any other rule of the format (an empty name, `scenario` on a non-scripted model, a
    /// missing scenario file…); the message says which.
    #[error("{site}: {message}")]
    Invalid {
        /// Where.
        site: Box<Site>,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A factory refused to build a provider row, or the registry refused it. Returned by
    /// `Preset::build`; carries the seam's error (and its code).
    #[error("{site}: cannot build provider \"{provider}\": {source}")]
    Build {
        /// The provider row.
        site: Box<Site>,
        /// The row's name.
        provider: String,
        /// The factory's or registry's error.
        source: subagent_core::Error,
    },
}

impl Error {
    /// Where the error is, when known.
    pub fn site(&self) -> Option<&Site> {
        match self {
            Self::Io { .. } => None,
            Self::TooLarge { site, .. }
            | Self::Syntax { site, .. }
            | Self::Budget { site, .. }
            | Self::UnsupportedVersion { site, .. }
            | Self::UnsetVariable { site, .. }
            | Self::MalformedVariable { site, .. }
            | Self::UnknownKind { site, .. }
            | Self::InvalidConfig { site, .. }
            | Self::FactorySchema { site, .. }
            | Self::Duplicate { site, .. }
            | Self::UnknownProvider { site, .. }
            | Self::DisabledProvider { site, .. }
            | Self::UnsupportedField { site, .. }
            | Self::DepthAboveCap { site, .. }
            | Self::SecretInArgv { site, .. }
            | Self::Invalid { site, .. }
            | Self::Build { site, .. } => Some(site.as_ref()),
        }
    }

    /// The stable code of the seam: a build error keeps its factory's code, everything else is
    /// `INVALID_ARGUMENTS` (the preset is an argument of the command).
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Build { source, .. } => source.code(),
            _ => ErrorCode::InvalidArguments,
        }
    }

    /// The error as the JSON object surfaces print: `{"code", "message", "file", "line",
    /// "column", "key"}` (location fields only when known).
    pub fn to_json(&self) -> serde_json::Value {
        let mut value =
            serde_json::json!({ "code": self.code().as_str(), "message": self.to_string() });
        if let (Some(site), Some(object)) = (self.site(), value.as_object_mut()) {
            object.insert("file".into(), site.file.display().to_string().into());
            object.insert("line".into(), site.position.line.into());
            object.insert("column".into(), site.position.column.into());
            object.insert("key".into(), site.key.clone().into());
        }
        value
    }
}
