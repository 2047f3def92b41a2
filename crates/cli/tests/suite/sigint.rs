//! Ctrl-C (SIGINT) to `subagent delegate` mid-run cancels the child and leaves no process.

use std::process::Stdio;

use super::support::{Subagent, bin};
use super::support::{processes_with, wait_for};
use super::support::{sleeper_setup, write_file};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_mid_tool_cancels_and_leaves_no_process() {
    // A unique sleep length marks the child's grandchild in /proc.
    let marker = format!("sleep {}", 4000 + std::process::id() % 1000);
    let (_server, dir, preset) = sleeper_setup(&marker).await;
    let mut child = Subagent::new(bin(), dir.path())
        .fake_key()
        .command()
        .args(["delegate", "--json", "--preset"])
        .arg(&preset)
        .arg("run the sleeper")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let marker_for_wait = marker.clone();
    tokio::task::spawn_blocking(move || {
        wait_for("the bash tool's sleep to start", || {
            !processes_with(&marker_for_wait).is_empty()
        })
    })
    .await
    .unwrap();

    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = tokio::task::spawn_blocking(move || {
        let _ = child.stdin.take();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(130),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let outcome: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(outcome["status"], "cancelled");
    // SIGKILL went to the whole tree before subagent exited; the kernel ends a killed process
    // a moment later, so look until it is gone (a process that was never killed stays, and the
    // wait fails).
    tokio::task::spawn_blocking(move || {
        wait_for(
            "the bash tool's process to be gone after the cancel",
            || processes_with(&marker).is_empty(),
        )
    })
    .await
    .unwrap();
}

/// A child that ignores the polite stop: the first Ctrl-C cancels and waits out the grace
/// period, a second Ctrl-C stops waiting — and still leaves no process behind.
#[test]
fn a_second_sigint_stops_waiting_and_still_leaves_no_process() {
    use std::io::BufRead;

    let dir = tempfile::tempdir().unwrap();
    let marker = format!("sleep {}", 5000 + std::process::id() % 1000);
    let stand_in = write_file(
        dir.path(),
        "claude",
        format!(
            "#!/bin/sh\n# A claude that ignores SIGINT and never answers.\ntrap '' INT\n{marker}\n"
        ),
    );
    std::fs::set_permissions(
        &stand_in,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let preset = write_file(
        dir.path(),
        "stubborn.yaml",
        format!(
            "version: 1\nproviders:\n  - name: claude-code\n    kind: claude-code\n    config: {{binary: \"{}\", grace_ms: 120000}}\n",
            stand_in.display()
        ),
    );
    let mut child = Subagent::new(bin(), dir.path())
        .command()
        .args(["delegate", "--provider", "claude-code", "--preset"])
        .arg(&preset)
        .arg("never answers")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the stand-in claude to start", || {
        !processes_with(&marker).is_empty()
    });
    let pid = child.id().to_string();
    let interrupt = || {
        assert!(
            std::process::Command::new("kill")
                .args(["-INT", &pid])
                .status()
                .unwrap()
                .success()
        );
    };
    interrupt();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    // The first Ctrl-C was taken when its message is printed; only then send the second.
    while !seen.contains("cancelling") {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "stderr ended: {seen}"
        );
        seen.push_str(&line);
    }
    interrupt();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen}{rest}");
    assert!(
        rest.contains("interrupted again (SIGINT): not waiting for the run to stop"),
        "{rest}"
    );
    assert!(
        processes_with(&marker).is_empty(),
        "the stubborn child survived"
    );
}
