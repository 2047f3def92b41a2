//! A teammate never runs looser than its leader: a plan-mode leader's teammate is offered no
//! tool that writes, and a default-mode leader's teammate (in the background, nobody to ask)
//! is denied a command at once. The team tools stay: they are coordination, not I/O.

use pretty_assertions::assert_eq;
use subagent_core::PermissionMode;
use subagent_runtime::PermissionPolicy;
use subagent_test_support::FakeServer;

use super::support::{World, lead_starting, requests_for, results};

/// A leader that starts gus, who runs a command and lists the tasks.
fn writer() -> String {
    lead_starting(
        "LEAD-PERMS",
        "careful",
        "gus",
        "MATE-GUS: write the file.",
        "Started gus.",
    ) + r#"
- name: gus
  match: "MATE-GUS"
  steps:
    - tool_calls: [{id: gus-runs, name: bash, input: {command: "echo hi > out.txt"}}]
    - tool_calls: [{id: gus-lists, name: TaskList}]
    - text: "gus: done."
"#
}

async fn run(mode: PermissionMode) -> (FakeServer, tempfile::TempDir) {
    let world = World::noting(&writer()).await;
    World::lead(world.leader_with(PermissionPolicy::new(mode)), "LEAD-PERMS").await;
    (world.server, world.project)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_mode_leaders_teammate_cannot_write() {
    let (server, project) = run(PermissionMode::Plan).await;
    let requests = server.requests();
    let gus = requests_for(&requests, "MATE-GUS");
    assert_eq!(
        gus[0].tool_names(),
        [
            "ls",
            "read_file",
            "glob",
            "grep",
            "SendMessage",
            "TaskCreate",
            "TaskList",
            "TaskGet",
            "TaskUpdate"
        ]
    );
    let results = results(&gus);
    assert!(results[0].2, "bash refused: {:?}", results[0]);
    assert_eq!(results[1], ("gus-lists".into(), "No tasks.".into(), false));
    assert!(!project.path().join("out.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_teammate_is_denied_what_would_need_asking() {
    let (server, project) = run(PermissionMode::Default).await;
    let requests = server.requests();
    let gus = requests_for(&requests, "MATE-GUS");
    let results = results(&gus);
    assert_eq!(results[0].0, "gus-runs");
    assert!(results[0].2, "denied, not asked: {:?}", results[0]);
    assert!(!project.path().join("out.txt").exists());
}
