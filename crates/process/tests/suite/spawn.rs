//! How every child is started (`clone(CLONE_VM | CLONE_VFORK)`, not `std`'s fork): it gets
//! what a `std` child gets (signals, stdio even when the host has no stdin), a failed exec is an
//! error that leaves no child, and concurrent spawns do not trip over each other. The
//! parent-death signal itself is `pdeathsig.rs`; everything else a child does is `lifecycle.rs`
//! and `capture.rs`, run directly and under the guardian.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;

use subagent_process::{ProcessSpec, Signal, StdinMode};

use super::helpers::{CWD, helper_test};

/// A line of `/proc/<pid>/status` (`SigBlk`, `SigIgn`, `SigCgt`…): a hex mask.
fn status_mask(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .unwrap();
    u64::from_str_radix(line.trim(), 16).unwrap()
}

/// The children of this process (every thread's): under `cargo test` other tests' too, so a
/// test that asserts on them runs in a process of its own
/// (`subagent_test_support::alone::in_own_process`).
fn my_children() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[tokio::test]
async fn a_child_starts_with_the_signals_a_std_child_gets() {
    // This test process ignores SIGPIPE (every Rust program does) and has handlers installed by
    // tokio's runtime: the child must start with neither, and nothing blocked.
    let sigpipe = 1u64 << (13 - 1);
    // glibc's own signals (32 and 33, for thread cancellation and set*id) aside: its
    // `posix_spawn` leaves them ignored in the child, and no other process sends them.
    let glibc = (1u64 << 31) | (1u64 << 32);
    assert_ne!(status_mask(std::process::id(), "SigIgn") & sigpipe, 0);
    let masks_of = |pid: u32| {
        [
            status_mask(pid, "SigBlk") & !glibc,
            status_mask(pid, "SigIgn") & !glibc,
            status_mask(pid, "SigCgt") & !glibc,
        ]
    };
    let mut masks = Vec::new();
    // With and without a parent-death signal, through the owner's clone.
    for signal in [Some(Signal::Kill), None] {
        let mut child = ProcessSpec::new("sleep", CWD)
            .arg("30")
            .guard(None)
            .parent_death_signal(signal)
            .spawn()
            .unwrap();
        masks.push(masks_of(child.pid()));
        child.kill();
        child.wait().await.unwrap();
    }
    // The reference: `std`'s own spawn (`posix_spawn`).
    let mut reference = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    masks.push(masks_of(reference.id()));
    reference.kill().unwrap();
    reference.wait().unwrap();
    assert_eq!(masks[0], masks[2]);
    assert_eq!(masks[1], masks[2]);
    assert_eq!(masks[0][0], 0, "no signal blocked");
    assert_eq!(masks[0][1] & sigpipe, 0, "SIGPIPE not ignored");
}

#[tokio::test]
async fn a_program_that_cannot_be_executed_is_an_error_and_leaves_no_child() {
    if !subagent_test_support::alone::in_own_process(
        "suite::spawn::a_program_that_cannot_be_executed_is_an_error_and_leaves_no_child",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("not-a-program");
    // Executable, but no format the kernel knows (no `#!`): execve fails with ENOEXEC.
    std::fs::write(&program, [0u8, 1, 2, 3, 4, 5, 6, 7]).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let error = ProcessSpec::new(&program, CWD)
        .guard(None)
        .spawn()
        .unwrap_err();
    match error {
        subagent_process::Error::Spawn { source, .. } => {
            assert_eq!(
                source.raw_os_error(),
                Some(rustix::io::Errno::NOEXEC.raw_os_error())
            );
        }
        other => panic!("expected a spawn error, got {other:?}"),
    }
    // The child that could not exec was reaped: no zombie is left under this process.
    assert_eq!(my_children(), Vec::<String>::new());

    let error = ProcessSpec::new("true", CWD)
        .arg("a\0b")
        .guard(None)
        .spawn()
        .unwrap_err();
    assert!(
        matches!(&error, subagent_process::Error::Spawn { source, .. } if source.kind() == std::io::ErrorKind::InvalidInput),
        "{error:?}"
    );
    assert_eq!(my_children(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_spawns_each_get_their_own_pipes() {
    if !subagent_test_support::alone::in_own_process(
        "suite::spawn::concurrent_spawns_each_get_their_own_pipes",
    ) {
        return;
    }
    let runs = (0..48).map(|n| {
        tokio::spawn(async move {
            let mut child = ProcessSpec::new("cat", CWD)
                .stdin(StdinMode::Piped)
                .guard(None)
                .spawn()
                .unwrap();
            child.write_line(&format!("run {n}")).await.unwrap();
            let line = child.next_line().await.unwrap();
            child.close_stdin();
            assert_eq!(child.next_line().await.unwrap(), None);
            assert!(child.wait().await.unwrap().success());
            line
        })
    });
    let lines = futures_lines(runs).await;
    let expected: Vec<Option<String>> = (0..48).map(|n| Some(format!("run {n}"))).collect();
    assert_eq!(lines, expected);
    assert_eq!(my_children(), Vec::<String>::new());
}

async fn futures_lines(
    runs: impl Iterator<Item = tokio::task::JoinHandle<Option<String>>>,
) -> Vec<Option<String>> {
    let mut lines = Vec::new();
    for run in runs {
        lines.push(run.await.unwrap());
    }
    lines
}

const HELPER: &str = "SUBAGENT_PROCESS_NO_STDIN_HELPER";

/// Run by the next test as a process of its own: it closes its stdin (`std` reopens closed
/// standard fds at startup, so a library's host can only lose it later), so its first pipe gets
/// fd 0.
#[tokio::test]
#[allow(unsafe_code)]
async fn helper_without_stdin_talks_to_a_child() {
    use std::os::fd::FromRawFd as _;
    if std::env::var_os(HELPER).is_none() {
        return;
    }
    // SAFETY: fd 0 is open (std made sure) and nothing else in this process uses it.
    drop(unsafe { std::os::fd::OwnedFd::from_raw_fd(0) });
    assert!(std::fs::metadata("/proc/self/fd/0").is_err());
    let mut child = ProcessSpec::new("cat", CWD)
        .stdin(StdinMode::Piped)
        .guard(None)
        .spawn()
        .unwrap();
    child.write_line("through the pipe").await.unwrap();
    let line = child.next_line().await.unwrap();
    child.close_stdin();
    assert!(child.wait().await.unwrap().success());
    println!("ECHO {}", line.unwrap_or_default());
    std::io::stdout().flush().unwrap();
}

#[tokio::test]
async fn a_host_without_stdin_still_gives_its_child_the_right_pipes() {
    let mut helper = helper_test(
        "suite::spawn::helper_without_stdin_talks_to_a_child",
        HELPER,
    )
    .spawn()
    .unwrap();
    let mut echoed = None;
    while let Some(line) = helper.next_line().await.unwrap() {
        if let Some((_, text)) = line.split_once("ECHO ") {
            echoed = Some(text.to_owned());
        }
    }
    let exit = helper.wait().await.unwrap();
    assert!(exit.success(), "{exit:?}");
    assert_eq!(echoed.as_deref(), Some("through the pipe"));
}
