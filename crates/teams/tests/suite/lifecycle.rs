//! A team outlives its leader's run: a new run reopens it and wakes a teammate by resuming its
//! session; cancelling the leader cancels its teammates' runs.

use pretty_assertions::assert_eq;
use subagent_core::{CancellationToken, StopReason};
use subagent_teams::MemberStatus;

use super::support::{World, assert_completed, lead_starting, requests_for, results};

const AGAIN: &str = r#"
- name: lead-one
  match: "LEAD-ONE"
  steps:
    - tool_calls: [{name: TeamCreate, input: {team_name: again}}]
    - tool_calls: [{name: subagent, input: {name: erin, team_name: again, prompt: "MATE-ERIN: remember the word KIWI."}}]
    - text: "Started erin."
- name: lead-two
  match: "LEAD-TWO"
  steps:
    - tool_calls: [{id: reopen, name: TeamCreate, input: {team_name: again}}]
    - tool_calls: [{name: SendMessage, input: {to: erin, message: "ERIN-RECALL: which word?"}}]
    - text: "Asked erin."
- name: erin-recall
  match: "ERIN-RECALL"
  steps:
    - text: "erin: the word was KIWI."
- name: erin
  match: "MATE-ERIN"
  steps:
    - text: "erin: remembered."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_run_reopens_the_team_and_resumes_a_teammate() {
    let world = World::noting(AGAIN).await;
    let server = &world.server;
    World::lead(world.leader(), "LEAD-ONE").await;
    let team = world.team("again");
    let erin = team.config().unwrap().member("erin").cloned().unwrap();
    assert_eq!(erin.status, MemberStatus::Idle, "left resumable");
    let session = erin.session_id.clone().unwrap();

    let second = world.leader();
    let create = second
        .agent
        .config()
        .tools
        .tools()
        .iter()
        .map(|tool| tool.spec())
        .find(|spec| spec.name == "TeamCreate")
        .unwrap();
    assert!(
        create
            .description
            .ends_with("\n\nTeams of this project on disk: again (erin idle)."),
        "{}",
        create.description
    );
    World::lead(second, "LEAD-TWO").await;
    let requests = server.requests();
    let reopened = results(&requests_for(&requests, "LEAD-TWO"));
    assert_eq!(
        reopened[0].1,
        "Reopened team again. Members: erin (spawn, idle). Tasks:\nNo tasks."
    );
    // erin continued her conversation: the recall request starts with her first task.
    let recall = requests
        .iter()
        .find(|r| r.scenario == Some(("erin-recall".to_owned(), 0)))
        .unwrap();
    assert!(recall.messages[0].text().contains("MATE-ERIN"));
    assert_eq!(recall.messages.len(), 3);
    let erin = team.config().unwrap().member("erin").cloned().unwrap();
    assert_eq!(
        erin.session_id,
        Some(session),
        "the same session, continued"
    );
    assert!(team.unread("erin").unwrap().is_empty());
}

/// A leader that starts fay, who thinks until cancelled.
fn hold() -> String {
    lead_starting(
        "LEAD-HOLD",
        "held",
        "fay",
        "MATE-FAY-HOLD: think.",
        "Waiting.",
    ) + r#"
- name: fay
  match: "MATE-FAY-HOLD"
  steps:
    - text: "thinking"
      wait_gate_mid: never
"#
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_leader_cancels_its_teammates() {
    let world = World::new(&hold()).await;
    let server = &world.server;
    let cancel = CancellationToken::new();
    let run = world
        .leader()
        .agent
        .start_prompt("LEAD-HOLD", cancel.clone());
    // The leader's three requests and fay's, held on its gate.
    server.wait_requests(4).await;
    assert_eq!(requests_for(&server.requests(), "MATE-FAY-HOLD").len(), 1);
    cancel.cancel();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Cancelled);
    // fay's model call, streaming, was cut off.
    server.wait_dropped(1).await;
    let team = world.team("held");
    let fay = team.config().unwrap().member("fay").cloned().unwrap();
    assert_eq!(fay.status, MemberStatus::Idle);
}

const LATE: &str = r#"
- name: lead
  match: "LEAD-LATE"
  steps:
    - tool_calls: [{name: TeamCreate, input: {team_name: late}}]
    - tool_calls: [{name: subagent, input: {name: hal, team_name: late, prompt: "MATE-HAL: stop at once."}}]
    - text: "Started hal."
- name: lead-late-note
  match: "NOTHING-LEFT"
  steps:
    - wait_gate: lead-send
      tool_calls: [{name: SendMessage, input: {to: hal, message: "LATE-NOTE: one more thing"}}]
    - text: "Told hal."
- name: hal
  match: "MATE-HAL"
  steps:
    - wait_gate: hal-go
      tool_calls: [{name: SendMessage, input: {to: team-lead, message: {type: shutdown_response, request_id: "-", approve: true, reason: "NOTHING-LEFT"}}}]
    - wait_gate: hal-end
      text: "hal: bye."
"#;

/// A message sent to a teammate that approved its shutdown but had not stopped yet stays
/// unread: the leader must not wait for it forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_left_for_a_stopped_teammate_does_not_hold_the_leader() {
    let world = World::noting(LATE).await;
    let server = &world.server;
    let run = world
        .leader()
        .agent
        .start_prompt("LEAD-LATE", CancellationToken::new());
    // The leader's three requests, then hal's first (held).
    server.wait_requests(4).await;
    server.gate("hal-go").open();
    // hal approved its shutdown and its last turn is held; the leader's answer to the approval
    // is held too, until hal's turn is in flight.
    server.wait_requests(6).await;
    server.gate("lead-send").open();
    // The leader's fifth request answers the LATE-NOTE SendMessage, sent while hal still ran.
    server.wait_requests(7).await;
    let requests = server.requests();
    assert_eq!(
        results(&requests_for(&requests, "LEAD-LATE"))
            .last()
            .map(|(_, text, _)| text.clone()),
        Some("Message sent to hal.".to_owned())
    );
    server.gate("hal-end").open();
    let outcome = run.outcome().await;
    assert_completed(&outcome);
    let team = world.team("late");
    let hal = team.config().unwrap().member("hal").cloned().unwrap();
    assert_eq!(hal.status, MemberStatus::Stopped);
    let unread: Vec<String> = team
        .unread("hal")
        .unwrap()
        .into_iter()
        .map(|m| m.text)
        .collect();
    assert_eq!(unread, ["LATE-NOTE: one more thing"], "kept, not delivered");
}
