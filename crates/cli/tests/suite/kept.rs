//! A resumed child keeps what it ran with (issue 25, point 17): its provider, its agent type
//! and its worktree, whether `delegate --resume` or a parent's `resume` continues it, and
//! however the delegation row routes untyped calls.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_test_support::FakeServer;

use super::support::write_file;
use super::support::{Project, json_lines, stderr};

/// A preset on the fake server: spawn (editing without asking), a second spawn row, a fork row
/// that takes the delegation row's untyped calls.
fn preset(dir: &Path, url: &str) -> String {
    write_file(dir, format!("kept-{}.yaml", url.rsplit(':').next().unwrap()), format!(
            "version: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: FAKE_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\n    config:\n      permission_mode: accept-edits\n  - name: spawn2\n    kind: spawn\n  - name: fork\n    kind: fork\ntools:\n  - name: subagent\n    provider: spawn\n    fork: fork\n"
        )).to_string_lossy().into_owned()
}

fn subagent_json(project: &Project, args: &[&str]) -> (std::process::Output, Value) {
    let output = project
        .subagent()
        .env("FAKE_KEY", "test-key")
        .args(args)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    (output, outcome)
}

const READ_ONLY: [&str; 4] = ["ls", "read_file", "glob", "grep"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_child_keeps_its_provider_and_agent_type() {
    let first = FakeServer::from_yaml(
        "- match: \"look around\"\n  steps: [{text: looked}]\n- match: \"look again\"\n  steps: [{text: again}]\n",
    )
    .await
    .unwrap();
    let project = Project::new();
    let p1 = preset(&project.home, &first.url());
    let (session, resumed) = tokio::task::block_in_place(|| {
        let (_, outcome) = subagent_json(
            &project,
            &[
                "delegate",
                "--json",
                "--preset",
                &p1,
                "--provider",
                "spawn2",
                "--agent",
                "explore",
                "look around",
            ],
        );
        let session = outcome["session"]["id"].as_str().unwrap().to_owned();
        // Neither --provider nor --agent: both come back with the session.
        let (_, resumed) = subagent_json(
            &project,
            &[
                "delegate",
                "--json",
                "--preset",
                &p1,
                "--resume",
                &session,
                "look again",
            ],
        );
        (session, resumed)
    });
    assert_eq!(resumed["provider"], "spawn2");
    assert_eq!(resumed["text"], "again");
    assert_eq!(resumed["session"]["id"], session.as_str());
    let requests = first.model_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].tool_names(), READ_ONLY, "resumed as explore");

    // What it ran with is kept beside its transcript, private to the user.
    let record = project
        .home
        .join(".local/state/subagents/sessions")
        .read_dir()
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join(format!("{session}.child.json"));
    let mode = std::fs::metadata(&record).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(
        (&kept["provider"], &kept["agent_type"]),
        (&"spawn2".into(), &"explore".into())
    );

    // A parent's untyped resume on a row that forks untyped calls continues the same child:
    // on spawn2, as explore, in the foreground (a fork would run in the background).
    let second = FakeServer::from_yaml(&format!(
        "- match: \"carry on with it\"\n  steps:\n    - tool_calls: [{{name: subagent, input: {{prompt: \"look once more\", resume: \"{session}\"}}}}]\n    - text: parent done\n- match: \"look once more\"\n  steps: [{{text: once more}}]\n"
    ))
    .await
    .unwrap();
    let p2 = preset(&project.home, &second.url());
    let (_, ran) = tokio::task::block_in_place(|| {
        subagent_json(
            &project,
            &["run", "--json", "--preset", &p2, "carry on with it"],
        )
    });
    let delegation = &ran["delegations"][0];
    assert_eq!(delegation["is_error"], false, "{delegation}");
    assert!(
        delegation["result"]
            .as_str()
            .unwrap()
            .starts_with("once more"),
        "{delegation}"
    );
    let requests = second.model_requests();
    assert_eq!(
        requests[1].tool_names(),
        READ_ONLY,
        "the child resumed as explore"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_child_continues_in_the_worktree_it_kept() {
    let server = FakeServer::from_yaml(
        r#"
- match: "WRITE-IT"
  steps:
    - tool_calls: [{name: write_file, input: {path: "new.txt", content: "kept\n"}}]
    - text: wrote
- match: "READ-IT"
  steps:
    - tool_calls: [{name: read_file, input: {path: "new.txt"}}]
    - text: read
"#,
    )
    .await
    .unwrap();
    let project = Project::new();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(&project.path)
            .env("HOME", &project.home)
            .status()
            .unwrap();
        assert!(status.success());
    };
    git(&["add", "--all"]);
    git(&["commit", "-q", "-m", "first"]);
    let p = preset(&project.home, &server.url());
    let (wrote, read) = tokio::task::block_in_place(|| {
        let (_, wrote) = subagent_json(
            &project,
            &[
                "delegate",
                "--json",
                "--preset",
                &p,
                "--provider",
                "spawn",
                "--isolation",
                "worktree",
                "WRITE-IT",
            ],
        );
        let session = wrote["session"]["id"].as_str().unwrap().to_owned();
        let (_, read) = subagent_json(
            &project,
            &[
                "delegate", "--json", "--preset", &p, "--resume", &session, "READ-IT",
            ],
        );
        (wrote, read)
    });
    let worktree = wrote["worktree"]["path"].as_str().unwrap();
    assert!(
        !project.path.join("new.txt").exists(),
        "the checkout is untouched"
    );
    assert_eq!(read["status"], "completed", "{read}");
    assert_eq!(read["session"]["cwd"], worktree);
    // The resumed child read the file it wrote in its worktree.
    let requests = server.model_requests();
    let last = requests.last().unwrap().body.as_ref().unwrap().to_string();
    assert!(last.contains("kept\\n"), "{last}");
    assert!(!last.contains("is_error\":true"), "{last}");
}
