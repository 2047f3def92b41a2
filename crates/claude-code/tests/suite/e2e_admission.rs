//! Admission (`max_starting`) against the real `claude`: past the bound a child waits, queued,
//! and starts once one before it has started; a queued child cancelled starts nothing.

use pretty_assertions::assert_eq;

use super::harness::Harness;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_bound_a_child_waits_queued_and_a_cancelled_one_starts_nothing() {
    let h = Harness::new().await;
    let provider = h.provider(|config| config.max_starting = Some(1));
    subagent_test_support::runs::assert_admission(
        &provider,
        || h.request("say hi").build(),
        "hi from fake",
    )
    .await;
    // Two children asked the model; the cancelled one never ran.
    assert_eq!(h.model_requests().len(), 2);
}
