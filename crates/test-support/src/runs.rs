//! A provider's run driven to its end, and the checks the product providers' end-to-end tests
//! share.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use subagent_core::isolation::Isolator;
use subagent_core::registry::Registry;
use subagent_core::{
    Isolation, Outcome, Run, RunEvent, StartRequest, StartRequestBuilder, StopReason,
    SubagentProvider,
};

/// Asserts that `outcome` completed with the answer `text`.
///
/// # Panics
/// When it did not.
pub fn assert_answered(outcome: &Outcome, text: &str) {
    assert_eq!(
        (outcome.status, outcome.text.as_str()),
        (StopReason::Completed, text),
        "{outcome:?}"
    );
}

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

/// How long [`run_to_end`] lets a run take before the test fails instead of hanging (a bound,
/// not a speed check: a product CLI's first start may be slow on a loaded machine).
pub const RUN_LIMIT: Duration = Duration::from_secs(300);

/// What [`run_to_end`] starts: a request or its builder.
pub trait IntoRequest {
    /// The request.
    fn into_request(self) -> StartRequest;
}

impl IntoRequest for StartRequest {
    fn into_request(self) -> StartRequest {
        self
    }
}

impl IntoRequest for StartRequestBuilder {
    fn into_request(self) -> StartRequest {
        self.build()
    }
}

/// Starts `request` on `provider` and collects the run's events and outcome
/// ([`finish_within`] [`RUN_LIMIT`]).
///
/// # Panics
/// When the provider refuses the request or the run does not end in time.
pub async fn run_to_end(
    provider: &(impl SubagentProvider + ?Sized),
    request: impl IntoRequest,
) -> (Vec<RunEvent>, Outcome) {
    let run = provider
        .start(request.into_request())
        .await
        .unwrap_or_else(|e| panic!("the provider refused the request: {e}"));
    finish_within(run, RUN_LIMIT).await
}

/// [`run_to_end`], and the run must have completed (its outcome and events shown when not).
///
/// # Panics
/// As [`run_to_end`], and when the run ended otherwise.
pub async fn completed(
    provider: &(impl SubagentProvider + ?Sized),
    request: impl IntoRequest,
) -> (Vec<RunEvent>, Outcome) {
    let (events, outcome) = run_to_end(provider, request).await;
    assert_eq!(
        outcome.status,
        StopReason::Completed,
        "{outcome:?}\n{events:#?}"
    );
    (events, outcome)
}

/// `text` with every `<duration_ms>N</duration_ms>` made `<duration_ms>D</duration_ms>` (a task
/// notification's times, for a whole-text assert).
#[must_use]
pub fn no_durations(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("<duration_ms>") {
        let (before, after) = rest.split_at(at + "<duration_ms>".len());
        out.push_str(before);
        out.push('D');
        rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Reads `run`'s events until `at` holds for one (or they end), then cancels the run; its
/// outcome, which must come within `limit`.
///
/// # Panics
/// When the run's events were taken already or its outcome does not come in time.
pub async fn cancel_at(mut run: Run, at: impl Fn(&RunEvent) -> bool, limit: Duration) -> Outcome {
    let mut events = run
        .take_events()
        .unwrap_or_else(|| panic!("the run's events were taken already"));
    while let Some(event) = events.next().await {
        if at(&event) {
            break;
        }
    }
    run.cancel();
    tokio::time::timeout(limit, run.outcome())
        .await
        .unwrap_or_else(|_| panic!("no outcome within {limit:?} of the cancel"))
}

/// The messages of `events`' `Progress` events, in order.
#[must_use]
pub fn progress(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Progress { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect()
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

/// Runs `request` isolated in a worktree (from a parent in `repo`) on `provider`, through a
/// registry whose isolator is `isolator` (keeping worktrees under `root`), and checks it with
/// [`assert_edited_in_worktree`].
///
/// # Panics
/// When the registry refuses the provider or the request, the run does not end within
/// [`RUN_LIMIT`], or the check fails.
pub async fn assert_isolated_edits(
    provider: Arc<dyn SubagentProvider>,
    isolator: Arc<dyn Isolator>,
    request: StartRequestBuilder,
    root: &Path,
    repo: &Path,
) {
    let name = provider.name().to_owned();
    let mut registry = Registry::new();
    registry
        .register(provider)
        .unwrap_or_else(|e| panic!("registering {name}: {e}"));
    registry.set_isolator(isolator);
    let request = request.cwd(repo).isolation(Isolation::Worktree).build();
    let run = registry
        .start(&name, request)
        .await
        .unwrap_or_else(|e| panic!("{name} refused the request: {e}"));
    let (events, outcome) = finish_within(run, RUN_LIMIT).await;
    assert_edited_in_worktree(&events, &outcome, root, repo);
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

/// Admission through `provider`, a product row built with `max_starting: 1`: three children
/// started together, each with `request()` (answered `answer` by the model); the third is
/// cancelled while it waits. Checks that the first started at once, the second waited
/// (`Queued { ahead: 0 }` right after `Started`) and then answered, and the third ended
/// `cancelled` having waited (the caller then checks that only two children asked its model).
///
/// # Panics
/// When a child does not behave so.
pub async fn assert_admission(
    provider: &dyn SubagentProvider,
    request: impl Fn() -> StartRequest,
    answer: &str,
) {
    let start = || async {
        provider
            .start(request())
            .await
            .unwrap_or_else(|error| panic!("a child does not start: {error}"))
    };
    let first = start().await;
    let second = start().await;
    let third = start().await;
    // The third is cancelled while it waits: nothing of it starts.
    third.cancel();
    let limit = Duration::from_secs(120);
    let (third_events, third_outcome) = finish_within(third, limit).await;
    assert_eq!(
        third_outcome.status,
        StopReason::Cancelled,
        "{third_outcome:?}"
    );
    assert!(
        matches!(third_events.get(1), Some(RunEvent::Queued { .. })),
        "{third_events:?}"
    );
    let (first_events, first_outcome) = finish_within(first, limit).await;
    let (second_events, second_outcome) = finish_within(second, limit).await;
    assert_answered(&first_outcome, answer);
    assert_answered(&second_outcome, answer);
    assert!(
        !first_events
            .iter()
            .any(|event| matches!(event, RunEvent::Queued { .. })),
        "{first_events:?}"
    );
    assert!(
        matches!(second_events.get(1), Some(RunEvent::Queued { ahead: 0 })),
        "{second_events:?}"
    );
}
