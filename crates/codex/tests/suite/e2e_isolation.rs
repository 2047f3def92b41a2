//! Worktree isolation end to end: the real `codex`, started through a registry with the
//! worktree isolator from a parent in a real git repository, edits in its worktree and not in
//! the parent's checkout.

use std::sync::Arc;

use subagent_codex::SandboxMode;
use subagent_test_support::{git, runs};
use subagent_worktree::Worktrees;

use super::harness::Harness;

const ISOLATED: &str = r#"
- name: isolated
  match: "(?i)edit in isolation"
  steps:
    - tool_calls:
        - name: exec_command
          input: {cmd: "printf 'edited\n' > edited.txt && printf 'two\n' >> a.txt"}
    - text: "done editing"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_isolated_childs_edits_land_in_its_worktree_not_in_the_parents_checkout() {
    let (_dir, repo) = git::repository(&[("a.txt", "one\n")]);
    let harness = Harness::new(ISOLATED).await;
    // Configured looser than isolation allows: the isolated child still runs in
    // workspace-write.
    let provider = harness.provider(|c| c.sandbox = SandboxMode::DangerFullAccess);
    let root = repo.parent().unwrap().join("worktrees");
    let worktrees = Arc::new(Worktrees::new().with_root(&root));
    let request = harness.request("edit in isolation please");
    runs::assert_isolated_edits(Arc::new(provider), worktrees, request, &root, &repo).await;
}
