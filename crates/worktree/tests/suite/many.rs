//! Twenty isolated children on one repository at once: each gets a worktree of its own, the
//! ten that changed something keep theirs, the ten that did not leave nothing behind.

use std::collections::BTreeSet;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use subagent_core::StopReason;

use super::support::{
    Actor, isolated, registry, repository, status, subagent_branches, worktree_path, worktrees,
    worktrees_root,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_isolated_children_at_once_work_and_clean_up() {
    let (_dir, repo) = repository();
    let actor = Arc::new(Actor::default());
    let registry = Arc::new(registry(&actor, &worktrees_root(&repo)));
    let starts = (0..20).map(|i| {
        let registry = Arc::clone(&registry);
        let repo = repo.clone();
        tokio::spawn(async move {
            // Even children write a file named after them, odd ones change nothing.
            let prompt = if i % 2 == 0 {
                format!("write child-{i}.txt {i}")
            } else {
                "nothing".to_owned()
            };
            let run = registry
                .start("actor", isolated(&prompt, &repo))
                .await
                .unwrap();
            (i, run.outcome().await)
        })
    });
    let mut kept = BTreeSet::new();
    for joined in futures::future::join_all(starts).await {
        let (i, outcome) = joined.unwrap();
        assert_eq!(
            outcome.status,
            StopReason::Completed,
            "child {i}: {outcome:?}"
        );
        match outcome.worktree {
            Some(report) => {
                assert_eq!(i % 2, 0, "child {i} changed nothing but kept {report:?}");
                assert_eq!(
                    report.diffstat,
                    format!(" child-{i}.txt | 1 +\n 1 file changed, 1 insertion(+)")
                );
                assert_eq!(report.path, worktree_path(&repo, &report.branch));
                assert_eq!(
                    std::fs::read_to_string(report.path.join(format!("child-{i}.txt"))).unwrap(),
                    format!("{i}\n")
                );
                kept.insert(report.branch);
            }
            None => assert_eq!(i % 2, 1, "child {i} changed a file but kept nothing"),
        }
    }
    // Twenty distinct worktrees were made; ten are left, with their branches, and the user's
    // checkout shows nothing.
    let cwds: BTreeSet<_> = actor.cwds.lock().unwrap().iter().cloned().collect();
    assert_eq!(cwds.len(), 20);
    assert_eq!(kept.len(), 10);
    assert_eq!(
        subagent_branches(&repo)
            .into_iter()
            .collect::<BTreeSet<_>>(),
        kept
    );
    let mut expected: Vec<_> = kept.iter().map(|b| worktree_path(&repo, b)).collect();
    expected.sort();
    let mut listed = worktrees(&repo);
    assert_eq!(listed.remove(0), repo);
    listed.sort();
    assert_eq!(listed, expected);
    assert_eq!(status(&repo), "");
}
