//! A provider's run driven to its end, and the checks the product providers' end-to-end tests
//! share.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt as _;
use subagent_core::{Outcome, Run, RunEvent, StopReason};

/// Every event and the outcome of `run`, which must end within `limit`.
///
/// # Panics
/// When the run does not end in time or its events were taken already.
pub async fn finish_within(mut run: Run, limit: Duration) -> (Vec<RunEvent>, Outcome) {
    let events = run
        .take_events()
        .unwrap_or_else(|| panic!("the run's events were taken already"));
    let collected = tokio::spawn(events.collect::<Vec<_>>());
    let outcome = tokio::time::timeout(limit, run.outcome())
        .await
        .unwrap_or_else(|_| panic!("the run did not end within {limit:?}"));
    let events = collected
        .await
        .unwrap_or_else(|e| panic!("collecting the events: {e}"));
    (events, outcome)
}

/// The texts of `events`' `Text` events, nested ones included.
#[must_use]
pub fn texts(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Checks an isolated child's run whose edits (`edited.txt` written, `a.txt` appended to)
/// were made in its worktree: it completed, its changed worktree was kept under `root` with
/// those two changes, `repo`'s checkout is clean and the child's session is the worktree's.
///
/// # Panics
/// When any of that does not hold.
pub fn assert_edited_in_worktree(events: &[RunEvent], outcome: &Outcome, root: &Path, repo: &Path) {
    assert_eq!(
        outcome.status,
        StopReason::Completed,
        "{outcome:?}\n{events:#?}"
    );
    let report = outcome
        .worktree
        .clone()
        .unwrap_or_else(|| panic!("the changed worktree is kept: {events:#?}"));
    assert!(report.path.starts_with(root), "{report:?}");
    assert_eq!(
        report.diffstat,
        " a.txt      | 1 +\n edited.txt | 1 +\n 2 files changed, 2 insertions(+)"
    );
    assert_eq!(
        std::fs::read_to_string(report.path.join("edited.txt")).ok(),
        Some("edited\n".to_owned())
    );
    assert_eq!(crate::git::status(repo), "");
    let session = outcome
        .session
        .as_ref()
        .unwrap_or_else(|| panic!("a session: {outcome:?}"));
    assert_eq!(session.cwd.as_deref(), Some(report.path.as_path()));
}
