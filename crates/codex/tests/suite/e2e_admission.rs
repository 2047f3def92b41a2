//! Admission (`max_starting`) against the real `codex`: past the bound a child waits, queued,
//! and starts once one before it has started; a queued child cancelled starts nothing.

use pretty_assertions::assert_eq;

use super::harness::Harness;

const SCENARIOS: &str = r#"
- name: hello
  match: "(?i)^say hi$"
  steps:
    - text: "hi from fake"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_bound_a_child_waits_queued_and_a_cancelled_one_starts_nothing() {
    let harness = Harness::new(SCENARIOS).await;
    let provider = harness.provider(|config| config.max_starting = Some(1));
    subagent_test_support::runs::assert_admission(
        &provider,
        || harness.request("say hi").build(),
        "hi from fake",
    )
    .await;
    // Two threads asked the model; the cancelled child never ran.
    assert_eq!(harness.server.model_requests().len(), 2);
}
