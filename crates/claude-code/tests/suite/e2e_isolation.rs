//! Worktree isolation end to end: the real `claude`, started through a registry with the
//! worktree isolator from a parent in a real git repository, edits in its worktree and not in
//! the parent's checkout, even when it names a file of the checkout by its absolute path.

use std::sync::Arc;

use subagent_claude_code::ClaudePermissionMode;
use subagent_test_support::{FakeServer, git, runs};
use subagent_worktree::Worktrees;

use super::harness::Harness;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_isolated_childs_edits_land_in_its_worktree_not_in_the_parents_checkout() {
    let (_dir, repo) = git::repository(&[("a.txt", "one\n")]);
    let escape = repo.join("escaped.txt");
    // The child writes edited.txt and appends to a.txt by relative paths (its cwd), then tries
    // to write into the parent's checkout by absolute path.
    let server = FakeServer::from_yaml(&format!(
        r#"
- name: isolated
  match: "ISOLATED-EDIT"
  steps:
    - tool_calls:
        - name: Write
          input: {{file_path: "edited.txt", content: "edited\n"}}
    - tool_calls:
        - name: Bash
          input: {{command: "echo two >> a.txt", description: "append here"}}
    - tool_calls:
        - name: Write
          input: {{file_path: "{escape}", content: "escaped\n"}}
    - text: "done editing"
"#,
        escape = escape.display()
    ))
    .await
    .unwrap();
    let h = Harness::new().await;
    // Configured looser than isolation allows: the isolated child still runs in acceptEdits.
    let provider = h.provider(|config| {
        config.permission_mode = ClaudePermissionMode::BypassPermissions;
        config.allowed_tools = vec!["Bash".into()];
        config.env.insert("ANTHROPIC_BASE_URL".into(), server.url());
        config.env.insert("IS_SANDBOX".into(), "1".into());
    });
    let root = repo.parent().unwrap().join("worktrees");
    let worktrees = Arc::new(Worktrees::new().with_root(&root));
    // The parent's checkout is untouched: the absolute write was refused.
    let request = h.request("ISOLATED-EDIT please");
    runs::assert_isolated_edits(Arc::new(provider), worktrees, request, &root, &repo).await;
    assert!(!escape.exists());
}
