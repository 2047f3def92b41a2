//! File and search tools through the agent loop: confinement, edits, gitignore, permissions,
//! result order.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use subagent_core::{PermissionMode, StopReason};
use subagent_runtime::{
    Decision, PermissionBroker, PermissionPolicy, PermissionRequest, PermissionRule,
};
use subagent_test_support::FakeServer;

use super::support::{bash, call, completed_results, config, last_results, one_turn, run};

fn escapes() -> String {
    one_turn(
        "escape",
        &[
            call("read_file", r#"{path: "../outside/secret.txt"}"#),
            call("read_file", r#"{path: "OUTSIDE_ABS"}"#),
            call("read_file", r#"{path: "link/secret.txt"}"#),
            call("write_file", r#"{path: "link/planted.txt", content: "x"}"#),
            call("ls", r#"{path: "link"}"#),
            call("read_file", r#"{path: "inside.txt"}"#),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_escapes_are_refused_symlinks_included() {
    let top = tempfile::tempdir().unwrap();
    let work = top.path().join("work");
    let outside = top.path().join("outside");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    std::fs::write(work.join("inside.txt"), "one\ntwo\n").unwrap();
    std::os::unix::fs::symlink(&outside, work.join("link")).unwrap();
    let scenario = escapes().replace("OUTSIDE_ABS", outside.join("secret.txt").to_str().unwrap());
    let server = FakeServer::from_yaml(&scenario).await.unwrap();
    let outcome = run(config(&server, &work), "escape please").await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    let requests = server.model_requests();
    let results = last_results(&requests[1]);
    assert_eq!(results.len(), 6);
    for (text, is_error) in &results[..5] {
        assert!(is_error, "{text}");
        assert!(text.contains("is outside the allowed roots"), "{text}");
        assert!(!text.contains("secret\n"), "{text}");
    }
    assert!(results[0].0.contains("\"..\" components are not allowed"));
    assert!(results[2].0.contains("symlink"), "{}", results[2].0);
    assert_eq!(results[5], ("     1\tone\n     2\ttwo\n".to_owned(), false));
    assert!(!outside.join("planted.txt").exists());
}

fn edits() -> String {
    one_turn(
        "edit",
        &[
            call(
                "edit_file",
                r#"{path: "a.txt", old_string: "x", new_string: "y"}"#,
            ),
            call(
                "edit_file",
                r#"{path: "b.txt", old_string: "absent", new_string: "y"}"#,
            ),
            call(
                "edit_file",
                r#"{path: "c.txt", old_string: "x", new_string: "y", replace_all: true}"#,
            ),
            call(
                "edit_file",
                r#"{path: "d.txt", old_string: "only", new_string: "one"}"#,
            ),
            call("glob", r#"{pattern: "**/*.txt"}"#),
            call("grep", r#"{pattern: "needle", output_mode: "content"}"#),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_need_a_unique_match_and_search_respects_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "x x").unwrap();
    std::fs::write(root.join("b.txt"), "x").unwrap();
    std::fs::write(root.join("c.txt"), "x x").unwrap();
    std::fs::write(root.join("d.txt"), "the only needle").unwrap();
    std::fs::write(root.join(".gitignore"), "ignored.txt\n").unwrap();
    std::fs::write(root.join("ignored.txt"), "needle").unwrap();
    let server = FakeServer::from_yaml(&edits()).await.unwrap();
    let results = completed_results(&server, config(&server, root), "edit please").await;
    assert_eq!(
        results,
        vec![
            (
                "old_string occurs 2 times in a.txt; give more context to make it unique, or set replace_all; nothing changed".to_owned(),
                true
            ),
            ("old_string was not found in b.txt; nothing changed".to_owned(), true),
            ("Replaced 2 occurrences in c.txt".to_owned(), false),
            ("Replaced 1 occurrence in d.txt".to_owned(), false),
            ("a.txt\nb.txt\nc.txt\nd.txt".to_owned(), false),
            ("d.txt:1:the one needle".to_owned(), false),
        ]
    );
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "x x");
    assert_eq!(std::fs::read_to_string(root.join("c.txt")).unwrap(), "y y");
}

struct Recorder {
    asked: Mutex<Vec<String>>,
    answer: Decision,
}

#[async_trait]
impl PermissionBroker for Recorder {
    async fn ask(&self, request: PermissionRequest) -> Decision {
        self.asked
            .lock()
            .unwrap()
            .push(request.subject.unwrap_or_default());
        self.answer
    }
}

fn write() -> String {
    one_turn(
        "write",
        &[
            call("write_file", r#"{path: "new.txt", content: "hi"}"#),
            call("read_file", r#"{path: "missing.txt"}"#),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_goes_to_the_broker_except_in_the_background() {
    for (background, answer, asked, written) in [
        (false, Decision::Deny, 1, false),
        (false, Decision::Allow, 1, true),
        (true, Decision::Allow, 0, false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let server = FakeServer::from_yaml(&write()).await.unwrap();
        let broker = Arc::new(Recorder {
            asked: Mutex::new(Vec::new()),
            answer,
        });
        let mut config = config(&server, dir.path());
        config.permissions =
            PermissionPolicy::new(PermissionMode::Default).with_broker(broker.clone());
        config.background = background;
        let outcome = run(config, "write it").await;
        assert_eq!(outcome.status, StopReason::Completed);
        assert_eq!(broker.asked.lock().unwrap().len(), asked);
        assert_eq!(dir.path().join("new.txt").exists(), written);
        let results = last_results(&server.model_requests()[1]);
        if background {
            assert!(
                results[0].0.contains("background run never asks"),
                "{}",
                results[0].0
            );
        }
        // Read-only tools are never asked about.
        assert!(results[1].0.contains("missing.txt"), "{}", results[1].0);
    }
}

fn denied_spellings() -> String {
    one_turn(
        "spell",
        &[
            call("read_file", r#"{path: "secret/key"}"#),
            call("read_file", r#"{path: "./secret/key"}"#),
            call("read_file", r#"{path: "secret//key"}"#),
            call("read_file", r#"{path: "secret/./key"}"#),
            call("read_file", r#"{path: "ROOT_ABS/secret/key"}"#),
            call("read_file", r#"{path: "alias/key"}"#),
            call(
                "write_file",
                r#"{path: "./secret/planted.txt", content: "x"}"#,
            ),
            call("grep", r#"{pattern: "hidden", path: "./secret"}"#),
            call("read_file", r#"{path: "public.txt"}"#),
        ],
    )
}

/// A deny rule on a path holds whatever spelling of that path the model uses: `./`, doubled or
/// `.` components, the absolute path, a symlink inside the roots leading to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_deny_rules_hold_for_every_spelling_of_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("secret")).unwrap();
    std::fs::write(root.join("secret/key"), "hidden").unwrap();
    std::fs::write(root.join("public.txt"), "open").unwrap();
    std::os::unix::fs::symlink(root.join("secret"), root.join("alias")).unwrap();
    let scenario = denied_spellings().replace("ROOT_ABS", root.to_str().unwrap());
    let server = FakeServer::from_yaml(&scenario).await.unwrap();
    let mut config = config(&server, &root);
    for rule in [
        "read_file(secret/*)",
        "write_file(secret/*)",
        "grep(secret)",
    ] {
        config.permissions = config
            .permissions
            .rule(PermissionRule::parse(rule, Decision::Deny).unwrap());
    }
    let results = completed_results(&server, config, "spell it").await;
    assert_eq!(results.len(), 9);
    for (text, is_error) in &results[..8] {
        assert!(is_error, "{text}");
        assert!(text.starts_with("permission denied"), "{text}");
        assert!(!text.contains("hidden"), "{text}");
    }
    assert_eq!(results[8], ("     1\topen\n".to_owned(), false));
    assert!(!root.join("secret/planted.txt").exists());
}

fn special() -> String {
    one_turn(
        "special",
        &[
            call("read_file", r#"{path: "pipe"}"#),
            call(
                "edit_file",
                r#"{path: "pipe", old_string: "x", new_string: "y"}"#,
            ),
            call("read_file", r#"{path: "big.txt"}"#),
            call(
                "edit_file",
                r#"{path: "big.txt", old_string: "needle", new_string: "y"}"#,
            ),
            call("grep", r#"{pattern: "needle"}"#),
            call("read_file", r#"{path: "small.txt"}"#),
            call(
                "grep",
                r#"{pattern: "needle", output_mode: "content", glob: "long.txt"}"#,
            ),
        ],
    )
}

/// A FIFO in the project blocks a reader until someone writes; a file over the read limit would
/// be loaded whole. `read_file` and `edit_file` refuse both as tool errors, grep skips them
/// (saying so for the big one), and the run goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifos_and_oversized_files_are_tool_errors_not_a_hang() {
    use subagent_runtime::tools::MAX_READ_BYTES;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let fifo = root.join("pipe");
    subagent_test_support::procs::mkfifo(&fifo);
    let mut big = vec![b'a'; usize::try_from(MAX_READ_BYTES).unwrap()];
    big.extend_from_slice(b"\nneedle\n");
    std::fs::write(root.join("big.txt"), &big).unwrap();
    std::fs::write(root.join("small.txt"), "needle\n").unwrap();
    // One matching line of 100,000 bytes (multi-byte characters, so the cut must find a
    // character boundary): grep shows its start, not all of it.
    std::fs::write(
        root.join("long.txt"),
        format!("needle{}\n", "é".repeat(50_000)),
    )
    .unwrap();
    let server = FakeServer::from_yaml(&special()).await.unwrap();
    let run = run(config(&server, &root), "special files");
    let outcome = match tokio::time::timeout(std::time::Duration::from_secs(60), run).await {
        Ok(outcome) => outcome,
        Err(_) => {
            // Unblock a reader stuck on the FIFO (so the runtime can shut down), then fail.
            std::thread::spawn(move || std::fs::OpenOptions::new().write(true).open(&fifo));
            panic!("the run blocked on the FIFO");
        }
    };
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    let fifo_error =
        "pipe: a FIFO (named pipe), not a regular file; refused without reading it".to_owned();
    let big_error = format!(
        "big.txt: larger than the limit of {MAX_READ_BYTES} bytes; refused (read part of it with bash, e.g. `head -c` or `sed -n`)"
    );
    assert_eq!(
        last_results(&server.model_requests()[1]),
        vec![
            (fifo_error.clone(), true),
            (fifo_error, true),
            (big_error.clone(), true),
            (big_error, true),
            (
                format!(
                    "long.txt\nsmall.txt\n(not searched, over {MAX_READ_BYTES} bytes: big.txt)"
                ),
                false
            ),
            ("     1\tneedle\n".to_owned(), false),
            (
                format!("long.txt:1:needle{}… (line cut)", "é".repeat(997)),
                false
            ),
        ]
    );
}

fn ordered() -> String {
    one_turn(
        "in order",
        &[
            bash("echo one > f.txt"),
            call(
                "edit_file",
                r#"{path: "f.txt", old_string: "one", new_string: "two"}"#,
            ),
            call("read_file", r#"{path: "f.txt"}"#),
            call("grep", r#"{pattern: "two", output_mode: "content"}"#),
        ],
    )
}

/// Calls of one message that change things run one at a time, in the order the model gave
/// them, and a read after a change sees it (as Claude Code runs them): the edit finds the file
/// the command wrote, the read and the search see the edit. Reads between changes still run
/// together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_sees_what_the_calls_before_it_in_the_same_message_changed() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::from_yaml(&ordered()).await.unwrap();
    let results = completed_results(&server, config(&server, dir.path()), "in order please").await;
    assert_eq!(
        results[1..],
        [
            ("Replaced 1 occurrence in f.txt".to_owned(), false),
            ("     1\ttwo\n".to_owned(), false),
            ("f.txt:1:two".to_owned(), false),
        ]
    );
}

/// As the user is about to be asked about a call, the settings' `Notification` hooks hear of it
/// (Claude Code's `permission_prompt`); a background run asks nobody and notifies nobody.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_hook_hears_of_each_question_put_to_the_user() {
    for background in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let server = FakeServer::from_yaml(&write()).await.unwrap();
        let log = dir.path().join("notified.jsonl");
        let hooks = subagent_settings::Hooks::from_value(
            &serde_json::json!({"Notification": [{"matcher": "permission_prompt", "hooks": [{"type": "command", "command": format!("cat >> {}; echo >> {}", log.display(), log.display())}]}]}),
            subagent_settings::Scope::User,
            None,
            "test",
        )
        .unwrap();
        let broker = Arc::new(Recorder {
            asked: Mutex::new(Vec::new()),
            answer: Decision::Allow,
        });
        let mut config = config(&server, dir.path());
        config.permissions = PermissionPolicy::new(PermissionMode::Default)
            .with_settings(Arc::new(subagent_runtime::SettingsRules {
                permissions: subagent_settings::Permissions::default(),
                project_root: dir.path().to_path_buf(),
                home: None,
                hooks,
                env: Vec::new(),
                additional_dirs: Vec::new(),
            }))
            .with_broker(broker.clone());
        config.background = background;
        run(config, "write it").await;
        let notified = std::fs::read_to_string(&log).unwrap_or_default();
        if background {
            assert_eq!(notified, "");
            continue;
        }
        let event: serde_json::Value =
            serde_json::from_str(notified.lines().next().unwrap()).unwrap();
        assert_eq!(event["hook_event_name"], "Notification");
        assert_eq!(event["notification_type"], "permission_prompt");
        assert_eq!(
            event["message"],
            "Claude needs your permission to use Write"
        );
        assert_eq!(broker.asked.lock().unwrap().len(), 1);
    }
}
