//! One isolated child on a real repository: where it works, what is kept or removed, and what
//! is refused.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use subagent_core::{Error, StopReason, WorktreeReport};

use super::support::{
    Actor, git, id_of, isolated, isolating, outcome_of, registry, status, subagent_branches,
    worktree_path, worktrees, worktrees_root,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_changes_stay_in_its_worktree_which_is_kept_with_its_branch_and_diffstat() {
    let (_dir, repo, actor, registry) = isolating();
    let run = registry
        .start(
            "actor",
            isolated(
                "write new.txt hello; write ../a.txt changed; delete b.txt",
                &repo.join("sub"),
            ),
        )
        .await
        .unwrap();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    let branches = subagent_branches(&repo);
    assert_eq!(branches.len(), 1);
    let branch = &branches[0];
    let path = worktree_path(&repo, branch);
    assert_eq!(id_of(branch).len(), 8);
    // The child worked in the parent's subdirectory, inside the worktree.
    assert_eq!(*actor.cwds.lock().unwrap(), vec![path.join("sub")]);
    assert_eq!(
        outcome.worktree,
        Some(WorktreeReport {
            path: path.clone(),
            branch: branch.clone(),
            diffstat: " a.txt       | 3 +--\n sub/b.txt   | 1 -\n sub/new.txt | 1 +\n 3 files changed, 2 insertions(+), 3 deletions(-)".into(),
        })
    );
    // The parent's checkout is untouched and clean; the worktree is kept, its files as the
    // child left them, its own index untouched (the new file is still untracked there).
    assert_eq!(status(&repo), "");
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).unwrap(),
        "one\ntwo\n"
    );
    assert!(repo.join("sub/b.txt").is_file());
    assert!(!repo.join("sub/new.txt").exists());
    assert_eq!(worktrees(&repo), vec![repo.clone(), path.clone()]);
    assert_eq!(status(&path), " M a.txt\n D sub/b.txt\n?? sub/new.txt\n");
}

/// Git trusts a file's size and times (whole seconds) unless the index was written no earlier
/// than the file: an edit that keeps the size, made in the second the worktree was checked out,
/// is a change only if the changes are read with the index's own time. Found in CI, where the
/// end of the run fell in the next second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_size_edit_in_the_second_of_the_checkout_is_a_change() {
    let (_dir, repo, _, registry) = isolating();
    // "one\ntwo\n" and "changed\n" are both 8 bytes.
    let outcome = outcome_of(&registry, "write a.txt changed; pause 1100", &repo).await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    let report = outcome.worktree.expect("the edit is a change");
    assert_eq!(
        report.diffstat,
        " a.txt | 3 +--\n 1 file changed, 1 insertion(+), 2 deletions(-)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_worktree_is_removed_with_its_branch_ignored_files_do_not_count() {
    let (_dir, repo, actor, registry) = isolating();
    for prompt in ["nothing", "write target/build.log built"] {
        let outcome = outcome_of(&registry, prompt, &repo).await;
        assert_eq!(
            (outcome.status, outcome.worktree),
            (StopReason::Completed, None),
            "{prompt}"
        );
    }
    let cwds = actor.cwds.lock().unwrap().clone();
    assert_eq!(cwds.len(), 2);
    for cwd in &cwds {
        assert!(cwd.starts_with(worktrees_root(&repo)), "{cwd:?}");
        assert!(!cwd.exists(), "{} was not removed", cwd.display());
    }
    assert_eq!(worktrees(&repo), vec![repo.clone()]);
    assert_eq!(subagent_branches(&repo), Vec::<String>::new());
    assert_eq!(status(&repo), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_on_the_branch_is_a_change() {
    let (_dir, repo, _, registry) = isolating();
    let outcome = outcome_of(&registry, "write c.txt see; commit", &repo).await;
    let report = outcome.worktree.unwrap();
    assert_eq!(
        report.diffstat,
        " c.txt | 1 +\n 1 file changed, 1 insertion(+)"
    );
    // The branch holds the child's commit; the parent's branch does not.
    assert_eq!(git(&report.path, &["log", "--format=%s"]), "child\nfirst\n");
    assert_eq!(git(&repo, &["log", "--format=%s"]), "first\n");
    assert_eq!(status(&report.path), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_child_follows_the_same_rules() {
    let (_dir, repo, _, registry) = isolating();
    // Cancelled after a change: kept.
    let run = registry
        .start("actor", isolated("wait; write partial.txt half", &repo))
        .await
        .unwrap();
    run.cancel();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Cancelled);
    let report = outcome.worktree.unwrap();
    assert_eq!(
        report.diffstat,
        " partial.txt | 1 +\n 1 file changed, 1 insertion(+)"
    );
    // Cancelled with nothing changed: removed.
    let run = registry
        .start("actor", isolated("wait", &repo))
        .await
        .unwrap();
    run.cancel();
    let outcome = run.outcome().await;
    assert_eq!(
        (outcome.status, outcome.worktree),
        (StopReason::Cancelled, None)
    );
    assert_eq!(worktrees(&repo), vec![repo.clone(), report.path.clone()]);
    assert_eq!(subagent_branches(&repo), vec![report.branch]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_a_repository_or_before_a_first_commit_is_invalid_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().canonicalize().unwrap().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let actor = Arc::new(Actor::default());
    let registry = registry(&actor, &worktrees_root(&plain));
    let error = registry
        .start("actor", isolated("nothing", &plain))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        Error::invalid(format!(
            "worktree isolation needs the parent's working directory to be inside a git repository: {} is not (fatal: not a git repository (or any of the parent directories): .git)",
            plain.display()
        ))
    );

    let empty = dir.path().canonicalize().unwrap().join("empty");
    std::fs::create_dir(&empty).unwrap();
    git(&empty, &["init", "--quiet"]);
    let error = registry
        .start("actor", isolated("nothing", &empty))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        Error::invalid(format!(
            "worktree isolation needs a commit to start from: the repository at {} has none yet",
            empty.display()
        ))
    );
    assert_eq!(
        *actor.cwds.lock().unwrap(),
        Vec::<std::path::PathBuf>::new()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_the_provider_refuses_leaves_no_worktree() {
    let (_dir, repo, actor, registry) = isolating();
    let error = registry
        .start("actor", isolated("fail", &repo))
        .await
        .unwrap_err();
    assert_eq!(error, Error::spawn_failed("the actor refuses"));
    // It was started in a worktree, which is gone with its branch.
    let cwds = actor.cwds.lock().unwrap().clone();
    assert_eq!(cwds.len(), 1);
    assert!(!cwds[0].exists());
    assert_eq!(worktrees(&repo), vec![repo.clone()]);
    assert_eq!(subagent_branches(&repo), Vec::<String>::new());
}
