//! `subagent delegate --resume` on spawn: the same path as for claude-code (the `session.id` of
//! a `--json` outcome, from the same `--cwd`), the transcript kept in the state dir.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_session::Message;

use super::support::{delegate_json, fake_setup, json_lines, stderr, subagent};

/// A model told to remember `word` (it answers `remembered`), then asked which word (it answers
/// `recalled`).
fn remembering(word: &str, remembered: &str, recalled: &str) -> String {
    format!(
        "- match: \"remember the word {word}\"\n  steps: [{{text: \"{remembered}\"}}]\n- match: \"which word\"\n  steps: [{{text: \"{recalled}\"}}]\n"
    )
}

fn child() -> String {
    remembering("BETA", "remembered", "you asked me to remember BETA")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_resumes_a_spawn_session() {
    let (server, home, preset) = fake_setup(&child(), "").await;
    let project = home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let delegate = |prompt: &'static str, resume: Option<String>| {
        let (home, preset, project) = (home.path().to_path_buf(), preset.clone(), project.clone());
        async move {
            let args = ["--provider", "spawn", "--cwd", project.to_str().unwrap()];
            delegate_json(&home, &args, &preset, resume.as_deref(), prompt).await
        }
    };
    let first = delegate("remember the word BETA", None).await;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let outcome = json_lines(&first).pop().unwrap();
    assert_eq!(outcome["text"], "remembered");
    let session = outcome["session"].clone();
    let id = session["id"].as_str().unwrap().to_owned();
    // In the state dir (beside the worktrees), keyed by the project directory as Claude Code
    // keys its sessions.
    let key = super::support::state_key(&project);
    let transcript = home
        .path()
        .join(".local/state/subagents/sessions")
        .join(key)
        .join(format!("{id}.jsonl"));
    assert_eq!(
        session,
        json!({
            "provider": "spawn",
            "id": id,
            "cwd": project,
            "transcript": transcript,
        })
    );
    assert!(transcript.is_file());

    let second = delegate("which word did I ask you to remember?", Some(id.clone())).await;
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let outcome = json_lines(&second).pop().unwrap();
    assert_eq!(
        (&outcome["text"], &outcome["session"]),
        (&json!("you asked me to remember BETA"), &session)
    );
    let last = server.model_requests().pop().unwrap();
    assert_eq!(
        last.messages,
        vec![
            Message::user("remember the word BETA"),
            Message::assistant("remembered"),
            Message::user("which word did I ask you to remember?"),
        ]
    );

    // An id that names no session: a clear refusal with its code, nothing started.
    let unknown = delegate("which word?", Some("no-such-session".to_owned())).await;
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert_eq!(
        json_lines(&unknown).pop().unwrap(),
        json!({
            "type": "error",
            "code": "NOT_RESUMABLE",
            "message": "run cannot be resumed: no session \"no-such-session\": a session id is the `session.id` of an earlier outcome (a UUID)"
        })
    );
    assert_eq!(server.model_requests().len(), 2);
}

/// The session id a human-output command printed on stderr (`session: ID …`).
fn printed_session(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|line| line.starts_with("session: "))
        .unwrap_or_else(|| panic!("no session line in: {stderr}"));
    line["session: ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

/// `delegate` without `--json` says which session to resume, and how.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_prints_the_session_to_resume() {
    let (_server, home, preset) = fake_setup(&child(), "").await;
    let output = tokio::task::block_in_place(|| {
        subagent(home.path())
            .env("FAKE_KEY", "test-key")
            .args(["delegate", "--provider", "spawn", "--preset"])
            .arg(&preset)
            .arg("remember the word BETA")
            .output()
            .unwrap()
    });
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    let id = printed_session(&err);
    assert!(
        err.contains(&format!(
            "\nsession: {id} (continue it: subagent delegate --preset {} --provider spawn --resume {id} PROMPT)\n",
            preset.display()
        )),
        "{err}"
    );
    let sessions = home.path().join(".local/state/subagents/sessions");
    let project = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(project.join(format!("{id}.jsonl")).is_file(), "{err}");
}

fn parent() -> String {
    remembering("GAMMA", "remembered GAMMA", "the word was GAMMA")
}

/// `run` prints its session at the end; `run --resume` with it continues that conversation
/// (the model sees the earlier turns first) under the same session id, whose transcript grows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_resumes_an_earlier_run() {
    let (server, home, preset) = fake_setup(&parent(), "").await;
    let run = |args: &[&str]| {
        let mut command = subagent(home.path());
        command
            .env("FAKE_KEY", "test-key")
            .args(["run", "--preset"])
            .arg(&preset)
            .args(args);
        tokio::task::block_in_place(|| command.output().unwrap())
    };
    let first = run(&["remember the word GAMMA"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(super::support::stdout(&first), "remembered GAMMA\n");
    let err = stderr(&first);
    let id = printed_session(&err);
    assert!(
        err.ends_with(&format!(
            "delegations: none\nsession: {id} (continue it: subagent run --preset {} --resume {id} PROMPT)\n",
            preset.display()
        )),
        "{err}"
    );

    let second = run(&[
        "--json",
        "--resume",
        &id,
        "which word did I ask you to remember?",
    ]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let outcome = json_lines(&second).pop().unwrap();
    assert_eq!(
        (&outcome["text"], &outcome["session"]["id"]),
        (&json!("the word was GAMMA"), &json!(id))
    );
    let last = server.model_requests().pop().unwrap();
    assert_eq!(
        last.messages,
        vec![
            Message::user("remember the word GAMMA"),
            Message::assistant("remembered GAMMA"),
            Message::user("which word did I ask you to remember?"),
        ]
    );
    let transcript = std::path::PathBuf::from(outcome["session"]["transcript"].as_str().unwrap());
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(text.contains("the word was GAMMA"), "{text}");
    assert!(text.contains("remembered GAMMA"), "{text}");

    // An id that names no session: refused before the model is asked.
    let unknown = run(&["--json", "--resume", "no-such-session", "which word?"]);
    assert_eq!(
        (unknown.status.code(), json_lines(&unknown)),
        (
            Some(2),
            vec![json!({
                "type": "error",
                "code": "NOT_RESUMABLE",
                "message": "run cannot be resumed: no session \"no-such-session\": a session id is the `session.id` of an earlier outcome (a UUID)"
            })]
        )
    );
    assert_eq!(server.model_requests().len(), 2);
}

/// Without a state dir nothing is kept, so nothing can be resumed: said before the model is
/// asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_resume_without_a_state_dir_is_refused() {
    let (server, home, preset) = fake_setup(&parent(), "").await;
    let output = tokio::task::block_in_place(|| {
        subagent(home.path())
            .env("FAKE_KEY", "test-key")
            .env("HOME", "relative/home")
            .args(["run", "--json", "--preset"])
            .arg(&preset)
            .args([
                "--resume",
                "0b7c2f3e-1111-2222-3333-444455556666",
                "which word?",
            ])
            .output()
            .unwrap()
    });
    assert_eq!(
        (output.status.code(), json_lines(&output)),
        (
            Some(2),
            vec![json!({
                "type": "error",
                "code": "NOT_RESUMABLE",
                "message": "cannot resume session 0b7c2f3e-1111-2222-3333-444455556666: no transcripts are kept without a state dir (set HOME or XDG_STATE_HOME to an absolute path)"
            })]
        ),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.model_requests().len(), 0);
}
