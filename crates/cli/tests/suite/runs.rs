//! The record of runs through the binary (issue 30): a fan-out is a tree in `subagent ps`,
//! `subagent stop` cancels one child through the process that owns it, `logs` prints a run's
//! events (and follows one), a `--bg` run outlives its launcher and a SIGHUP or SIGINT, its
//! session resumes like any run's, and another stops on request; bad ids are refused with
//! stable codes; a corrupt record is named and skipped.

use std::time::{Duration, Instant};

use serde_json::Value;
use subagent_test_support::FakeServer;
use subagent_test_support::cli::Subagent;
use subagent_test_support::procs;

use super::support::Home;

const SCENARIO: &str = r#"
- match: "fan out"
  steps:
    - tool_calls:
        - name: subagent
          input: {description: first, prompt: "child one"}
        - name: subagent
          input: {description: second, prompt: "child two"}
    - text: "parent done"
- match: "child one"
  steps:
    - wait_gate: one
      text: "one done"
- match: "child two"
  steps:
    - wait_gate: two
      text: "two done"
- match: "wait here"
  steps:
    - wait_gate: bg
      text: "background done"
- match: "carry on"
  steps:
    - text: "carried on"
- match: "stop me"
  steps:
    - wait_gate: never
      text: "never"
"#;

fn subagent(project: &Home) -> Subagent {
    project.subagent().env("SUBAGENT_PRESET", &project.preset)
}

fn ps(project: &Home, all: bool) -> Vec<Value> {
    let mut command = subagent(project).args(["ps", "--json"]);
    if all {
        command = command.arg("--all");
    }
    let output = command.output();
    succeeded(&output);
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    value["runs"].as_array().unwrap().clone()
}

