// Spawning, reading, stopping and killing real children.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use subagent_process::{
    CancellationToken, Error, ProcessSpec, Signal, SignalTarget, StdinMode, StopCause, StopPolicy,
};

use super::helpers::{CWD, Death, alive, group_members, lines};

/// A spec for `program`, under the guardian or not, as the including module says.
fn spec(program: impl Into<std::path::PathBuf>, cwd: impl Into<std::path::PathBuf>) -> ProcessSpec {
    super::helpers::spec(GUARDED, program, cwd)
}

const DEATH: Duration = Duration::from_secs(5);

fn sh(script: &str) -> ProcessSpec {
    spec("sh", CWD).args(["-c", script])
}

/// The pid of `child` (its group's leader) and the pid its first line prints.
async fn leader_and_printed(child: &mut subagent_process::Process) -> (i32, i32) {
    let leader = i32::try_from(child.pid()).unwrap();
    let printed = child.next_line().await.unwrap().unwrap().parse().unwrap();
    (leader, printed)
}

#[tokio::test]
async fn reads_lines_and_reports_the_exit() {
    let mut child = sh("echo one; printf 'two\\r\\nthree'; exit 7")
        .spawn()
        .unwrap();
    assert_eq!(lines(&mut child).await, ["one", "two", "three"]);
    let exit = child.wait().await.unwrap();
    assert_eq!(
        (exit.code(), exit.stopped, exit.killed),
        (Some(7), None, false)
    );
    assert!(!exit.success());
}

#[tokio::test]
async fn lines_are_text_with_invalid_utf8_replaced() {
    let mut child = sh(r"printf 'caf\303\251\nbad \377 byte\n'")
        .spawn()
        .unwrap();
    assert_eq!(lines(&mut child).await, ["café", "bad \u{fffd} byte"]);
    assert!(child.wait().await.unwrap().success());
}

#[tokio::test]
async fn stdin_is_null_unless_piped() {
    // `cat` with /dev/null ends at once instead of waiting for input.
    let mut child = spec("cat", CWD).spawn().unwrap();
    assert_eq!(lines(&mut child).await, Vec::<String>::new());
    assert!(child.wait().await.unwrap().success());

    let mut child = spec("cat", CWD).stdin(StdinMode::Piped).spawn().unwrap();
    child.write_line("{\"hello\":1}").await.unwrap();
    assert_eq!(
        child.next_line().await.unwrap().as_deref(),
        Some("{\"hello\":1}")
    );
    child.close_stdin();
    assert_eq!(child.next_line().await.unwrap(), None);
    assert!(child.wait().await.unwrap().success());
}

#[tokio::test]
async fn runs_in_the_given_cwd_and_refuses_a_relative_one() {
    let dir = std::env::temp_dir().canonicalize().unwrap();
    let mut child = spec("pwd", &dir).spawn().unwrap();
    assert_eq!(lines(&mut child).await, [dir.display().to_string()]);
    child.wait().await.unwrap();

    for cwd in ["", "relative/dir", "/no/such/dir"] {
        let err = spec("pwd", cwd).spawn().unwrap_err();
        assert!(matches!(err, Error::InvalidCwd { .. }), "{cwd}: {err}");
    }
}

#[tokio::test]
async fn a_missing_program_names_what_was_searched() {
    let err = spec("no-such-cli-7f3a", CWD)
        .env("PATH", "/nonexistent/a:/nonexistent/b")
        .spawn()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no-such-cli-7f3a was not found on PATH (searched /nonexistent/a:/nonexistent/b)"
    );
    let err = spec("/nonexistent/bin/claude", CWD).spawn().unwrap_err();
    assert_eq!(err.to_string(), "/nonexistent/bin/claude was not found");
}

#[tokio::test]
async fn the_environment_is_scrubbed_then_configured() {
    let mut child = spec("env", CWD)
        .base_env([
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/x"),
            ("ANTHROPIC_API_KEY", "sk-ant-real"),
            ("OPENAI_API_KEY", "sk-real"),
            ("CODEX_HOME", "/root/.codex"),
            ("CLAUDE_CONFIG_DIR", "/root/.claude"),
            ("AWS_SECRET_ACCESS_KEY", "aws"),
            ("GITHUB_TOKEN", "ghp"),
            ("NPM_TOKEN", "npm"),
            ("MY_SERVICE_API_KEY", "k"),
            ("CLAUDECODE", "1"),
        ])
        .pass_env("GITHUB_TOKEN")
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("EXTRA", "yes")
        .spawn()
        .unwrap();
    let mut env = lines(&mut child).await;
    env.sort();
    assert_eq!(
        env,
        [
            "ANTHROPIC_API_KEY=dummy",
            "EXTRA=yes",
            "GITHUB_TOKEN=ghp",
            "HOME=/home/x",
            "PATH=/usr/bin:/bin",
        ]
    );
    child.wait().await.unwrap();
}

