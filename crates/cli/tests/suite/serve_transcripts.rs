//! `subagent serve` deletes the transcripts of its runs once no task it keeps refers to them
//! (a forgotten task's at once, the rest when it stops), keeps one a continued task shares while
//! either task is kept, never touches the user's own sessions, and deletes none with
//! `--keep-transcripts`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_test_support::FakeServer;

use super::serve::{post, start_with, stop};
use super::support::{fake_preset, wait_for};

const SCENARIOS: &str = r#"
- name: hello
  match: "HELLO"
  steps:
    - text: "Hi there."
"#;

/// A finished task as a client sees it.
struct Sent {
    task: String,
    session: String,
}

/// `SendMessage` (waiting for the end) of `text`, continuing `continues` if given; the task
/// must complete.
fn send(base: &str, text: &str, continues: Option<&str>) -> Sent {
    let mut message = json!({"messageId": text, "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(task) = continues {
        message["taskId"] = json!(task);
    }
    let request =
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}});
    let answer: Value = serde_json::from_str(&post(base, &request)).unwrap();
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    let outcome = task["metadata"]
        .as_object()
        .and_then(|ext| ext.values().next())
        .map(|ext| &ext["outcome"])
        .unwrap();
    Sent {
        task: task["id"].as_str().unwrap().to_owned(),
        session: outcome["session"]["id"].as_str().unwrap().to_owned(),
    }
}

/// Whether `GetTask` still finds the task.
fn kept(base: &str, task: &str) -> bool {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task}});
    let answer: Value = serde_json::from_str(&post(base, &request)).unwrap();
    answer.get("error").is_none()
}

/// The project's sessions directory in the state dir under `home` (the only one there).
fn sessions_dir(home: &Path) -> PathBuf {
    let root = home.join(".local/state/subagents/sessions");
    let dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

/// The session ids of the transcripts in `dir`.
fn transcripts(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|entry| {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".jsonl").map(str::to_owned)
        })
        .collect()
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|id| (*id).to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_deletes_the_transcripts_of_forgotten_tasks_and_at_shutdown_but_shares_and_foreign_files_stay()
 {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let preset = fake_preset(&home, &server.url(), "");
    tokio::task::spawn_blocking(move || {
        let (child, stderr, base) = start_with(&home, &preset, &["--keep-tasks", "2"]);
        let a = send(&base, "HELLO one", None);
        let sessions = sessions_dir(&home);
        assert_eq!(transcripts(&sessions), set(&[&a.session]));
        // A session of the user's own (`subagent run`) in the same directory.
        let mine = subagent_core::RunId::new().to_string();
        std::fs::write(sessions.join(format!("{mine}.jsonl")), "{}\n").unwrap();
        // Continuing "a" appends to its file: the two tasks share it.
        let a2 = send(&base, "HELLO again", Some(&a.task));
        assert_eq!(a2.session, a.session);
        // Past 2 tasks "a" is forgotten; "a2" still refers to the file.
        let b = send(&base, "HELLO two", None);
        assert!(!kept(&base, &a.task));
        assert_eq!(
            transcripts(&sessions),
            set(&[&a.session, &b.session, &mine])
        );
        // The file is there to continue "a2" (else this run would be refused NOT_RESUMABLE);
        // "a2" is forgotten now and "a3" refers to the file.
        let a3 = send(&base, "HELLO three", Some(&a2.task));
        assert_eq!(a3.session, a.session);
        assert!(!kept(&base, &a2.task));
        // "b" is forgotten: its transcript goes.
        let c = send(&base, "HELLO four", None);
        assert!(!kept(&base, &b.task));
        let left = set(&[&a.session, &c.session, &mine]);
        wait_for("the forgotten task's transcript to go", || {
            transcripts(&sessions) == left
        });
        // Stopped, the server deletes the transcripts of the tasks it kept, and only those.
        let (code, _, rest) = stop(child, stderr);
        assert_eq!(
            (code, rest.as_str()),
            (Some(0), "subagent serve: stopped\n")
        );
        assert_eq!(transcripts(&sessions), set(&[&mine]));
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_keep_transcripts_deletes_none() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let preset = fake_preset(&home, &server.url(), "");
    tokio::task::spawn_blocking(move || {
        let (child, stderr, base) =
            start_with(&home, &preset, &["--keep-tasks", "1", "--keep-transcripts"]);
        let x = send(&base, "HELLO one", None);
        let y = send(&base, "HELLO two", None);
        assert!(!kept(&base, &x.task));
        let (code, _, _) = stop(child, stderr);
        assert_eq!(code, Some(0));
        assert_eq!(
            transcripts(&sessions_dir(&home)),
            set(&[&x.session, &y.session])
        );
    })
    .await
    .unwrap();
}
