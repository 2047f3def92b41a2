//! Plan approval: a teammate started with `mode: "plan"` (or `plan_mode_required`) is held
//! read-only by its permission layer until the leader approves its plan. Before approval a write
//! and a command are refused (nothing is written); after it, the teammate's next run writes; a
//! rejection keeps it read-only and its next prompt carries the feedback; only the leader
//! approves, and only a plan that awaits an answer.

use pretty_assertions::assert_eq;
use subagent_test_support::RecordedRequest;

use super::support::{World, assert_result, requests_for, result_of, results};

fn offers(request: &RecordedRequest, tool: &str) -> bool {
    request.tool_names().iter().any(|name| name == tool)
}

/// The scenarios of a leader that starts gus in plan mode and approves its plan with the
/// feedback "GUS-GO", on which gus writes `out.txt`; `gus_steps` are gus's first run.
fn approved(gus_steps: &str) -> String {
    format!(
        r#"
- name: lead
  match: "LEAD-PLAN"
  steps:
    - tool_calls: [{{name: TeamCreate, input: {{team_name: planners}}}}]
    - tool_calls: [{{name: subagent, input: {{name: gus, team_name: planners, mode: plan, prompt: "MATE-GUS: write out.txt."}}}}]
    - text: "Started gus."
- name: lead-approves
  match: "GUS-PLAN"
  steps:
    - tool_calls: [{{id: lead-approves, name: SendMessage, input: {{to: gus, message: {{type: plan_approval_response, request_id: "plan-1@gus", approve: true, feedback: "GUS-GO"}}}}}}]
    - text: "Approved gus's plan."
- name: gus-go
  match: "GUS-GO"
  steps:
    - tool_calls: [{{id: gus-writes, name: write_file, input: {{path: out.txt, content: "after approval"}}}}]
    - text: "gus: written."
- name: gus
  match: "MATE-GUS"
  steps:
{gus_steps}"#
    )
}

/// Gus's approved run wrote `out.txt` without a refusal.
fn assert_wrote_after_approval(world: &World, gus: &[&RecordedRequest]) {
    assert_eq!(result_of(gus, "gus-writes").1, false);
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("out.txt")).unwrap(),
        "after approval"
    );
}

const APPROVED: &str = r#"    - tool_calls: [{id: gus-writes-early, name: write_file, input: {path: out.txt, content: "too early"}}]
    - tool_calls: [{id: gus-runs-early, name: bash, input: {command: "echo hi > ran.txt"}}]
    - tool_calls: [{id: gus-submits, name: ExitPlanMode, input: {plan: "GUS-PLAN: write out.txt"}}]
    - tool_calls: [{id: gus-self-approves, name: SendMessage, input: {to: team-lead, message: {type: plan_approval_response, request_id: "plan-1@gus", approve: true}}}]
    - text: "gus: plan submitted."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_mode_teammate_writes_only_once_the_lead_approves_its_plan() {
    let world = World::noting(&approved(APPROVED)).await;
    World::lead(world.leader(), "LEAD-PLAN").await;
    let server = &world.server;
    assert_eq!(server.violations(), Vec::<String>::new());
    let requests = server.requests();
    let gus = requests_for(&requests, "MATE-GUS");

    // Before approval: read-only tools and the team tools with ExitPlanMode; a write and a
    // command refused with the reason, nothing written; the teammate cannot approve itself.
    assert!(offers(gus[0], "ExitPlanMode") && offers(gus[0], "read_file"));
    assert!(!offers(gus[0], "write_file") && !offers(gus[0], "bash"));
    let (early, refused) = result_of(&gus, "gus-writes-early");
    assert!(refused, "{early}");
    assert!(
        early.contains("plan mode") && early.contains("until team-lead approves your plan"),
        "{early}"
    );
    assert!(result_of(&gus, "gus-runs-early").1);
    assert!(!world.project.path().join("ran.txt").exists());
    assert_result(
        &gus,
        "gus-submits",
        "Your plan was sent to team-lead for approval (request_id plan-1@gus). End your turn now: the answer arrives as a message. Until team-lead approves, you stay in plan mode (read-only).",
        false,
    );
    assert_result(
        &gus,
        "gus-self-approves",
        "NOT_LEADER: only the team lead may approve or reject a plan",
        true,
    );

    // The leader read the plan and approved it.
    let lead = requests_for(&requests, "LEAD-PLAN");
    assert_result(
        &lead,
        "lead-approves",
        "Approved gus's plan: gus leaves plan mode and starts on the changes.",
        false,
    );

    // After approval: gus's next run may write, and did.
    let woken: Vec<&RecordedRequest> = gus
        .iter()
        .copied()
        .filter(|r| r.messages.iter().any(|m| m.text().contains("GUS-GO")))
        .collect();
    assert!(offers(woken[0], "write_file") && !offers(woken[0], "ExitPlanMode"));
    assert_wrote_after_approval(&world, &gus);
    let config = world.team("planners").config().unwrap();
    let member = config.member("gus").unwrap();
    assert_eq!(
        (member.plan_mode_required, &member.plan_request),
        (false, &None)
    );
}

