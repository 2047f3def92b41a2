//! Worktree isolation through a parent's delegation tool, with real git: an isolated spawn
//! child's file tools and bash work in its worktree, an absolute path back into the parent's
//! checkout is refused, and the parent hears where the kept worktree is.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pretty_assertions::assert_eq;
use subagent_core::StopReason;
use subagent_core::registry::Registry;
use subagent_model::{Model, ModelKind};
use subagent_runtime::DelegationToolConfig;
use subagent_test_support::git::{self, git, status};
use subagent_test_support::{FakeServer, RecordedRequest};
use subagent_worktree::Worktrees;

use super::support::run;
use super::support::{agents, last_results, model, parent_config, requests_for, spawn_registry};

/// A repository with one commit (`a.txt`) and the directory its worktrees go to.
fn repository() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (dir, repo) = git::repository(&[("a.txt", "one\n")]);
    let root = dir.path().canonicalize().unwrap().join("worktrees");
    (dir, repo, root)
}

/// A registry capped at 3 with spawn and the worktree isolator (worktrees in `root`).
fn registry(model: &Arc<dyn Model>, root: &Path) -> Arc<Registry> {
    let mut registry = spawn_registry(model, 3);
    registry.set_isolator(Arc::new(Worktrees::new().with_root(root)));
    Arc::new(registry)
}

/// Runs a parent in `cwd` on `scenarios` until it ends; the server's requests.
async fn parent(
    scenarios: &str,
    cwd: &Path,
    root: &Path,
    prompt: &str,
) -> (FakeServer, Vec<RecordedRequest>) {
    let server = FakeServer::from_yaml(scenarios).await.unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let registry = registry(&model, root);
    let config = parent_config(
        &model,
        cwd,
        &registry,
        DelegationToolConfig::new("spawn"),
        agents(),
    );
    let outcome = run(config, prompt).await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    assert_eq!(server.violations(), Vec::<String>::new());
    let requests = server.model_requests();
    (server, requests)
}

