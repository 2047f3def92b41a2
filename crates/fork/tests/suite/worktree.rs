//! An isolated fork, with real git: it keeps its parent's conversation and tools, but its file
//! tools and bash work in its worktree, and a path back into the parent's checkout is refused.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use subagent_core::registry::Registry;
use subagent_model::ModelKind;
use subagent_session::ContentBlock;
use subagent_test_support::{FakeServer, git};
use subagent_worktree::Worktrees;

use super::support::{completed, fork_provider, fork_row, model, notified, parent_config};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_isolated_fork_edits_its_worktree_not_the_parents_checkout() {
    let (dir, repo) = git::repository(&[("a.txt", "one\n")]);
    let root = dir.path().canonicalize().unwrap().join("worktrees");
    let escape = repo.join("escaped.txt");
    let scenarios = format!(
        r#"
- name: fork
  match: "FORK-APART"
  steps:
    - tool_calls:
        - {{id: call_fork_write, name: write_file, input: {{path: "forked.txt", content: "forked\n"}}}}
        - {{id: call_fork_escape, name: write_file, input: {{path: "{escape}", content: "escaped\n"}}}}
    - text: "fork done"
- name: parent
  match: "please fork apart"
  steps:
    - tool_calls:
        - {{id: call_fork, name: subagent, input: {{prompt: "FORK-APART edit", isolation: worktree}}}}
    - text: "waiting for the fork"
"#,
        escape = escape.display()
    );
    let server = FakeServer::from_yaml(&notified("parent heard back", &scenarios))
        .await
        .unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let mut registry = Registry::new();
    registry.set_isolator(Arc::new(Worktrees::new().with_root(&root)));
    registry.register(fork_provider()).unwrap();
    let registry = Arc::new(registry);
    let config = parent_config(&model, &repo, &registry, fork_row());
    completed(config, "please fork apart").await;
    let kept: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let worktree = &kept[0];
    assert_eq!(
        std::fs::read_to_string(worktree.join("forked.txt")).unwrap(),
        "forked\n"
    );
    assert!(!escape.exists());
    assert_eq!(git::status(&repo), "");
    // The fork's own second request: its writes' results, the escape refused.
    let requests = server.model_requests();
    let fork_results: Vec<(String, bool)> = requests
        .iter()
        .flat_map(|r| r.messages.last().into_iter())
        .flat_map(|m| m.content.iter())
        .filter_map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } if tool_use_id.starts_with("call_fork_") => Some((content.to_text(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(fork_results.len(), 2, "{fork_results:?}");
    assert_eq!(
        fork_results[0],
        ("Wrote 7 bytes to forked.txt".to_owned(), false)
    );
    assert!(fork_results[1].1, "{fork_results:?}");
    assert!(
        fork_results[1].0.starts_with(&format!(
            "path {} is outside the allowed roots ({})",
            escape.display(),
            worktree.display()
        )),
        "{fork_results:?}"
    );
    // The parent's notification names the kept worktree.
    let notified = requests.last().unwrap().messages.last().unwrap().text();
    assert!(
        notified.contains(&format!("<worktree>\npath: {}\n", worktree.display())),
        "{notified}"
    );
}
