use pretty_assertions::assert_eq;

use super::*;

fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs
        .iter()
        .map(|(name, value)| (OsString::from(name), OsString::from(value)))
        .collect()
}

#[test]
fn secret_names_by_suffix_and_exact_name() {
    for name in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "FAKE_KEY",
        "aws_secret_access_key",
        "GITHUB_TOKEN",
        "A2A_TOKEN",
        "CLIENT_SECRET",
        "DB_PASSWORD",
        "GPG_PASSPHRASE",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "NPM_CONFIG__AUTH",
        "PGPASSWORD",
        "MY_APIKEY",
    ] {
        assert!(is_secret_name(OsStr::new(name)), "{name}");
    }
    for name in [
        "PATH",
        "HOME",
        "ANTHROPIC_BASE_URL",
        "SSH_AUTH_SOCK",
        "TOKENIZERS_PARALLELISM",
        "KEYBOARD",
        "_KEY",
        "LLM_ACCESS",
        "AWS_ACCESS_KEY_ID",
    ] {
        assert!(!is_secret_name(OsStr::new(name)), "{name}");
    }
}

#[test]
fn flags_ending_in_env_name_variables() {
    let args = [
        "serve",
        "--token-env",
        "SERVE_BEARER",
        "--password-env=NATS_PASS",
        "--preset",
        "p.yaml",
        "--env",
        "--x-env=",
        "--",
        "--token-env",
        "AFTER_DASHES",
    ]
    .map(OsString::from);
    assert_eq!(
        flagged_names(args),
        [
            OsString::from("SERVE_BEARER"),
            OsString::from("NATS_PASS"),
            OsString::new()
        ]
    );
}

#[test]
fn selects_the_named_variables_and_copies_of_their_values() {
    let vars = os(&[
        ("PATH", "/bin"),
        ("ANTHROPIC_API_KEY", "sk-ant-0123456789"),
        ("COPY", "sk-ant-0123456789"),
        ("SHORT_KEY", "dummy"),
        ("ALSO_DUMMY", "dummy"),
        ("EMPTY_TOKEN", ""),
        ("OLD_COPY", "kept-before-0123"),
        ("EARLIER_KEY", "kept-before-0123"),
        (HANDOFF_VAR, "3:4:1"),
    ]);
    let kept = os(&[("EARLIER_KEY", "kept-before-0123")]);
    assert_eq!(
        select(vars, is_secret_name, &kept),
        os(&[
            ("ANTHROPIC_API_KEY", "sk-ant-0123456789"),
            ("SHORT_KEY", "dummy"),
            ("COPY", "sk-ant-0123456789"),
            ("OLD_COPY", "kept-before-0123"),
        ])
    );
    assert_eq!(select(os(&[("PATH", "/bin")]), is_secret_name, &[]), []);
}

#[test]
fn nothing_is_withdrawn_in_a_host_that_did_not_ask() {
    // `PATH` is in this test's environment; without `withdraw()` first, nothing happens
    // (were it withdrawn, the test binary would start again).
    assert!(!ENABLED.load(Ordering::Relaxed));
    withdraw_also(["PATH"]).unwrap();
}

#[test]
fn a_host_started_too_often_keeps_its_secrets_where_they_are() {
    // No third start, whatever is still in the block: the variable stays there, is kept
    // (read either way) and the error says so.
    GENERATION.store(MAX_GENERATIONS, Ordering::Relaxed);
    let path = std::env::var_os("PATH").unwrap();
    let error = withdraw_where(|name| name == "PATH").unwrap_err();
    assert_eq!(
        error.to_string(),
        "started 2 times already: the secrets stay in the environment block"
    );
    assert_eq!(
        subagent_session::env::var_os(OsStr::new("PATH")),
        Some(path)
    );
    assert!(subagent_session::env::is_kept("PATH"));
    // Kept already, it is not tried again (not even as a copy of its own value).
    withdraw_where(|name| name == "PATH").unwrap();
}

#[test]
fn the_handover_round_trips_any_bytes() {
    let vars = vec![
        (OsString::from("A_KEY"), OsString::from("value=with=equals")),
        (OsString::from("EMPTY"), OsString::new()),
        (
            OsString::from_vec(vec![b'N', 0xff]),
            OsString::from_vec(vec![0xfe, b'\n', b'x']),
        ),
    ];
    assert_eq!(decode(&encode(&vars)), Some(vars));
    assert_eq!(decode(&[]), Some(Vec::new()));
    assert_eq!(decode(&[1, 0, 0]), None);
    assert_eq!(decode(&[5, 0, 0, 0, b'a']), None);
    assert_eq!(
        parse_handoff(OsStr::new("7:123:2:sub:agent")),
        Some((7, 123, 2, "sub:agent"))
    );
    assert_eq!(parse_handoff(OsStr::new("7:123:2:")), Some((7, 123, 2, "")));
    for bad in ["", "7:123", "7:123:1", "1:123:1:x", "x:1:1:x", "7:1:x:x"] {
        assert_eq!(parse_handoff(OsStr::new(bad)), None, "{bad}");
    }
}

#[test]
fn a_pipe_carries_the_values_to_a_new_reader() {
    let vars = os(&[("PIPE_TEST_KEY", "pipe-value-0123")]);
    let pipe = handover(&vars).unwrap();
    let flags = rustix::io::fcntl_getfd(&pipe).unwrap();
    assert!(!flags.contains(rustix::io::FdFlags::CLOEXEC));
    let mut again = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(format!("/proc/self/fd/{}", pipe.as_raw_fd()))
        .unwrap();
    let mut bytes = Vec::new();
    again.read_to_end(&mut bytes).unwrap();
    assert_eq!(decode(&bytes), Some(vars));
    // Emptied: the inherited end has nothing more to give.
    let mut rest = Vec::new();
    (&pipe).read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
}