const REJECTED: &str = r#"
- name: lead
  match: "LEAD-PLAN"
  steps:
    - tool_calls: [{name: TeamCreate, input: {team_name: planners}}]
    - tool_calls: [{name: subagent, input: {name: gus, team_name: planners, plan_mode_required: true, prompt: "MATE-GUS: write out.txt."}}]
    - text: "Started gus."
- name: lead-rejects
  match: "GUS-PLAN"
  steps:
    - tool_calls: [{id: lead-unknown, name: SendMessage, input: {to: gus, message: {type: plan_approval_response, request_id: "plan-9@gus", approve: true}}}]
    - tool_calls: [{id: lead-rejects, name: SendMessage, input: {to: gus, message: {type: plan_approval_response, request_id: "plan-1@gus", approve: false, content: "GUS-REDO: smaller steps"}}}]
    - tool_calls: [{id: lead-again, name: SendMessage, input: {to: gus, message: {type: plan_approval_response, request_id: "plan-1@gus", approve: true}}}]
    - text: "Rejected gus's plan."
- name: gus-redo
  match: "GUS-REDO"
  steps:
    - tool_calls: [{id: gus-writes-rejected, name: write_file, input: {path: out.txt, content: "after rejection"}}]
    - text: "gus: still planning."
- name: gus
  match: "MATE-GUS"
  steps:
    - text: "GUS-PLAN: write out.txt in one go."
"#;

/// The plan arrives as the teammate's answer (what a product teammate, without ExitPlanMode,
/// does); the leader rejects it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_plan_keeps_the_teammate_read_only_with_the_feedback() {
    let world = World::noting(REJECTED).await;
    World::lead(world.leader(), "LEAD-PLAN").await;
    let server = &world.server;
    assert_eq!(server.violations(), Vec::<String>::new());
    let requests = server.requests();
    let lead = requests_for(&requests, "LEAD-PLAN");
    assert_result(
        &lead,
        "lead-unknown",
        "UNKNOWN_PLAN_REQUEST: no plan awaits approval under request_id \"plan-9@gus\" (answered already, or never sent)",
        true,
    );
    assert_result(
        &lead,
        "lead-rejects",
        "Rejected gus's plan: gus stays in plan mode and revises it.",
        false,
    );
    // An answered plan cannot be answered again.
    assert!(
        result_of(&lead, "lead-again")
            .0
            .starts_with("UNKNOWN_PLAN_REQUEST:")
    );

    // The teammate's next prompt carries the rejection and the feedback; it is still held.
    let gus = requests_for(&requests, "MATE-GUS");
    let woken = gus
        .iter()
        .find(|r| {
            r.messages
                .last()
                .is_some_and(|m| m.text().contains("GUS-REDO"))
        })
        .expect("gus woken with the feedback");
    let prompt = woken.messages.last().unwrap().text();
    assert!(
        prompt.contains("team-lead rejected your plan (request_id plan-1@gus)")
            && prompt.contains("Feedback from team-lead: GUS-REDO: smaller steps"),
        "{prompt}"
    );
    assert!(!offers(woken, "write_file") && offers(woken, "ExitPlanMode"));
    let (text, refused) = result_of(&gus, "gus-writes-rejected");
    assert!(refused && text.contains("plan mode"), "{text}");
    assert!(!world.project.path().join("out.txt").exists());
    let config = world.team("planners").config().unwrap();
    assert!(config.member("gus").unwrap().plan_mode_required);
}

const APPROVED_MID_RUN: &str = r#"    - tool_calls: [{id: gus-submits, name: ExitPlanMode, input: {plan: "GUS-PLAN: write out.txt"}}]
    - wait_gate: approved
      tool_calls: [{id: gus-writes-held, name: write_file, input: {path: out.txt, content: "same run"}}]
    - text: "gus: plan submitted."
"#;

/// The leader approves while the teammate's run in plan mode goes on: that run stays read-only
/// and does not see the approval, which starts its next run, the one that may write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_approved_mid_run_loosens_only_the_next_run() {
    let world = World::noting(&approved(APPROVED_MID_RUN)).await;
    let server = &world.server;
    let lead = tokio::spawn(World::lead(world.leader(), "LEAD-PLAN"));
    // Open gus's gate once the leader's approval is in (its result reached the model).
    loop {
        let requests = server.requests();
        let all: Vec<&RecordedRequest> = requests.iter().collect();
        if results(&all).iter().any(|(id, _, _)| id == "lead-approves") {
            break;
        }
        server.wait_requests(requests.len() + 1).await;
    }
    server.gate("approved").open();
    lead.await.unwrap();
    assert_eq!(server.violations(), Vec::<String>::new());

    let requests = server.requests();
    let gus = requests_for(&requests, "MATE-GUS");
    let (held, refused) = result_of(&gus, "gus-writes-held");
    assert!(refused && held.contains("plan mode"), "{held}");
    // The approval reached none of the held run's requests: they offer ExitPlanMode.
    for request in gus.iter().filter(|r| offers(r, "ExitPlanMode")) {
        assert!(
            !request.messages.iter().any(|m| m.text().contains("GUS-GO")),
            "the held run saw the approval"
        );
    }
    assert_wrote_after_approval(&world, &gus);
}
