//! `subagent run` shows its background tasks: on a terminal the live view lists each (id,
//! status, description, last activity); without one, plain lines say when each starts and ends.

use pretty_assertions::assert_eq;
use std::process::Stdio;
use subagent_test_support::FakeServer;
use subagent_test_support::parent::result_of;

use super::support::write_file;
use super::support::{fake_run, fake_setup, stderr, stdout};

pub(super) const BACKGROUND: &str = r#"
- name: child
  match: "CHILD-BG"
  steps:
    - tool_calls:
        - {id: call_child_ls, name: ls, input: {}}
    - text: "child finished in the background"
- name: parent
  match: "work in the background"
  steps:
    - tool_calls:
        - id: call_bg
          name: subagent
          input: {description: bg notes, prompt: "CHILD-BG read the notes", run_in_background: true}
    - tool_calls:
        - {id: call_read, name: task_output, input: {task_id: call_bg, timeout: 600000}}
    - text: "parent done"
"#;

/// `subagent run --preset PRESET "work in the background"` in `dir` (HOME and TMPDIR),
/// asserted a success: [`BACKGROUND`]'s parent at work.
pub(super) fn in_background(
    dir: &std::path::Path,
    preset: &std::path::Path,
) -> std::process::Output {
    fake_run(dir, dir, &["run"], preset, "work in the background")
}

/// The id of the task the parent's `call_bg` started, from what the parent's model was told.
fn task_id(server: &FakeServer) -> String {
    result_of(&server.model_requests(), "call_bg")
        .and_then(|(text, _)| {
            text.strip_prefix("Started background subagent ")
                .and_then(|rest| rest.split_whitespace().next())
                .map(str::to_owned)
        })
        .unwrap()
}

/// `[who 1.2s] text` with the time written `T`.
fn untimed(line: &str) -> String {
    match (line.find(' '), line.find("s] ")) {
        (Some(space), Some(end)) if line.starts_with('[') && space < end => {
            format!("{} T{}", &line[..space], &line[end + 1..])
        }
        _ => line.to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_output_says_when_a_background_task_starts_and_ends() {
    let (server, dir, preset) = fake_setup(BACKGROUND, "").await;
    let output = in_background(dir.path(), &preset);
    assert_eq!(stdout(&output), "parent done\n");
    let id = task_id(&server);
    let err = stderr(&output);
    let lines: Vec<String> = err.lines().map(untimed).collect();
    let at = |wanted: &str| {
        lines
            .iter()
            .position(|line| line == wanted)
            .unwrap_or_else(|| panic!("no line {wanted:?} in:\n{err}"))
    };
    let started = at(&format!(
        "[parent T] background task {id} started: bg notes"
    ));
    let child_call = at("[spawn T] tool ls {}");
    let ended = at(&format!(
        "[parent T] background task {id} completed: bg notes"
    ));
    let finished = at("[parent T] finished: completed");
    assert!(
        started < child_call && child_call < ended && ended < finished,
        "{err}"
    );
    // The summary names the task and how it ended, not the call's "Started …" result.
    assert!(
        err.contains(&format!(
            "delegations: 1\n  subagent [on spawn] “bg notes” → background task {}: completed\n",
            &id[..8]
        )),
        "{err}"
    );
    // Each once.
    assert_eq!(
        lines
            .iter()
            .filter(|line| line.starts_with("[parent T] background task "))
            .count(),
        2,
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_view_lists_a_running_background_task_with_its_last_activity() {
    let (server, dir, preset) = fake_setup(BACKGROUND, "").await;
    let binary = assert_cmd::cargo::cargo_bin("subagent");
    let command = format!(
        "FAKE_KEY=k TMPDIR={dir} HOME={dir} {binary} run --preset {preset} 'work in the background'",
        dir = dir.path().display(),
        binary = binary.display(),
        preset = preset.display()
    );
    let output = tokio::task::block_in_place(|| {
        std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("script(1) from util-linux")
    });
    let screen = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{screen}");
    let id = task_id(&server);
    let short = &id[..8];
    // Drawn while the child works: its last activity is the call it made.
    assert!(
        screen.contains(&format!("  task {short} · running · bg notes · ls {{}}")),
        "{screen}"
    );
    // Then its end, until the parent finishes.
    assert!(
        screen.contains(&format!("  task {short} · completed · bg notes")),
        "{screen}"
    );
    assert!(screen.contains("parent done"), "{screen}");
}

/// `--json`: the delegation names its task and how it ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_json_names_a_background_delegations_task() {
    let (server, dir, preset) = fake_setup(BACKGROUND, "").await;
    let output = fake_run(
        dir.path(),
        dir.path(),
        &["run", "--json"],
        &preset,
        "work in the background",
    );
    let id = task_id(&server);
    let outcome = super::support::json_lines(&output).pop().unwrap();
    assert_eq!(
        outcome["delegations"][0]["task"],
        serde_json::json!({"id": id, "status": "completed"})
    );
}

/// Every file under `root`, recursively.
fn files_under(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.file_type().unwrap().is_dir() {
                dirs.push(entry.path());
            } else {
                found.push(entry.path());
            }
        }
    }
    found
}

/// The project's task root in the state dir: `$HOME/.local/state/subagents/tasks/<key>`, the
/// key as the sessions directory's.
fn task_root(home: &std::path::Path) -> std::path::PathBuf {
    home.join(".local/state/subagents/tasks")
        .join(super::support::state_key(home))
}

/// The output file of a background task of `run`'s parent lives in the project's state dir,
/// beside its sessions, not in the temp dir (which the system may clear under a running task).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_keeps_background_output_files_in_the_state_dir() {
    let (server, dir, preset) = fake_setup(BACKGROUND, "").await;
    let temp = dir.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    fake_run(
        dir.path(),
        &temp,
        &["run"],
        &preset,
        "work in the background",
    );
    let id = task_id(&server);
    let files = files_under(&task_root(dir.path()));
    let output_file = files
        .iter()
        .find(|file| file.to_string_lossy().contains(&id))
        .unwrap_or_else(|| panic!("no output file of task {id} in {files:?}"));
    let written = std::fs::read_to_string(output_file).unwrap();
    assert!(
        written.contains("child finished in the background"),
        "{written}"
    );
    assert_eq!(files_under(&temp), Vec::<std::path::PathBuf>::new());
}

