//! `subagent sessions`, `--continue`, and a session resumed by the wrong kind of run.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::support::assert_refused;
use super::support::{Project, stderr, stdout};

const HELLO: &str = "Say hello from the subagent";
const DELEGATE_A_HELLO: &str = "Please delegate a hello to a subagent";

/// `args` in the project with the offline preset; exits 0.
fn ok(project: &Project, args: &[&str]) -> std::process::Output {
    let output = project
        .subagent()
        .args(args)
        .args(["--preset", "presets/offline.yaml"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        stderr(&output)
    );
    output
}

/// `subagent sessions --json`.
fn listed(project: &Project) -> Vec<Value> {
    let output = project.output(["sessions", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_str::<Value>(&stdout(&output))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The session id a command's last line names.
fn session_of(output: &std::process::Output) -> String {
    let said = stderr(output);
    let line = said.lines().last().unwrap_or_default();
    line.strip_prefix("session: ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no session line: {said}"))
        .to_owned()
}

#[test]
fn sessions_lists_what_ran_here_newest_first_and_continue_takes_the_latest() {
    let project = Project::new();
    let parent = session_of(&ok(&project, &["run", DELEGATE_A_HELLO]));
    let child = session_of(&ok(&project, &["delegate", HELLO]));
    let rows = listed(&project);
    // The parent, its subagent, the delegate's child.
    assert_eq!(rows.len(), 3, "{rows:#?}");
    assert_eq!(rows[0]["id"], child.as_str());
    assert_eq!(
        [
            &rows[0]["provider"],
            &rows[0]["prompt"],
            &rows[0]["status"],
            &rows[0]["state"]
        ],
        ["spawn", HELLO, "completed", "ended"]
    );
    assert_eq!(rows[0]["usage"]["input_tokens"], 10);
    let parent_row = rows.iter().find(|r| r["id"] == parent.as_str()).unwrap();
    assert_eq!(parent_row["provider"], "parent");
    assert_eq!(parent_row["prompt"], DELEGATE_A_HELLO);

    // The table: a header, then one line per session, the newest first.
    let output = project.subagent().arg("sessions").output().unwrap();
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("id  "), "{text}");
    assert!(lines[1].starts_with(&child), "{text}");
    assert!(
        lines[1].contains("  spawn  ") && lines[1].ends_with(HELLO),
        "{text}"
    );

    // -c continues the latest session of its kind: the child's for delegate, the parent's
    // for run, whichever ran last.
    let again = ok(&project, &["delegate", "-c", HELLO]);
    assert_eq!(session_of(&again), child);
    let again = ok(&project, &["run", "--continue", DELEGATE_A_HELLO]);
    assert_eq!(session_of(&again), parent);
    let rows = listed(&project);
    let runs = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap()["runs"].clone();
    assert_eq!((runs(&child), runs(&parent)), (2.into(), 2.into()));
}

#[test]
fn show_prints_a_session_and_rm_deletes_it() {
    let project = Project::new();
    let child = session_of(&ok(&project, &["delegate", HELLO]));
    let output = project.output(["sessions", "show", &child]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with(&format!("session     {child}\nprovider    spawn\n")),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            "\nuser: {HELLO}\n\nassistant: [offline scripted model] Hello from the subagent.\n"
        )),
        "{text}"
    );
    let output = project.output(["sessions", "rm", &child]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(listed(&project).is_empty());
    // Nothing of it is left beside the transcripts (its record, what its child ran with).
    let dir = project.home.join(".local/state/subagents/sessions");
    let left: Vec<_> = walk(&dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(&child))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    for args in [["sessions", "rm", &child], ["sessions", "show", &child]] {
        let output = project.subagent().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).starts_with("error[NOT_RESUMABLE]: "),
            "{}",
            stderr(&output)
        );
    }
    // Nothing to continue: said, exit 2.
    let output = project.output(["delegate", "-c", "--preset", "presets/offline.yaml", HELLO]);
    assert_refused(
        &output,
        "error[NOT_RESUMABLE]: --continue: no child session in ",
        "",
    );
}

/// A child's session is not a `run` parent's: `run --resume` refuses it (saying how to
/// continue it) unless `--adopt` says that is meant; `delegate --resume` without `--provider`
/// goes to the provider that ran it.
#[test]
fn a_session_resumed_by_another_kind_of_run_is_refused_unless_meant() {
    let project = Project::new();
    let child = session_of(&ok(&project, &["delegate", HELLO]));
    let output = project.output([
        "run",
        "--preset",
        "presets/offline.yaml",
        "--resume",
        &child,
        "hi",
    ]);
    assert_refused(
        &output,
        &format!(
            "error[NOT_RESUMABLE]: run cannot be resumed: session {child} is a session of provider \"spawn\", not \"parent\": a child's session continues with `subagent delegate --resume {child} PROMPT`, or give --adopt"
        ),
        "",
    );
    let adopted = ok(
        &project,
        &["run", "--resume", &child, "--adopt", DELEGATE_A_HELLO],
    );
    assert_eq!(session_of(&adopted), child);
    // The hint's command, as printed: back on the provider that ran it.
    let output = ok(&project, &["delegate", "--resume", &child, HELLO]);
    assert_eq!(session_of(&output), child);
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// A session's transcript replaced by a symlink to `/dev/zero` or by a FIFO (planted in the
/// state directory) is refused at once by `run --resume`, `delegate --resume`, `sessions show`
/// and `sessions`: it took `run --resume` to 23 GB, and a FIFO hung it past SIGTERM.
#[test]
fn a_planted_transcript_is_refused_without_reading_or_blocking() {
    let bound = std::time::Duration::from_secs(60);
    let project = Project::new();
    let parent = session_of(&ok(&project, &["run", HELLO]));
    let child = session_of(&ok(&project, &["delegate", HELLO]));
    let dir = project.home.join(".local/state/subagents/sessions");
    let file = |id: &str| {
        walk(&dir)
            .into_iter()
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n == format!("{id}.jsonl").as_str())
            })
            .unwrap_or_else(|| panic!("no transcript of {id} under {}", dir.display()))
    };
    let (parent_file, child_file) = (file(&parent), file(&child));
    std::fs::remove_file(&parent_file).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &parent_file).unwrap();
    std::fs::remove_file(&child_file).unwrap();
    subagent_test_support::procs::mkfifo(&child_file);
    let commands: [(&[&str], &str, &std::path::Path); 4] = [
        (
            &[
                "run",
                "--resume",
                &parent,
                "--preset",
                "presets/offline.yaml",
                HELLO,
            ],
            &parent,
            &parent_file,
        ),
        (
            &[
                "delegate",
                "--resume",
                &child,
                "--preset",
                "presets/offline.yaml",
                HELLO,
            ],
            &child,
            &child_file,
        ),
        (&["sessions", "show", &parent], &parent, &parent_file),
        (&["sessions", "show", &child], &child, &child_file),
    ];
    for (args, _, path) in commands {
        let output = project
            .subagent()
            .timeout(bound)
            .args(args)
            .output()
            .unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
        assert!(err.contains(&path.display().to_string()), "{args:?}: {err}");
    }
    // Listing goes on past them.
    let output = project
        .subagent()
        .timeout(bound)
        .args(["sessions", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}
