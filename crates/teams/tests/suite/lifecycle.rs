//! A team outlives its leader's run: a new run reopens it and wakes a teammate by resuming its
//! session; cancelling the leader cancels its teammates' runs.

use pretty_assertions::assert_eq;
use subagent_core::{CancellationToken, StopReason};
use subagent_teams::{MemberStatus, TeamStore};
use subagent_test_support::FakeServer;

use super::support::{leader, requests_for, results};

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
- name: lead-noted
  match: "teammate-message"
  steps:
    - text: "Noted."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_run_reopens_the_team_and_resumes_a_teammate() {
    let server = FakeServer::from_yaml(AGAIN).await.unwrap();
    let project = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let first = leader(&server, project.path(), state.path())
        .agent
        .start_prompt("LEAD-ONE", CancellationToken::new())
        .outcome()
        .await;
    assert_eq!(
        first.status,
        StopReason::Completed,
        "{:?}",
        first.diagnostic
    );
    let team = TeamStore::new(state.path().join("teams"))
        .open("again")
        .unwrap();
    let erin = team.config().unwrap().member("erin").cloned().unwrap();
    assert_eq!(erin.status, MemberStatus::Idle, "left resumable");
    let session = erin.session_id.clone().unwrap();

    let second = leader(&server, project.path(), state.path());
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
    let second = second
        .agent
        .start_prompt("LEAD-TWO", CancellationToken::new())
        .outcome()
        .await;
    assert_eq!(
        second.status,
        StopReason::Completed,
        "{:?}",
        second.diagnostic
    );
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

const HOLD: &str = r#"
- name: lead
  match: "LEAD-HOLD"
  steps:
    - tool_calls: [{name: TeamCreate, input: {team_name: held}}]
    - tool_calls: [{name: subagent, input: {name: fay, team_name: held, prompt: "MATE-FAY-HOLD: think."}}]
    - text: "Waiting."
- name: fay
  match: "MATE-FAY-HOLD"
  steps:
    - text: "thinking"
      wait_gate_mid: never
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_leader_cancels_its_teammates() {
    let server = FakeServer::from_yaml(HOLD).await.unwrap();
    let project = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let run = leader(&server, project.path(), state.path())
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
    let team = TeamStore::new(state.path().join("teams"))
        .open("held")
        .unwrap();
    let fay = team.config().unwrap().member("fay").cloned().unwrap();
    assert_eq!(fay.status, MemberStatus::Idle);
}
