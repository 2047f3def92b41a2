//! `subagent run` asks the user on a terminal before running a command, and denies without one.
//!
//! `script` (util-linux) gives the binary a pseudo-terminal; the answer is typed ahead into it.

use std::process::Stdio;

use subagent_test_support::FakeServer;

use super::support::write_file;
use super::support::{stderr, subagent};

const SCENARIO: &str = r#"
- match: "make the marker"
  steps:
    - tool_calls:
        - name: bash
          input: {command: "echo made > marker.txt"}
    - text: "done"
"#;

fn preset(dir: &std::path::Path, url: &str) -> std::path::PathBuf {
    write_file(
        dir,
        "ask.yaml",
        format!(
            "version: 1\nmodel: {{kind: anthropic, name: m, base_url: \"{url}\", api_key_env: FAKE_KEY}}\nproviders: [{{name: spawn, kind: spawn}}]\ntools: [{{name: subagent, provider: spawn}}]\n"
        ),
    )
}

/// Runs `subagent run` on a pseudo-terminal with `typed` as the keyboard input.
fn run_on_terminal(dir: &std::path::Path, preset: &std::path::Path, typed: &str) -> String {
    let binary = assert_cmd::cargo::cargo_bin("subagent");
    let command = format!(
        "FAKE_KEY=k {} run --preset {} 'make the marker'",
        binary.display(),
        preset.display()
    );
    let mut child = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script(1) from util-linux");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(typed.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs the scenario in a fresh dir on a terminal where the user types `typed`: the server, the
/// dir and what the terminal showed.
async fn answered_on_terminal(typed: &'static str) -> (FakeServer, tempfile::TempDir, String) {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = preset(dir.path(), &server.url());
    let dir_path = dir.path().to_path_buf();
    let screen = tokio::task::spawn_blocking(move || run_on_terminal(&dir_path, &preset, typed))
        .await
        .unwrap();
    (server, dir, screen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_is_asked_on_a_terminal_and_runs_when_allowed() {
    let (_server, dir, screen) = answered_on_terminal("y\n").await;
    // The command asked about, then what each answer does (a terminal ends lines with \r\n).
    assert!(
        screen.replace("\r\n", "\n").contains(
            "allow bash:\n  $ echo made > marker.txt\n[y]es / [n]o / [a]lways (adds the rule `bash`: every bash call is allowed for the rest of this run): "
        ),
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("marker.txt")).unwrap(),
        "made\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_denied_on_the_terminal_does_not_run() {
    let (server, dir, screen) = answered_on_terminal("n\n").await;
    assert!(screen.contains("allow bash:"), "{screen}");
    assert!(!dir.path().join("marker.txt").exists());
    // The model was told why.
    let last = server.model_requests().pop().unwrap();
    assert!(
        last.body.unwrap().to_string().contains("permission denied"),
        "the refusal reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_nothing_is_asked_and_the_command_is_denied() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = preset(dir.path(), &server.url());
    let output = subagent(dir.path())
        .env("FAKE_KEY", "k")
        .args(["run", "--preset"])
        .arg(&preset)
        .arg("make the marker")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .contains("tool error: permission denied: bash needs approval and no one can be asked"),
        "{}",
        stderr(&output)
    );
    assert!(!dir.path().join("marker.txt").exists());
    // With the mode that allows it, it runs.
    let output = subagent(dir.path())
        .env("FAKE_KEY", "k")
        .args(["run", "--permission-mode", "bypass", "--preset"])
        .arg(&preset)
        .arg("make the marker")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(dir.path().join("marker.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_while_a_question_is_open_cancels_without_an_answer() {
    use std::io::{Read, Write};
    use std::sync::mpsc;
    use std::time::Duration;

    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = preset(dir.path(), &server.url());
    let binary = assert_cmd::cargo::cargo_bin("subagent");
    let command = format!(
        "FAKE_KEY=k {} run --preset {} 'make the marker'",
        binary.display(),
        preset.display()
    );
    let dir_path = dir.path().to_path_buf();
    let screen = tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .current_dir(&dir_path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("script(1) from util-linux");
        // The keyboard stays open (no end of input answers the question) until the end.
        let mut keyboard = child.stdin.take().unwrap();
        let mut screen_pipe = child.stdout.take().unwrap();
        let (chunks, received) = mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            let mut buf = [0_u8; 4096];
            while let Ok(n) = screen_pipe.read(&mut buf) {
                if n == 0 || chunks.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let mut screen = Vec::new();
        while !String::from_utf8_lossy(&screen).contains("for the rest of this run): ") {
            let chunk = received
                .recv_timeout(Duration::from_secs(30))
                .expect("the question was never asked");
            screen.extend(chunk);
        }
        // Ctrl-C on the terminal.
        keyboard.write_all(b"\x03").unwrap();
        keyboard.flush().unwrap();
        loop {
            match received.recv_timeout(Duration::from_secs(30)) {
                Ok(chunk) => screen.extend(chunk),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    panic!(
                        "Ctrl-C did not end the run while the question was open: {}",
                        String::from_utf8_lossy(&screen)
                    );
                }
            }
        }
        let status = child.wait().unwrap();
        drop(keyboard);
        (status.code(), String::from_utf8_lossy(&screen).into_owned())
    })
    .await
    .unwrap();
    assert_eq!(screen.0, Some(130), "{}", screen.1);
    assert!(screen.1.contains("cancelled"), "{}", screen.1);
    assert!(!dir.path().join("marker.txt").exists());
}
