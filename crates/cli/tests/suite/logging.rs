//! Logs: quiet by default; `-v`, `-vv` and `RUST_LOG` show what happens inside, on stderr,
//! never on stdout.

use pretty_assertions::assert_eq;

use super::support::{preset, stderr, stdout, subagent};

const ANSWER: &str = "[offline scripted model] Hello from the subagent.\n";

/// The log lines of stderr (the fmt layer's level names), without their timestamps.
fn log_lines(err: &str) -> Vec<String> {
    err.lines()
        .filter_map(|line| {
            ["ERROR", "WARN", "INFO", "DEBUG", "TRACE"]
                .iter()
                .find_map(|level| line.find(&format!(" {level} ")).map(|at| &line[at + 1..]))
        })
        .map(str::to_owned)
        .collect()
}

/// `subagent GLOBAL… delegate LOCAL… --preset offline.yaml PROMPT`, with `RUST_LOG` if given.
fn delegate(
    home: &std::path::Path,
    global: &[&str],
    local: &[&str],
    rust_log: Option<&str>,
) -> std::process::Output {
    let mut command = subagent(home);
    if let Some(filter) = rust_log {
        command.env("RUST_LOG", filter);
    }
    command
        .args(global)
        .arg("delegate")
        .args(local)
        .arg("--preset")
        .arg(preset("offline.yaml"))
        .arg("Say hello from the subagent")
        .output()
        .unwrap()
}

#[test]
fn quiet_by_default() {
    let home = tempfile::tempdir().unwrap();
    let output = delegate(home.path(), &[], &[], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        (stdout(&output), log_lines(&stderr(&output))),
        (ANSWER.to_owned(), Vec::new())
    );
}

#[test]
fn verbose_shows_debug_logs_on_stderr_and_keeps_stdout_for_the_answer() {
    let home = tempfile::tempdir().unwrap();
    // `-v` goes before or after the subcommand.
    for (global, local) in [(&["-v"][..], &[][..]), (&[][..], &["-v"][..])] {
        let output = delegate(home.path(), global, local, None);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(stdout(&output), ANSWER);
        let logs = log_lines(&stderr(&output));
        assert!(
            logs.iter()
                .any(|line| line.starts_with("DEBUG subagent_cli") && line.contains("started")),
            "{global:?} {local:?}: {logs:#?}"
        );
        assert!(
            logs.iter().all(|line| line.starts_with("DEBUG subagent")),
            "-v: debug logs of our crates only: {logs:#?}"
        );
    }
}

#[test]
fn rust_log_decides_when_set() {
    let home = tempfile::tempdir().unwrap();
    let output = delegate(home.path(), &["-v"], &[], Some("off"));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(log_lines(&stderr(&output)), Vec::<String>::new());

    let output = delegate(home.path(), &[], &[], Some("subagent_cli=debug"));
    assert_eq!(stdout(&output), ANSWER);
    let logs = log_lines(&stderr(&output));
    assert!(
        !logs.is_empty()
            && logs
                .iter()
                .all(|line| line.starts_with("DEBUG subagent_cli")),
        "{logs:#?}"
    );

    let output = delegate(home.path(), &[], &[], Some("subagent_cli=loud"));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.starts_with("warning: RUST_LOG=subagent_cli=loud is not a valid filter ("),
        "{err}"
    );
    assert_eq!(log_lines(&err), Vec::<String>::new());
}
