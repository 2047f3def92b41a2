//! Where a run's task output files go: under the run's configured root, in a directory of its
//! own made with its first task (a run without background tasks makes none), and run
//! directories untouched for seven days are pruned from the root when a run makes its own.

use std::path::Path;
use std::time::{Duration, SystemTime};

use pretty_assertions::assert_eq;
use subagent_core::{CancellationToken, RunId, StopReason};
use subagent_runtime::tools::task_tools;
use subagent_runtime::{Agent, TASK_RETENTION, TaskDir};
use subagent_test_support::FakeServer;

use super::support::{completed, config, counting_in_the_background, last_results};

/// The foreground scenario; [`background`] adds the background one.
const PLAIN: &str = r#"
- name: plain
  match: "just answer"
  steps:
    - tool_calls:
        - {id: call_fg, name: bash, input: {command: "echo in the foreground"}}
    - text: "answered"
"#;

/// The scenarios of these tests: `echo one` counted in the background, and [`PLAIN`].
fn background() -> String {
    counting_in_the_background("echo one") + PLAIN
}

/// Sets the modification time of `path` (a file or a directory).
fn age(path: &Path, by: Duration) {
    std::fs::File::open(path)
        .unwrap()
        .set_modified(SystemTime::now() - by)
        .unwrap();
}

/// A run directory in `root` with one file, both last changed `by` ago.
fn run_dir(root: &Path, by: Duration) -> std::path::PathBuf {
    let dir = root.join(RunId::new().to_string());
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{}.jsonl", RunId::new()));
    std::fs::write(&file, "{}\n").unwrap();
    age(&file, by);
    age(&dir, by);
    dir
}

/// What sits between `<tag>` and `</tag>` in `text`.
fn between(text: &str, tag: &str) -> String {
    let open = format!("<{tag}>");
    let start = text.find(&open).unwrap() + open.len();
    let end = text.find(&format!("</{tag}>")).unwrap();
    text[start..end].to_owned()
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_files_go_to_the_configured_root_and_old_run_directories_are_pruned() {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = state.path().join("tasks");
    std::fs::create_dir_all(&root).unwrap();
    let week = TASK_RETENTION + Duration::from_secs(3600);
    let old = run_dir(&root, week);
    let recent = run_dir(&root, Duration::from_secs(3600));
    // Not a run's directory: never touched, however old.
    let other = root.join("notes");
    std::fs::create_dir(&other).unwrap();
    age(&other, week);

    let server = FakeServer::from_yaml(&background()).await.unwrap();
    let mut config = config(&server, work.path());
    config.tools = config.tools.with(task_tools());
    config.task_dir = Some(TaskDir::new(&root));
    let run = Agent::new(config)
        .unwrap()
        .start_prompt("count in the background", CancellationToken::new());
    let run_id = run.id();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    let requests = server.model_requests();
    let (read, _) = last_results(&requests[2]).remove(0);
    let task_id = between(&read, "task_id");
    let output_file = between(&read, "output_file");
    assert_eq!(
        output_file,
        root.join(run_id.to_string())
            .join(format!("{task_id}.jsonl"))
            .display()
            .to_string()
    );
    assert!(Path::new(&output_file).is_file());
    let mut expected = vec![
        run_id.to_string(),
        recent.file_name().unwrap().to_string_lossy().into_owned(),
        "notes".to_owned(),
    ];
    expected.sort();
    assert_eq!(names(&root), expected, "{} was not pruned", old.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_without_background_tasks_makes_no_directory() {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = state.path().join("tasks");
    let server = FakeServer::from_yaml(&background()).await.unwrap();
    let mut config = config(&server, work.path());
    config.tools = config.tools.with(task_tools());
    config.task_dir = Some(TaskDir::new(&root));
    let outcome = completed(config, "just answer").await;
    assert_eq!(outcome.text, "answered");
    assert_eq!(names(state.path()), Vec::<String>::new());
}
