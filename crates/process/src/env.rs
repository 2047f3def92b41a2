//! The child's environment: ours, scrubbed of other products' secrets and of the configured
//! [`Secrets`], plus configured variables; and the redaction of those secrets from output.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::sync::Arc;

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

/// The shortest secret value matched by value: a variable holding it under another name is
/// withheld, and output showing it is redacted. A shorter value (a placeholder like `dummy`)
/// would match ordinary text; such a secret is withheld by name only.
pub const MIN_SECRET_VALUE_LEN: usize = 8;

/// The configured secrets: the variables the configuration names as holding keys (a preset's
/// `api_key_env`, a provider's key variable) and the values they hold. A child spawned with
/// [`crate::ProcessSpec::withhold`] inherits none of these variables, nor any other variable
/// holding one of their values, unless it is passed or set explicitly; [`Secrets::redact`]
/// replaces the values in text with `[REDACTED:NAME]`.
///
/// Cloning shares the set. `Debug` shows the names only, never a value.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Longest value first, so a value containing another is redacted whole.
    entries: Arc<[Secret]>,
}

#[derive(Clone)]
struct Secret {
    name: String,
    /// `None` when unset or shorter than [`MIN_SECRET_VALUE_LEN`].
    value: Option<String>,
    /// The value as it appears inside a JSON string, when that differs.
    json_value: Option<String>,
    marker: String,
}

impl Secrets {
    /// No secrets.
    pub fn new() -> Self {
        Self::default()
    }

    /// The variables `names` (repeats and empty names ignored), their values read through
    /// `lookup` (the process environment in a binary, a closure in tests).
    pub fn from_names<I, S>(names: I, lookup: impl Fn(&str) -> Option<String>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut seen: Vec<String> = Vec::new();
        let mut pairs = Vec::new();
        for name in names {
            let name = name.as_ref();
            if name.is_empty() || seen.iter().any(|s| s == name) {
                continue;
            }
            seen.push(name.to_owned());
            pairs.push((name.to_owned(), lookup(name)));
        }
        Self::build(pairs)
    }

    fn build(pairs: Vec<(String, Option<String>)>) -> Self {
        let mut entries: Vec<Secret> = pairs
            .into_iter()
            .map(|(name, value)| {
                let value = value.filter(|v| v.len() >= MIN_SECRET_VALUE_LEN);
                let json_value = value
                    .as_deref()
                    .map(json_escaped)
                    .filter(|escaped| Some(escaped) != value.as_ref());
                let marker = format!(
                    "[REDACTED:{}]",
                    name.chars()
                        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                        .collect::<String>()
                );
                Secret {
                    name,
                    value,
                    json_value,
                    marker,
                }
            })
            .collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.value.as_ref().map_or(0, String::len)));
        Self {
            entries: entries.into(),
        }
    }

    /// Both sets (a name in both is kept once, with this set's value).
    #[must_use]
    pub fn union(&self, other: &Self) -> Self {
        if other.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return other.clone();
        }
        let mut pairs: Vec<(String, Option<String>)> = Vec::new();
        for entry in self.entries.iter().chain(other.entries.iter()) {
            if !pairs.iter().any(|(name, _)| *name == entry.name) {
                pairs.push((entry.name.clone(), entry.value.clone()));
            }
        }
        Self::build(pairs)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The variables' names, longest value first.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_str())
    }

    /// Whether a variable `name=value` of ours is withheld: its name is a secret's (compared
    /// case-insensitively), or its value is a secret's value.
    pub fn withholds(&self, name: &OsStr, value: &OsStr) -> bool {
        self.entries.iter().any(|e| {
            name.to_str()
                .is_some_and(|name| name.eq_ignore_ascii_case(&e.name))
                || e.value
                    .as_deref()
                    .is_some_and(|v| v.as_bytes() == value.as_encoded_bytes())
        })
    }

    /// `text` with every secret value (also as escaped inside a JSON string) replaced by
    /// `[REDACTED:NAME]`. Borrowed when nothing was found.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut text = Cow::Borrowed(text);
        for entry in self.entries.iter() {
            for value in [&entry.value, &entry.json_value].into_iter().flatten() {
                if text.contains(value.as_str()) {
                    text = Cow::Owned(text.replace(value.as_str(), &entry.marker));
                }
            }
        }
        text
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Secrets")
            .field(&self.names().collect::<Vec<_>>())
            .finish()
    }
}