#[tokio::test]
async fn stderr_tail_is_bounded_and_kept() {
    let mut child = sh("i=0; while [ $i -lt 2000 ]; do i=$((i+1)); echo line-$i >&2; done; exit 3")
        .stderr_tail_bytes(1024)
        .spawn()
        .unwrap();
    assert_eq!(lines(&mut child).await, Vec::<String>::new());
    let exit = child.wait().await.unwrap();
    assert_eq!(exit.code(), Some(3));
    assert!(exit.stderr_tail.len() <= 1024, "{}", exit.stderr_tail.len());
    assert!(exit.stderr_tail.ends_with("line-1999\nline-2000\n"));
    assert!(!exit.stderr_tail.contains("line-1\n"));
}

#[tokio::test]
async fn a_ten_megabyte_line_is_an_error_not_an_allocation() {
    // 10 MiB of 'a' without a newline, then the child would linger.
    let mut child = sh("head -c 10485760 /dev/zero | tr '\\0' a; exec sleep 300")
        .stop_policy(StopPolicy::default().grace(Duration::from_secs(2)))
        .spawn()
        .unwrap();
    let pid = i32::try_from(child.pid()).unwrap();
    let err = child.next_line().await.unwrap_err();
    assert!(
        matches!(err, Error::LineTooLong { limit } if limit == subagent_process::DEFAULT_MAX_LINE_BYTES),
        "{err}"
    );
    assert_eq!(child.next_line().await.unwrap(), None);
    let exit = child.wait().await.unwrap();
    assert_eq!(exit.stopped, Some(StopCause::LineTooLong));
    assert!(group_members(pid).is_empty());
}