/// The child starts a command in the background and reads it with `task_output`. The command
/// sleeps first, so it is still running when the child's next request goes out: one that ended
/// at once would reach the model as a `<task-notification>` before the `task_output` call, which
/// this scenario does not answer (it failed that way under `cargo test`'s load).
const CHILD_BASH: &str = r#"
- name: child
  match: "sleepy"
  steps:
    - tool_calls:
        - {id: call_sh, name: bash, input: {command: "sleep 2; echo from-the-shell-task", run_in_background: true}}
    - tool_calls:
        - {id: call_read, name: task_output, input: {task_id: call_sh, timeout: 600000}}
    - text: "shell task read"
"#;

/// `delegate`: a background shell task of the delegated child keeps its output file in the
/// project's state dir too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_keeps_a_childs_task_output_in_the_state_dir() {
    let server = FakeServer::from_yaml(CHILD_BASH).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let temp = dir.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    // The spawn row runs its shell without asking (delegate has no one to ask).
    let preset = write_file(
        dir.path(),
        "bypass.yaml",
        format!(
            "version: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {}\n  api_key_env: FAKE_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\n    config:\n      permission_mode: bypassPermissions\ntools:\n  - name: subagent\n    provider: spawn\n",
            server.url()
        ),
    );
    let output = fake_run(
        dir.path(),
        &temp,
        &["delegate"],
        &preset,
        "sleepy shell work",
    );
    assert_eq!(stdout(&output), "shell task read\n");
    // The child has the task tools beside its bash tool: it read its command's output.
    let read = result_of(&server.model_requests(), "call_read").unwrap();
    assert!(
        !read.1 && read.0.contains("<status>completed</status>"),
        "{read:?}"
    );
    let files = files_under(&task_root(dir.path()));
    let written: Vec<String> = files
        .iter()
        .map(|file| std::fs::read_to_string(file).unwrap_or_default())
        .collect();
    assert!(
        written
            .iter()
            .any(|text| text.contains("from-the-shell-task")),
        "{files:?}: {written:?}\n{}",
        stderr(&output)
    );
    assert_eq!(files_under(&temp), Vec::<std::path::PathBuf>::new());
}
