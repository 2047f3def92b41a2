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
    // The names configured: the four set, then one unset, a repeat and an empty one.
    let names = values.map(|(name, _)| name);
    let names = names.into_iter().chain(["UNSET_KEY", "ADV_MODEL_KEY", ""]);
    let lookup = |name: &str| {
        values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    };
    Secrets::from_names(names, lookup)
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