#[tokio::test]
async fn idle_timeout_stops_a_silent_child() {
    let started = Instant::now();
    let mut child = sh("echo hi; exec sleep 300")
        .idle_timeout(Some(Duration::from_millis(300)))
        .spawn()
        .unwrap();
    assert_eq!(lines(&mut child).await, ["hi"]);
    let exit = child.wait().await.unwrap();
    assert_eq!(exit.stopped, Some(StopCause::IdleTimeout));
    assert_eq!(exit.signal(), Some(Signal::Terminate.number()));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn overall_timeout_stops_a_chatty_child() {
    let mut child = sh("while :; do echo tick; sleep 0.05; done")
        .idle_timeout(Some(Duration::from_secs(30)))
        .overall_timeout(Some(Duration::from_millis(400)))
        .spawn()
        .unwrap();
    let ticks = lines(&mut child).await;
    assert!(!ticks.is_empty());
    let exit = child.wait().await.unwrap();
    assert_eq!(exit.stopped, Some(StopCause::OverallTimeout));
}

#[tokio::test]
async fn the_polite_signal_lets_the_child_report_before_it_exits() {
    // Like `claude` on SIGINT: it prints a final line and exits 0.
    let cancel = CancellationToken::new();
    let mut child =
        sh("trap 'echo interrupted; exit 0' INT; echo ready; while :; do sleep 0.05; done")
            .stop_policy(StopPolicy::new(Signal::Interrupt).target(SignalTarget::Leader))
            .cancel(cancel.clone())
            .spawn()
            .unwrap();
    assert_eq!(child.next_line().await.unwrap().as_deref(), Some("ready"));
    cancel.cancel();
    assert_eq!(lines(&mut child).await, ["interrupted"]);
    let exit = child.wait().await.unwrap();
    assert_eq!(
        (exit.code(), exit.stopped, exit.killed),
        (Some(0), Some(StopCause::Cancelled), false)
    );
}

#[tokio::test]
async fn a_child_ignoring_the_polite_signal_is_killed_after_the_grace() {
    let cancel = CancellationToken::new();
    let mut child = sh("trap '' TERM; echo ready; sleep 300")
        .stop_policy(StopPolicy::default().grace(Duration::from_millis(300)))
        .cancel(cancel.clone())
        .spawn()
        .unwrap();
    let pid = i32::try_from(child.pid()).unwrap();
    assert_eq!(child.next_line().await.unwrap().as_deref(), Some("ready"));
    cancel.cancel();
    assert_eq!(lines(&mut child).await, Vec::<String>::new());
    let exit = child.wait().await.unwrap();
    assert_eq!(exit.stopped, Some(StopCause::Cancelled));
    assert!(exit.killed);
    assert_eq!(exit.signal(), Some(Signal::Kill.number()));
    assert!(group_members(pid).is_empty());
}

#[tokio::test]
async fn cancel_kills_the_whole_tree_grandchildren_included() {
    // A grandchild in the group, and one that left it (its own session) and keeps stdout open.
    let cancel = CancellationToken::new();
    let mut child = sh("sleep 300 & echo $!; setsid sleep 301 & echo $!; echo ready; wait")
        .stop_policy(StopPolicy::default().grace(Duration::from_millis(500)))
        .cancel(cancel.clone())
        .spawn()
        .unwrap();
    let (leader, in_group) = leader_and_printed(&mut child).await;
    let escaped: i32 = child.next_line().await.unwrap().unwrap().parse().unwrap();
    assert_eq!(child.next_line().await.unwrap().as_deref(), Some("ready"));
    assert!(alive(in_group) && alive(escaped));
    let deaths = [leader, in_group, escaped].map(Death::watch);

    cancel.cancel();
    assert_eq!(lines(&mut child).await, Vec::<String>::new());
    let exit = child.wait().await.unwrap();
    assert_eq!(exit.stopped, Some(StopCause::Cancelled));
    for death in deaths {
        death.wait(DEATH).await;
    }
    assert!(!alive(escaped));
    assert!(group_members(leader).is_empty());
}

#[tokio::test]
async fn dropping_the_process_kills_its_tree() {
    let mut child = sh("sleep 300 & echo $!; wait").spawn().unwrap();
    let (leader, grandchild) = leader_and_printed(&mut child).await;
    let deaths = [leader, grandchild].map(Death::watch);
    drop(child);
    for death in deaths {
        death.wait(DEATH).await;
    }
    assert!(group_members(leader).is_empty());
}

#[tokio::test]
async fn stragglers_in_the_group_die_when_the_child_exits() {
    let mut child = sh("sleep 300 >/dev/null 2>&1 & echo $!").spawn().unwrap();
    let (leader, straggler) = leader_and_printed(&mut child).await;
    let death = Death::watch(straggler);
    assert_eq!(child.next_line().await.unwrap(), None);
    assert!(child.wait().await.unwrap().success());
    death.wait(DEATH).await;
    assert!(group_members(leader).is_empty());
}

#[tokio::test]
async fn the_end_of_stdout_comes_when_the_child_exits_though_a_grandchild_holds_the_pipe() {
    // The grandchild inherits stdout and outlives the child: without a bound, reading waits for
    // it (here 300 s; with a CLI's background tool, forever).
    let mut child = sh("sleep 300 & echo $!; echo last").spawn().unwrap();
    let (leader, grandchild) = leader_and_printed(&mut child).await;
    let death = Death::watch(grandchild);
    let rest = tokio::time::timeout(Duration::from_secs(20), lines(&mut child))
        .await
        .expect("reading stdout hung after the child exited");
    assert_eq!(rest, ["last"]);
    let exit = child.wait().await.unwrap();
    assert_eq!(
        (exit.code(), exit.stopped, exit.killed),
        (Some(0), None, false)
    );
    death.wait(DEATH).await;
    assert!(group_members(leader).is_empty());
}

#[tokio::test]
async fn lines_written_just_before_the_exit_are_all_read() {
    // Many lines still in the pipe when the child is already gone: none is lost.
    let mut child = sh("sleep 300 & i=0; while [ $i -lt 2000 ]; do echo line-$i; i=$((i+1)); done")
        .spawn()
        .unwrap();
    let pid = child.pid();
    // Let the child finish writing (and exit) before reading anything.
    Death::watch(i32::try_from(pid).unwrap()).wait(DEATH).await;
    let all = tokio::time::timeout(Duration::from_secs(20), lines(&mut child))
        .await
        .expect("reading stdout hung after the child exited");
    let expected: Vec<String> = (0..2000).map(|i| format!("line-{i}")).collect();
    assert_eq!(all, expected);
    assert!(child.wait().await.unwrap().success());
}

#[tokio::test]
async fn the_largest_timeouts_are_no_timeouts_not_a_panic() {
    // A model may ask the bash tool for any timeout: an `Instant` plus it must not overflow.
    let mut child = sh("echo one")
        .overall_timeout(Some(Duration::MAX))
        .idle_timeout(Some(Duration::MAX))
        .stop_policy(StopPolicy::default().grace(Duration::MAX))
        .spawn()
        .unwrap();
    assert_eq!(lines(&mut child).await, ["one"]);
    assert!(child.wait().await.unwrap().success());
}