/// Asserts the command exited 0, showing its stderr if not.
fn succeeded(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn eventually<T>(what: &str, mut found: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(value) = found() {
            return value;
        }
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn status<'a>(runs: &'a [Value], description: &str) -> &'a str {
    runs.iter()
        .find(|r| r["description"] == description)
        .and_then(|r| r["status"].as_str())
        .unwrap_or("absent")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fan_out_is_a_tree_and_stop_cancels_one_child() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = Home::new(&server.url(), "");
    let parent =
        tokio::task::block_in_place(|| subagent(&project).args(["run", "fan out"]).spawn());
    let running = tokio::task::block_in_place(|| {
        eventually("a parent and two children running", || {
            let runs = ps(&project, false);
            (runs.len() == 3).then_some(runs)
        })
    });
    assert_eq!(running[0]["description"], "fan out");
    assert_eq!(running[0]["kind"], "run");
    assert_eq!(running[0]["depth"], 0);
    let parent_id = running[0]["id"].clone();
    for child in &running[1..] {
        assert_eq!(child["depth"], 1, "{child}");
        assert_eq!(child["parent"], parent_id, "{child}");
        assert_eq!(child["status"], "running");
        assert_eq!(child["provider"], "spawn");
    }
    let table = tokio::task::block_in_place(|| subagent(&project).arg("ps").output());
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(table.contains("└ second"), "{table}");
    // Stop the second child by the short id `ps` shows.
    let second = running
        .iter()
        .find(|r| r["description"] == "second")
        .unwrap();
    let short = &second["id"].as_str().unwrap()[..8];
    let stopped = tokio::task::block_in_place(|| subagent(&project).args(["stop", short]).output());
    succeeded(&stopped);
    assert!(
        String::from_utf8_lossy(&stopped.stdout).contains("stopped: cancelled"),
        "{}",
        String::from_utf8_lossy(&stopped.stdout)
    );
    server.gate("one").open();
    let output = tokio::task::block_in_place(|| parent.wait_with_output().unwrap());
    succeeded(&output);
    let all = ps(&project, true);
    assert_eq!(status(&all, "fan out"), "completed");
    assert_eq!(status(&all, "first"), "completed");
    assert_eq!(status(&all, "second"), "cancelled");
    // The parent's events, as `run` prints them, and as JSON.
    let id = parent_id.as_str().unwrap();
    let logs = tokio::task::block_in_place(|| subagent(&project).args(["logs", id]).output());
    let logs = String::from_utf8_lossy(&logs.stdout).into_owned();
    assert!(logs.starts_with("[parent] started: fan out"), "{logs}");
    assert!(logs.contains("[parent] tool subagent"), "{logs}");
    assert!(logs.contains("said: parent done"), "{logs}");
    assert!(
        logs.trim_end().ends_with("[parent] finished: completed"),
        "{logs}"
    );
    let json =
        tokio::task::block_in_place(|| subagent(&project).args(["logs", "--json", id]).output());
    for line in String::from_utf8_lossy(&json.stdout).lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    // What cannot be done says so.
    let missing = tokio::task::block_in_place(|| {
        subagent(&project)
            .args(["logs", "--json", "ffffffff"])
            .output()
    });
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stdout).contains("RUN_NOT_FOUND"));
    let ended = tokio::task::block_in_place(|| subagent(&project).args(["stop", id]).output());
    assert_eq!(ended.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&ended.stderr).contains("error[RUN_NOT_RUNNING]"),
        "{}",
        String::from_utf8_lossy(&ended.stderr)
    );
    // Private to the user.
    use std::os::unix::fs::PermissionsExt as _;
    let root = project.home.path().join(".local/state/subagents/runs");
    for dir in ["live", "done", "events"] {
        let mode = std::fs::metadata(root.join(dir))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o700, "{dir}");
    }
    for file in std::fs::read_dir(root.join("done")).unwrap() {
        let mode = file.unwrap().metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_run_outlives_its_launcher_and_stops_on_request() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let project = Home::new(&server.url(), "");
    let launched = tokio::task::block_in_place(|| {
        subagent(&project)
            .args(["run", "--bg", "wait here"])
            .output()
    });
    succeeded(&launched);
    let id = String::from_utf8_lossy(&launched.stdout).trim().to_owned();
    assert_eq!(id.len(), 36, "{id}");
    let record = tokio::task::block_in_place(|| {
        eventually("the background run recorded as running", || {
            ps(&project, false)
                .into_iter()
                .find(|r| r["id"] == id.as_str())
        })
    });
    let pid = i32::try_from(record["owner"]["pid"].as_u64().unwrap()).unwrap();
    assert!(record["output"].as_str().is_some(), "{record}");
    // A closed terminal and a Ctrl-C of the shell reach it: it goes on.
    for signal in ["-HUP", "-INT"] {
        let sent = std::process::Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !procs::gone(u32::try_from(pid).unwrap()),
        "the background run died of a signal"
    );
    // `logs -f` follows it to its end.
    let follow =
        tokio::task::block_in_place(|| subagent(&project).args(["logs", "-f", &id]).spawn());
    std::thread::sleep(Duration::from_millis(300));
    server.gate("bg").open();
    let followed = tokio::task::block_in_place(|| follow.wait_with_output().unwrap());
    let followed = String::from_utf8_lossy(&followed.stdout).into_owned();
    assert!(followed.contains("said: background done"), "{followed}");
    assert!(
        followed.trim_end().ends_with("finished: completed"),
        "{followed}"
    );
    let output = std::fs::read_to_string(record["output"].as_str().unwrap()).unwrap();
    assert!(output.contains("background done"), "{output}");
    tokio::task::block_in_place(|| {
        eventually("its process ends", || {
            procs::gone(u32::try_from(pid).unwrap()).then_some(())
        })
    });
    // Its record names its session, which `--resume` continues like any run's.
    let ended = ps(&project, true)
        .into_iter()
        .find(|r| r["id"] == id.as_str())
        .unwrap();
    let session = ended["session"]["id"].as_str().unwrap().to_owned();
    let resumed = tokio::task::block_in_place(|| {
        subagent(&project)
            .args(["run", "--resume", &session, "carry on"])
            .output()
    });
    succeeded(&resumed);
    assert!(String::from_utf8_lossy(&resumed.stdout).contains("carried on"));
    let requests = server.requests();
    let carried = requests
        .iter()
        .rev()
        .find(|r| r.messages.iter().any(|m| m.text().contains("carry on")))
        .unwrap();
    assert!(
        carried
            .messages
            .iter()
            .any(|m| m.text().contains("wait here")),
        "the resumed run has the background run's conversation"
    );

    // Another, stopped through its owner: cancelled, its process gone.
    let launched = tokio::task::block_in_place(|| {
        subagent(&project)
            .args(["run", "--bg", "--json", "stop me"])
            .output()
    });
    let launched: Value = serde_json::from_slice(&launched.stdout).unwrap();
    let id = launched["id"].as_str().unwrap().to_owned();
    let pid = u32::try_from(launched["pid"].as_u64().unwrap()).unwrap();
    let stopped =
        tokio::task::block_in_place(|| subagent(&project).args(["stop", "--json", &id]).output());
    let stopped: Value = serde_json::from_slice(&stopped.stdout).unwrap();
    assert_eq!(stopped["status"], "cancelled", "{stopped}");
    tokio::task::block_in_place(|| {
        eventually("its process ends", || procs::gone(pid).then_some(()))
    });
}

