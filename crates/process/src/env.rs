//! The child's environment: ours, scrubbed of other products' secrets and of the configured
//! [`Secrets`], plus configured variables; and the redaction of those secrets from output.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

/// Variable names removed exactly (besides the prefixes and suffixes below).
pub const SCRUBBED_NAMES: &[&str] = &[
    // Set inside a running Claude Code session; a nested `claude` refuses to start with it.
    "CLAUDECODE",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITLAB_TOKEN",
    "NPM_TOKEN",
    "NODE_AUTH_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_API_KEY",
    "DOCKER_AUTH_CONFIG",
    "SSH_AUTH_SOCK",
];

/// Name prefixes removed: the model products and cloud credentials.
pub const SCRUBBED_PREFIXES: &[&str] = &[
    "ANTHROPIC_",
    "CLAUDE_",
    "OPENAI_",
    "CODEX_",
    "AZURE_OPENAI_",
    "AWS_",
    "GCP_",
    "GCLOUD_",
    "CLOUDSDK_",
    "VERTEX_",
    "GEMINI_",
    "MISTRAL_",
    "GROQ_",
    "OPENROUTER_",
    "DEEPSEEK_",
    "XAI_",
    "COHERE_",
    "TOGETHER_",
];

/// Name suffixes removed, whatever the prefix: anything that looks like a credential.
pub const SCRUBBED_SUFFIXES: &[&str] = &[
    "_API_KEY",
    "_APIKEY",
    "_TOKEN",
    "_SECRET",
    "_SECRET_KEY",
    "_ACCESS_KEY",
    "_ACCESS_KEY_ID",
    "_PASSWORD",
    "_CREDENTIALS",
    "_AUTH",
];

/// Whether a variable of ours is withheld from children unless passed explicitly: exact names in
/// [`SCRUBBED_NAMES`], prefixes in [`SCRUBBED_PREFIXES`], suffixes in [`SCRUBBED_SUFFIXES`]
/// (compared case-insensitively).
pub fn is_scrubbed(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        // A name that is not UTF-8 is nobody's API key, but it is also nothing a CLI needs.
        return true;
    };
    let upper = name.to_ascii_uppercase();
    is_credential_name(&upper) || SCRUBBED_PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// Whether a variable's name says it holds a credential: an exact name in [`SCRUBBED_NAMES`] or
/// a suffix in [`SCRUBBED_SUFFIXES`] (compared case-insensitively). The part of
/// [`is_scrubbed`] that is about secrets, not products (an `ANTHROPIC_BASE_URL` is scrubbed, and
/// no secret): what a preset refuses to put on a child's command line.
pub fn is_credential_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SCRUBBED_NAMES.contains(&upper.as_str()) || SCRUBBED_SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// Exact names of model products' variables (withheld under [`Scrub::ModelKeys`]).
pub const MODEL_KEY_NAMES: &[&str] = &["CLAUDECODE", "GOOGLE_API_KEY"];

/// Name prefixes of model products' variables (withheld under [`Scrub::ModelKeys`]): the
/// agent's own model keys and endpoints, and every other model product's.
pub const MODEL_KEY_PREFIXES: &[&str] = &[
    "ANTHROPIC_",
    "CLAUDE_",
    "OPENAI_",
    "CODEX_",
    "AZURE_OPENAI_",
    "VERTEX_",
    "GEMINI_",
    "MISTRAL_",
    "GROQ_",
    "OPENROUTER_",
    "DEEPSEEK_",
    "XAI_",
    "COHERE_",
    "TOGETHER_",
];

/// Which of our variables a child does not inherit (unless passed explicitly).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scrub {
    /// Everything [`is_scrubbed`] names: model products' keys, cloud credentials and anything
    /// that looks like a token. For product CLIs, which get only what they are configured with.
    #[default]
    Credentials,
    /// Only the model products' variables ([`is_model_key`]). For a command run on the user's
    /// behalf in the user's own project (the runtime's bash tool): it sees the user's
    /// environment (their `GITHUB_TOKEN`, `SSH_AUTH_SOCK`, cloud profile…) as their shell
    /// would, but not the agent's model keys, which a model-written command could leak.
    ModelKeys,
    /// Nothing is withheld.
    Nothing,
}

impl Scrub {
    /// Whether this policy withholds `name`.
    pub fn withholds(self, name: &OsStr) -> bool {
        match self {
            Self::Credentials => is_scrubbed(name),
            Self::ModelKeys => is_model_key(name),
            Self::Nothing => false,
        }
    }
}

/// Whether a variable belongs to a model product: exact names in [`MODEL_KEY_NAMES`], prefixes
/// in [`MODEL_KEY_PREFIXES`] (compared case-insensitively). Names that are not UTF-8 are kept.
pub fn is_model_key(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let upper = name.to_ascii_uppercase();
    MODEL_KEY_NAMES.contains(&upper.as_str())
        || MODEL_KEY_PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// The configured secrets live in `subagent_session` (so that the provider contract, which
/// depends on nothing of ours but that crate, can carry them); the environment code here
/// withholds them.
pub use subagent_session::{MIN_SECRET_VALUE_LEN, Secrets};

/// Builds a child's environment: `base` minus the scrubbed names (except those in `pass`), then
/// `set` on top (set variables always win, scrubbed or not). Sorted by name.
pub fn child_env<I>(
    base: I,
    pass: &[OsString],
    set: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    child_env_with(Scrub::Credentials, base, pass, set)
}

/// [`child_env`] under another [`Scrub`] policy.
pub fn child_env_with<I>(
    scrub: Scrub,
    base: I,
    pass: &[OsString],
    set: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    child_env_withholding(scrub, &Secrets::new(), base, pass, set)
}

/// [`child_env_with`] also withholding `secrets` (by name and by value), except variables in
/// `pass`.
pub fn child_env_withholding<I>(
    scrub: Scrub,
    secrets: &Secrets,
    base: I,
    pass: &[OsString],
    set: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut env: BTreeMap<OsString, OsString> = base
        .into_iter()
        .filter(|(name, value)| {
            !(scrub.withholds(name) || secrets.withholds(name, value))
                || pass.iter().any(|p| p == name)
        })
        .collect();
    for (name, value) in set {
        env.insert(name.clone(), value.clone());
    }
    env.into_iter().collect()
}

#[cfg(test)]
mod tests;
