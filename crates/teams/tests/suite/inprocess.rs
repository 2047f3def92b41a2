//! A leader and in-process (spawn) teammates against the fake model server: messages both
//! ways, a shared task list with a dependency, claims refused, shutdown, and a message to a busy
//! teammate taken at its next turn.

use pretty_assertions::assert_eq;
use subagent_core::CancellationToken;
use subagent_teams::{LEADER, MemberStatus, TaskStatus};

use super::support::{World, assert_completed, assert_result, requests_for, results};

/// Scenarios are chosen by the latest genuine prompt, and a teammate's message is one: each
/// agent reacts to the message it gets. First match wins, so the specific ones come first.
fn team() -> String {
    subagent_test_support::scenarios::CREW_LEAD.to_owned()
        + r#"
    - tool_calls:
        - {name: subagent, input: {name: alice, team_name: crew, description: alice, prompt: "MATE-ALICE: claim task 1, then 3 when it is free."}}
        - {name: subagent, input: {name: bob, team_name: crew, description: bob, prompt: "MATE-BOB: wait for alice."}}
    - text: "The team is at work."
- name: lead-all-done
  match: "ALICE-DONE-ALL"
  steps:
    - tool_calls: [{name: SendMessage, input: {to: "*", message: {type: shutdown_request, reason: "all tasks are done"}}}]
    - text: "Asked the team to shut down."
- name: mate-shutdown
  match: "shutdown_request"
  steps:
    - tool_calls: [{name: SendMessage, input: {to: team-lead, message: {type: shutdown_response, request_id: "shutdown-1@*", approve: true, reason: "my work is done"}}}]
    - text: "Shutting down."
- name: alice-second-half
  match: "BOB-DONE-2"
  steps:
    - tool_calls: [{id: alice-claims-3, name: TaskUpdate, input: {taskId: "3", owner: alice}}]
    - tool_calls: [{name: TaskUpdate, input: {taskId: "3", status: completed}}]
    - tool_calls: [{name: SendMessage, input: {to: team-lead, summary: all done, message: "ALICE-DONE-ALL: tasks 1, 2 and 3 are completed"}}]
    - text: "alice: finished."
- name: bob-turn
  match: "ALICE-CLAIMED-1"
  steps:
    - tool_calls: [{id: bob-claims-1, name: TaskUpdate, input: {taskId: "1", owner: bob}}]
    - tool_calls: [{id: bob-claims-2, name: TaskUpdate, input: {taskId: "2", owner: bob}}]
    - tool_calls: [{name: TaskUpdate, input: {taskId: "2", status: completed}}]
    - tool_calls: [{name: SendMessage, input: {to: alice, message: "BOB-DONE-2: task 2 is completed"}}]
    - text: "bob: task 2 done."
- name: alice-first-half
  match: "MATE-ALICE"
  steps:
    - tool_calls: [{id: alice-claims-1, name: TaskUpdate, input: {taskId: "1", owner: alice}}]
    - tool_calls: [{id: alice-claims-3-early, name: TaskUpdate, input: {taskId: "3", owner: alice}}]
    - tool_calls: [{name: TaskUpdate, input: {taskId: "1", status: completed}}]
    - tool_calls: [{name: SendMessage, input: {to: bob, message: "ALICE-CLAIMED-1: task 1 is mine and done; take task 2"}}]
    - text: "alice: waiting for bob."
- name: bob-first
  match: "MATE-BOB"
  steps:
    - text: "bob: waiting for alice."
"#
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_teammates_split_three_tasks_talk_and_shut_down() {
    let world = World::noting(&team()).await;
    let server = &world.server;
    World::lead(world.leader(), "LEAD-TEAM: split the work").await;
    assert_eq!(server.violations(), Vec::<String>::new());

    // The team as a restarted run finds it on disk.
    let team = world.team("crew");
    let config = team.config().unwrap();
    let members: Vec<(String, MemberStatus, String)> = config
        .members
        .iter()
        .map(|m| (m.name.clone(), m.status, m.provider.clone()))
        .collect();
    assert_eq!(
        members,
        [
            (LEADER.to_owned(), MemberStatus::Lead, String::new()),
            ("alice".into(), MemberStatus::Stopped, "spawn".into()),
            ("bob".into(), MemberStatus::Stopped, "spawn".into()),
        ]
    );
    assert!(config.members[1..].iter().all(|m| m.session_id.is_some()));
    let tasks: Vec<(String, TaskStatus, Option<String>, Vec<String>)> = team
        .task_list()
        .unwrap()
        .tasks
        .into_iter()
        .map(|t| (t.subject, t.status, t.owner, t.blocked_by))
        .collect();
    assert_eq!(
        tasks,
        [
            (
                "alpha".into(),
                TaskStatus::Completed,
                Some("alice".into()),
                vec![]
            ),
            (
                "beta".into(),
                TaskStatus::Completed,
                Some("bob".into()),
                vec![]
            ),
            (
                "gamma".into(),
                TaskStatus::Completed,
                Some("alice".into()),
                vec!["1".into(), "2".into()]
            ),
        ]
    );

    // The claims the rules refused, as the teammates read them.
    let requests = server.requests();
    let mut alice = requests_for(&requests, "MATE-ALICE");
    alice.extend(requests_for(&requests, "You are alice"));
    let mut bob = requests_for(&requests, "MATE-BOB");
    bob.extend(requests_for(&requests, "You are bob"));
    assert_result(
        &alice,
        "alice-claims-3-early",
        "TASK_BLOCKED: task 3 is blocked by task(s) 1, 2 that are not completed yet",
        true,
    );
    assert_result(
        &bob,
        "bob-claims-1",
        "TASK_ALREADY_CLAIMED: task 1 is already claimed by alice; pick another task",
        true,
    );
    assert_result(
        &bob,
        "bob-claims-2",
        "Updated task #2: status pending, owner bob.",
        false,
    );
    assert_result(
        &alice,
        "alice-claims-3",
        "Updated task #3: status pending, owner alice.",
        false,
    );

    // Messages went both ways and each arrived once.
    let delivered = |requests: &[&subagent_test_support::RecordedRequest], marker: &str| {
        let last = requests
            .iter()
            .max_by_key(|r| r.messages.len())
            .expect("a request");
        last.messages
            .iter()
            .flat_map(|m| m.content.iter())
            .filter_map(|b| b.as_text())
            .filter(|t| t.contains(marker) && t.starts_with("<teammate-message"))
            .count()
    };
    assert_eq!(delivered(&bob, "ALICE-CLAIMED-1"), 1);
    assert_eq!(delivered(&alice, "BOB-DONE-2"), 1);
    let inbox = |name: &str| {
        std::fs::read_to_string(
            world
                .state
                .path()
                .join(format!("teams/crew/inboxes/{name}.json")),
        )
        .unwrap()
    };
    assert!(inbox(LEADER).contains("ALICE-DONE-ALL"));
    assert!(
        !inbox("alice").contains("\"read\": false"),
        "{}",
        inbox("alice")
    );
    assert!(
        !inbox("bob").contains("\"read\": false"),
        "{}",
        inbox("bob")
    );
    assert!(
        !inbox(LEADER).contains("\"read\": false"),
        "{}",
        inbox(LEADER)
    );
}

const BUSY: &str = r#"
- name: lead
  match: "LEAD-BUSY"
  steps:
    - tool_calls: [{name: TeamCreate, input: {team_name: busy}}]
    - tool_calls: [{id: start-carol, name: subagent, input: {name: carol, team_name: busy, prompt: "MATE-CAROL: list the tasks."}}]
    - tool_calls: [{name: SendMessage, input: {to: carol, message: "PING-CAROL: one more thing"}}]
    - text: "Sent."
- name: carol-ping
  match: "PING-CAROL"
  steps:
    - text: "carol: got the ping."
- name: carol
  match: "MATE-CAROL"
  steps:
    - wait_gate: carol-busy
      tool_calls: [{name: TaskList}]
    - text: "carol: never asked"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_to_a_busy_teammate_arrives_at_its_next_turn() {
    let world = World::noting(BUSY).await;
    let server = &world.server;
    let lead = world.leader();
    let mut run = lead
        .agent
        .start_prompt("LEAD-BUSY: ping carol", CancellationToken::new());
    let mut events = run.take_events().unwrap();
    let seen = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(event) = futures::StreamExt::next(&mut events).await {
            seen.push(event);
        }
        seen
    });
    // The leader's four requests (the last answers SendMessage's result) and carol's first,
    // held on the gate: the message is in carol's inbox while her turn is in flight.
    server.wait_requests(5).await;
    let requests = server.requests();
    let lead_requests = requests_for(&requests, "LEAD-BUSY");
    assert_eq!(lead_requests.len(), 4);
    assert_eq!(
        results(&lead_requests)
            .last()
            .map(|(_, text, _)| text.clone()),
        Some("Message sent to carol.".to_owned())
    );
    server.gate("carol-busy").open();
    let outcome = run.outcome().await;
    assert_completed(&outcome);
    let requests = server.requests();
    let carol = requests_for(&requests, "MATE-CAROL");
    assert_eq!(
        carol.len(),
        2,
        "the ping came in her second turn, not a new run"
    );
    let last = carol[1].messages.last().unwrap();
    let texts: Vec<&str> = last.content.iter().filter_map(|b| b.as_text()).collect();
    assert_eq!(
        texts,
        [
            "<teammate-message teammate_id=\"team-lead\">\nPING-CAROL: one more thing\n</teammate-message>"
        ]
    );
    assert_eq!(carol[1].scenario, Some(("carol-ping".to_owned(), 0)));
    // carol's work shows in the leader's stream, under the call that started her.
    let carol_calls: Vec<(String, Option<String>)> = seen
        .await
        .unwrap()
        .into_iter()
        .filter_map(|event| match event {
            subagent_core::RunEvent::ToolCall {
                name,
                parent_tool_use_id,
                ..
            } if name == "TaskList" => Some((name, parent_tool_use_id)),
            _ => None,
        })
        .collect();
    assert_eq!(
        carol_calls,
        [("TaskList".to_owned(), Some("start-carol".to_owned()))]
    );
}