/// `value` as written inside a JSON string (quotes, backslashes and control characters
/// escaped the way serde_json writes them).
fn json_escaped(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

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
mod tests {
    use super::*;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn scrubs_products_keys_and_token_patterns() {
        for name in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_API_KEY",
            "CODEX_HOME",
            "CLAUDE_CONFIG_DIR",
            "CLAUDECODE",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_PROFILE",
            "GITHUB_TOKEN",
            "MY_SERVICE_API_KEY",
            "some_token",
            "DB_PASSWORD",
        ] {
            assert!(is_scrubbed(OsStr::new(name)), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "TERM",
            "TMPDIR",
            "USER",
            "TOKENIZERS_PARALLELISM",
        ] {
            assert!(!is_scrubbed(OsStr::new(name)), "{name}");
        }
    }

    #[test]
    fn model_keys_policy_keeps_the_users_own_credentials() {
        let env = child_env_with(
            Scrub::ModelKeys,
            os(&[
                ("PATH", "/bin"),
                ("GITHUB_TOKEN", "gh"),
                ("SSH_AUTH_SOCK", "/tmp/agent"),
                ("AWS_PROFILE", "dev"),
                ("OPENAI_API_KEY", "sk"),
                ("anthropic_api_key", "real"),
                ("CLAUDECODE", "1"),
                ("GOOGLE_API_KEY", "g"),
            ]),
            &[],
            &[],
        );
        assert_eq!(
            env,
            os(&[
                ("AWS_PROFILE", "dev"),
                ("GITHUB_TOKEN", "gh"),
                ("PATH", "/bin"),
                ("SSH_AUTH_SOCK", "/tmp/agent"),
            ])
        );
        let everything = child_env_with(Scrub::Nothing, os(&[("OPENAI_API_KEY", "sk")]), &[], &[]);
        assert_eq!(everything, os(&[("OPENAI_API_KEY", "sk")]));
    }

    fn secrets() -> Secrets {
        let values = [
            ("ADV_MODEL_KEY", "adv-secret-value-0123456789"),
            ("SHORT_KEY", "dummy"),
            ("LONGER_KEY", "adv-secret-value-0123456789-and-more"),
            ("QUOTED_KEY", "with\"quote\\and-backslash"),
        ];
        Secrets::from_names(
            [
                "ADV_MODEL_KEY",
                "SHORT_KEY",
                "LONGER_KEY",
                "QUOTED_KEY",
                "UNSET_KEY",
                "ADV_MODEL_KEY",
                "",
            ],
            |name| {
                values
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            },
        )
    }

    #[test]
    fn configured_secrets_are_withheld_by_name_and_by_value_unless_passed_or_set() {
        let env = child_env_withholding(
            Scrub::ModelKeys,
            &secrets(),
            os(&[
                ("PATH", "/bin"),
                ("ADV_MODEL_KEY", "adv-secret-value-0123456789"),
                ("adv_model_key", "something else"),
                ("SAME_VALUE_COPY", "adv-secret-value-0123456789"),
                ("SHORT_KEY", "dummy"),
                ("ALSO_DUMMY", "dummy"),
                ("UNSET_KEY", "set after all"),
                ("PASSED_COPY", "adv-secret-value-0123456789"),
                ("PREFIX_ONLY", "adv-secret-value"),
                ("GITHUB_TOKEN", "gh"),
            ]),
            &[OsString::from("PASSED_COPY")],
            &os(&[("LONGER_KEY", "set explicitly")]),
        );
        assert_eq!(
            env,
            os(&[
                // A short value is withheld by name only.
                ("ALSO_DUMMY", "dummy"),
                ("GITHUB_TOKEN", "gh"),
                ("LONGER_KEY", "set explicitly"),
                ("PASSED_COPY", "adv-secret-value-0123456789"),
                ("PATH", "/bin"),
                ("PREFIX_ONLY", "adv-secret-value"),
            ])
        );
        // Without secrets nothing changes.
        assert_eq!(
            child_env_with(Scrub::ModelKeys, os(&[("ADV_MODEL_KEY", "v")]), &[], &[]),
            os(&[("ADV_MODEL_KEY", "v")])
        );
    }

    #[test]
    fn redaction_replaces_values_longest_first_and_in_json_form() {
        let secrets = secrets();
        assert_eq!(
            secrets.redact(
                "k=adv-secret-value-0123456789, long=adv-secret-value-0123456789-and-more, dummy stays"
            ),
            "k=[REDACTED:ADV_MODEL_KEY], long=[REDACTED:LONGER_KEY], dummy stays"
        );
        assert_eq!(
            secrets.redact(r#"{"raw":"with\"quote\\and-backslash"} with"quote\and-backslash"#),
            r#"{"raw":"[REDACTED:QUOTED_KEY]"} [REDACTED:QUOTED_KEY]"#
        );
        assert!(matches!(
            secrets.redact("nothing here"),
            Cow::Borrowed("nothing here")
        ));
        assert_eq!(
            Secrets::new().redact("adv-secret-value-0123456789"),
            "adv-secret-value-0123456789"
        );
    }

    #[test]
    fn debug_shows_names_never_values() {
        let secrets = secrets();
        assert_eq!(
            format!("{secrets:?}"),
            r#"Secrets(["LONGER_KEY", "ADV_MODEL_KEY", "QUOTED_KEY", "SHORT_KEY", "UNSET_KEY"])"#
        );
        let other = Secrets::from_names(["OTHER_KEY", "ADV_MODEL_KEY"], |_| {
            Some("another-secret-value".to_owned())
        });
        let both = secrets.union(&other);
        assert_eq!(
            format!("{both:?}"),
            r#"Secrets(["LONGER_KEY", "ADV_MODEL_KEY", "QUOTED_KEY", "OTHER_KEY", "SHORT_KEY", "UNSET_KEY"])"#
        );
        // The first set's value wins for a name in both.
        assert_eq!(
            both.redact("adv-secret-value-0123456789 another-secret-value"),
            "[REDACTED:ADV_MODEL_KEY] [REDACTED:OTHER_KEY]"
        );
    }

    #[test]
    fn pass_and_set_win() {
        let env = child_env(
            os(&[
                ("PATH", "/bin"),
                ("GITHUB_TOKEN", "gh"),
                ("OPENAI_API_KEY", "sk"),
                ("ANTHROPIC_API_KEY", "real"),
            ]),
            &[OsString::from("GITHUB_TOKEN")],
            &os(&[("ANTHROPIC_API_KEY", "dummy"), ("EXTRA", "1")]),
        );
        assert_eq!(
            env,
            os(&[
                ("ANTHROPIC_API_KEY", "dummy"),
                ("EXTRA", "1"),
                ("GITHUB_TOKEN", "gh"),
                ("PATH", "/bin"),
            ])
        );
    }
}