/// Two `subagent` processes in one project record at once, each its own runs (its own owner);
/// the launching shell's process group killed outright (SIGHUP, then SIGKILL) leaves a `--bg`
/// run going; finished runs past `SUBAGENT_RUNS_KEEP` are forgotten when a process starts
/// recording.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_record_at_once_and_a_bg_run_outlives_its_shell() {
    let server = FakeServer::from_yaml(
        r#"
- match: "first waits"
  steps:
    - wait_gate: a
      text: "first done"
- match: "second waits"
  steps:
    - wait_gate: b
      text: "second done"
- match: "third waits"
  steps:
    - wait_gate: c
      text: "third done"
- match: "quick"
  steps:
    - text: "quick done"
"#,
    )
    .await
    .unwrap();
    let project = Home::new(&server.url(), "");
    let first = tokio::task::block_in_place(|| {
        subagent(&project)
            .args(["delegate", "--provider", "spawn", "first waits"])
            .spawn()
    });
    let second = tokio::task::block_in_place(|| {
        subagent(&project)
            .args(["delegate", "--provider", "spawn", "second waits"])
            .spawn()
    });
    let running = tokio::task::block_in_place(|| {
        eventually("both processes' runs recorded", || {
            let runs = ps(&project, false);
            (runs.len() == 2).then_some(runs)
        })
    });
    let owners: std::collections::BTreeSet<u64> = running
        .iter()
        .map(|r| r["owner"]["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(owners.len(), 2, "{running:?}");
    assert_eq!(
        owners,
        [u64::from(first.id()), u64::from(second.id())]
            .into_iter()
            .collect()
    );
    server.gate("a").open();
    server.gate("b").open();
    for child in [first, second] {
        let output = tokio::task::block_in_place(|| child.wait_with_output().unwrap());
        succeeded(&output);
    }
    let all = ps(&project, true);
    assert_eq!(status(&all, "first waits"), "completed");
    assert_eq!(status(&all, "second waits"), "completed");

    // A shell launches a --bg run, then its whole process group is hung up and killed.
    let mut launcher = std::process::Command::new("setsid");
    launcher
        .args([
            "bash",
            "-c",
            "\"$SUBAGENT_BIN\" run --bg 'third waits'; exec sleep 60",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", project.home.path())
        .env("FAKE_KEY", "test-key")
        .env("SUBAGENT_PRESET", &project.preset)
        .env("SUBAGENT_BIN", assert_cmd::cargo::cargo_bin("subagent"))
        .current_dir(&project.dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut shell = launcher.spawn().unwrap();
    let mut id = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(shell.stdout.take().unwrap()),
        &mut id,
    )
    .unwrap();
    let id = id.trim().to_owned();
    assert_eq!(id.len(), 36, "{id:?}");
    let group = format!("-{}", shell.id());
    for signal in ["-HUP", "-KILL"] {
        let _ = std::process::Command::new("kill")
            .args([signal, "--", &group])
            .status();
    }
    let _ = shell.wait();
    std::thread::sleep(Duration::from_millis(300));
    let record = ps(&project, false)
        .into_iter()
        .find(|r| r["id"] == id.as_str())
        .unwrap_or_else(|| panic!("the --bg run {id} died with its shell"));
    assert_eq!(record["status"], "running");
    let pid = u32::try_from(record["owner"]["pid"].as_u64().unwrap()).unwrap();
    server.gate("c").open();
    tokio::task::block_in_place(|| {
        eventually("the --bg run ends", || procs::gone(pid).then_some(()))
    });
    let all = ps(&project, true);
    assert_eq!(status(&all, "third waits"), "completed");

    // Past SUBAGENT_RUNS_KEEP, finished runs are forgotten when a process starts recording.
    for _ in 0..2 {
        let output = tokio::task::block_in_place(|| {
            subagent(&project)
                .env("SUBAGENT_RUNS_KEEP", "1")
                .args(["delegate", "--provider", "spawn", "quick"])
                .output()
        });
        succeeded(&output);
    }
    // The second kept one (the first's) and added its own.
    assert_eq!(ps(&project, true).len(), 2);
}

/// A corrupt record file and a corrupt line in a journal of finished records are named in a
/// warning and skipped; every other run is still listed and found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_record_is_named_and_skipped_and_nothing_else_is_lost() {
    let server =
        FakeServer::from_yaml("- match: \"quick\"\n  steps:\n    - text: \"quick done\"\n")
            .await
            .unwrap();
    let project = Home::new(&server.url(), "");
    for _ in 0..2 {
        let output = tokio::task::block_in_place(|| {
            subagent(&project)
                .args(["delegate", "--provider", "spawn", "quick"])
                .output()
        });
        succeeded(&output);
    }
    let root = project.home.path().join(".local/state/subagents/runs");
    // A live record that is not JSON, and a journal whose first line is not.
    std::fs::write(root.join("live/garbage.json"), "{not json").unwrap();
    let journal = std::fs::read_dir(root.join("done"))
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .next()
        .unwrap();
    let text = std::fs::read_to_string(&journal).unwrap();
    std::fs::write(&journal, format!("{{broken\n{text}")).unwrap();
    let output =
        tokio::task::block_in_place(|| subagent(&project).args(["ps", "--all", "--json"]).output());
    succeeded(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("garbage.json") && stderr.contains("skipped"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("line 1 of the run records {}", journal.display())),
        "{stderr}"
    );
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    let runs = value["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    // Each is still found by its id.
    for run in runs {
        let id = run["id"].as_str().unwrap();
        let found = tokio::task::block_in_place(|| {
            subagent(&project).args(["logs", id, "--json"]).output()
        });
        succeeded(&found);
    }
}
