//! The child's environment: ours, scrubbed of other products' secrets, plus configured variables.

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
    SCRUBBED_NAMES.contains(&upper.as_str())
        || SCRUBBED_PREFIXES.iter().any(|p| upper.starts_with(p))
        || SCRUBBED_SUFFIXES.iter().any(|s| upper.ends_with(s))
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
    let mut env: BTreeMap<OsString, OsString> = base
        .into_iter()
        .filter(|(name, _)| !is_scrubbed(name) || pass.iter().any(|p| p == name))
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