/// The only directory in `root`: the one worktree kept.
fn only_worktree(root: &Path) -> PathBuf {
    let kept: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    kept[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_isolated_child_works_in_its_worktree_and_cannot_write_back_into_the_checkout() {
    let (_dir, repo, root) = repository();
    let escape = repo.join("escaped.txt");
    let scenarios = format!(
        r#"
- name: child
  match: "ISOLATED-CHILD"
  steps:
    - tool_calls:
        - {{id: call_write, name: write_file, input: {{path: "edited.txt", content: "edited\n"}}}}
        - {{id: call_escape, name: write_file, input: {{path: "{escape}", content: "escaped\n"}}}}
        - {{id: call_up, name: write_file, input: {{path: "../up.txt", content: "up\n"}}}}
        - {{id: call_pwd, name: bash, input: {{command: "pwd"}}}}
    - text: "child edited"
- name: parent
  match: "please isolate"
  steps:
    - tool_calls:
        - name: subagent
          input: {{prompt: "ISOLATED-CHILD edit", isolation: worktree}}
    - text: "parent done"
"#,
        escape = escape.display()
    );
    let (_server, requests) = parent(&scenarios, &repo, &root, "please isolate").await;
    let worktree = only_worktree(&root);
    let child = requests_for(&requests, "ISOLATED-CHILD");
    let results = last_results(child[1]);
    let outputs: Vec<(&str, bool)> = results
        .iter()
        .map(|(_, text, is_error)| (text.as_str(), *is_error))
        .collect();
    assert_eq!(outputs[0], ("Wrote 7 bytes to edited.txt", false));
    // Back into the parent's checkout, by absolute path or by `..`: refused.
    assert!(outputs[1].1, "{outputs:?}");
    assert!(
        outputs[1].0.starts_with(&format!(
            "path {} is outside the allowed roots ({})",
            escape.display(),
            worktree.display()
        )),
        "{outputs:?}"
    );
    assert!(outputs[2].1, "{outputs:?}");
    // Commands start in the worktree.
    assert!(
        outputs[3].0.contains(&worktree.display().to_string()),
        "{outputs:?}"
    );
    assert_eq!(
        std::fs::read_to_string(worktree.join("edited.txt")).unwrap(),
        "edited\n"
    );
    assert!(!escape.exists());
    assert!(!root.join("up.txt").exists());
    assert_eq!(status(&repo), "");
    // The parent hears where the kept worktree is, its branch and what changed.
    let branch = git(&worktree, &["branch", "--show-current"]);
    let parent = requests_for(&requests, "please isolate");
    let result = &last_results(parent[1])[0];
    assert!(!result.2, "{result:?}");
    assert!(
        result.1.starts_with("child edited\n\n<usage>"),
        "{}",
        result.1
    );
    assert!(
        result.1.ends_with(&format!(
            "</usage>\n<worktree>\npath: {}\nbranch: {}\nchanges:\n edited.txt | 1 +\n 1 file changed, 1 insertion(+)\n</worktree>",
            worktree.display(),
            branch.trim()
        )),
        "{}",
        result.1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_childs_notification_carries_its_worktree_and_an_unchanged_one_is_gone() {
    let (_dir, repo, root) = repository();
    let scenarios = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "heard back"
- name: writer
  match: "BG-WRITER"
  steps:
    - tool_calls:
        - {name: write_file, input: {path: "bg.txt", content: "bg\n"}}
    - text: "wrote bg"
- name: reader
  match: "FG-READER"
  steps:
    - tool_calls:
        - {name: read_file, input: {path: "a.txt"}}
    - text: "read a"
- name: parent
  match: "please isolate both"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "BG-WRITER write", isolation: worktree, run_in_background: true}
        - name: subagent
          input: {prompt: "FG-READER read", isolation: worktree}
    - text: "waiting"
"#;
    let (_server, requests) = parent(scenarios, &repo, &root, "please isolate both").await;
    // The reader changed nothing: its worktree and branch are gone; the writer's is kept.
    let worktree = only_worktree(&root);
    let branches = git(
        &repo,
        &[
            "branch",
            "--list",
            "subagent/*",
            "--format=%(refname:short)",
        ],
    );
    assert_eq!(branches.lines().count(), 1, "{branches}");
    let parent = requests_for(&requests, "please isolate both");
    let reader = &last_results(parent[1])[1];
    assert!(!reader.1.contains("<worktree>"), "{}", reader.1);
    let notified = parent.last().unwrap().messages.last().unwrap().text();
    assert!(
        notified.contains(&format!(
            "<worktree>\npath: {}\nbranch: {}\nchanges:\n bg.txt | 1 +\n 1 file changed, 1 insertion(+)\n</worktree>",
            worktree.display(),
            branches.trim()
        )),
        "{notified}"
    );
    assert_eq!(status(&repo), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_isolation_values_and_a_parent_outside_a_repository_are_invalid_arguments() {
    let (_dir, repo, root) = repository();
    let outside = root.parent().unwrap().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let scenarios = r#"
- name: parent
  match: "please try"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "NEVER-RUNS", isolation: remote}
        - name: subagent
          input: {prompt: "NEVER-RUNS", isolation: worktree}
    - text: "parent done"
"#;
    let (_server, requests) = parent(scenarios, &outside, &root, "please try").await;
    assert_eq!(requests_for(&requests, "NEVER-RUNS").len(), 0);
    let parent = requests_for(&requests, "please try");
    let results: Vec<(String, bool)> = last_results(parent[1])
        .into_iter()
        .map(|(_, text, is_error)| (text, is_error))
        .collect();
    assert_eq!(
        results,
        vec![
            (
                "INVALID_ARGUMENTS: invalid arguments: isolation \"remote\" is not available (valid: worktree)".to_owned(),
                true
            ),
            (
                format!(
                    "INVALID_ARGUMENTS: invalid arguments: worktree isolation needs the parent's working directory to be inside a git repository: {} is not (fatal: not a git repository (or any of the parent directories): .git)",
                    outside.display()
                ),
                true
            ),
        ]
    );
    assert!(!root.exists());
    assert_eq!(status(&repo), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_isolated_children_of_one_parent_at_once_work_and_clean_up() {
    let (_dir, repo, root) = repository();
    let calls: String = (0..20)
        .map(|i| {
            format!(
                "        - {{name: subagent, input: {{prompt: \"CHILD-{i:02} work\", isolation: worktree}}}}\n"
            )
        })
        .collect();
    let children: String = (0..20)
        .map(|i| {
            // Even children write a file, odd ones only read.
            let step = if i % 2 == 0 {
                format!("{{name: write_file, input: {{path: \"child-{i:02}.txt\", content: \"{i}\\n\"}}}}")
            } else {
                "{name: read_file, input: {path: \"a.txt\"}}".to_owned()
            };
            format!(
                "- name: child-{i:02}\n  match: \"CHILD-{i:02}\"\n  steps:\n    - tool_calls:\n        - {step}\n    - text: \"child {i} done\"\n"
            )
        })
        .collect();
    let scenarios = format!(
        "{children}- name: parent\n  match: \"please fan out\"\n  steps:\n    - tool_calls:\n{calls}    - text: \"parent done\"\n"
    );
    let (_server, requests) = parent(&scenarios, &repo, &root, "please fan out").await;
    let parent = requests_for(&requests, "please fan out");
    let results = last_results(parent[1]);
    assert_eq!(results.len(), 20);
    for (i, (_, text, is_error)) in results.iter().enumerate() {
        assert!(!is_error, "child {i}: {text}");
        assert_eq!(text.contains("<worktree>"), i % 2 == 0, "child {i}: {text}");
    }
    let mut kept: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let files: Vec<String> = std::fs::read_dir(&path)
                .unwrap()
                .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with("child-"))
                .collect();
            files.join(",")
        })
        .collect();
    kept.sort();
    assert_eq!(
        kept,
        (0..20)
            .step_by(2)
            .map(|i| format!("child-{i:02}.txt"))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        git(&repo, &["branch", "--list", "subagent/*"])
            .lines()
            .count(),
        10
    );
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 11);
    assert_eq!(status(&repo), "");
}
