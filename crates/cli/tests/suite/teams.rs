//! `subagent run --teams` (docs/teams.md): a leader with two in-process teammates and a Claude
//! Code teammate (the real pinned CLI) against one fake model server. They split three tasks
//! with a dependency, talk, and shut down; cancelling the leader leaves no process. Runs with
//! the `e2e` feature (`cargo xtask install-clis`).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::pinned::{claude_code_row, pinned};
use super::support::write_file;
use super::support::{Place, Subagent, bin};
use super::support::{json_lines, processes_in, stderr, wait_for};

/// A preset with spawn and claude-code, one delegation row (spawn), and a project whose agent
/// type `claude-mate` runs on claude-code. Returns the preset and the project.
fn setup(dir: &Path, url: &str) -> (PathBuf, PathBuf) {
    setup_with(dir, url, "")
}

/// [`setup`] with `claude_extra` lines in the claude-code row's `config:`.
fn setup_with(dir: &Path, url: &str, claude_extra: &str) -> (PathBuf, PathBuf) {
    let project = dir.join("project");
    let agents = project.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("claude-mate.md"),
        "---\nname: claude-mate\ndescription: A teammate on Claude Code.\nprovider: claude-code\n---\nYou are a careful reviewer.\n",
    )
    .unwrap();
    let text = format!(
        r#"version: 1
max_depth: 2
model: {{kind: anthropic, name: lead-model, base_url: "{url}", api_key_env: FAKE_KEY, retry: {{max_retries: 0}}}}
providers:
  - name: spawn
    kind: spawn
{claude}tools:
  - {{name: subagent, provider: spawn}}
"#,
        claude = claude_code_row(dir, url, claude_extra),
    );
    let preset = write_file(dir, "teams.yaml", &text);
    (preset, project)
}

fn command(dir: &Path, project: &Path, preset: &Path, prompt: &str) -> std::process::Command {
    Subagent::new(bin(), dir)
        .cwd(project)
        .fake_key()
        .args(["run", "--teams", "--json", "--max-turns", "60"])
        .preset(preset)
        .arg(prompt)
        .command()
}

/// The team's folder in the state dir.
fn team_dir(dir: &Path, project: &Path, team: &str) -> PathBuf {
    dir.join(".local/state/subagents/teams")
        .join(super::support::state_key(project))
        .join(team)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Scenarios are chosen by the latest genuine prompt, and a teammate's message is one: every
/// agent reacts to the message it gets. First match wins. CARL-STOP and MATE-STOP tell the
/// Claude Code teammate's shutdown request from the in-process ones' (it answers in text).
fn team() -> String {
    subagent_test_support::scenarios::CREW_LEAD.to_owned()
        + r#"
    - tool_calls:
        - {name: subagent, input: {name: alice, team_name: crew, description: alice, prompt: "MATE-ALICE: claim task 1, then 3 when it is free."}}
        - {name: subagent, input: {name: bob, team_name: crew, description: bob, prompt: "MATE-BOB: wait for alice."}}
        - {name: subagent, input: {name: carl, team_name: crew, subagent_type: claude-mate, description: carl, prompt: "MATE-CARL: review what the others report."}}
    - text: "The team is at work."
- name: lead-all-done
  match: "ALICE-DONE-ALL"
  steps:
    - tool_calls:
        - {name: SendMessage, input: {to: alice, message: {type: shutdown_request, reason: "MATE-STOP"}}}
        - {name: SendMessage, input: {to: bob, message: {type: shutdown_request, reason: "MATE-STOP"}}}
        - {name: SendMessage, input: {to: carl, message: {type: shutdown_request, reason: "CARL-STOP"}}}
    - text: "Asked the team to shut down."
- name: carl-stop
  match: "CARL-STOP"
  steps:
    - text: '{"type":"shutdown_response","approve":true,"reason":"CARL-AGREES"}'
- name: carl-note
  match: "CARL-NOTE"
  steps:
    - text: "CARL-ACK: noted that task 1 is done."
- name: carl-first
  match: "MATE-CARL"
  steps:
    - text: "CARL-READY: standing by."
- name: mate-shutdown
  match: "MATE-STOP"
  steps:
    - tool_calls: [{name: SendMessage, input: {to: team-lead, message: {type: shutdown_response, request_id: "-", approve: true, reason: "my work is done"}}}]
    - text: "Shutting down."
- name: alice-second-half
  match: "BOB-DONE-2"
  steps:
    - tool_calls: [{name: TaskUpdate, input: {taskId: "3", owner: alice}}]
    - tool_calls: [{name: TaskUpdate, input: {taskId: "3", status: completed}}]
    - tool_calls: [{name: SendMessage, input: {to: team-lead, summary: all done, message: "ALICE-DONE-ALL: tasks 1, 2 and 3 are completed"}}]
    - text: "alice: finished."
- name: bob-turn
  match: "ALICE-CLAIMED-1"
  steps:
    - tool_calls: [{id: bob-claims-1, name: TaskUpdate, input: {taskId: "1", owner: bob}}]
    - tool_calls: [{name: TaskUpdate, input: {taskId: "2", owner: bob}}]
    - tool_calls: [{name: TaskUpdate, input: {taskId: "2", status: completed}}]
    - tool_calls: [{name: SendMessage, input: {to: alice, message: "BOB-DONE-2: task 2 is completed"}}]
    - text: "bob: task 2 done."
- name: alice-first-half
  match: "MATE-ALICE"
  steps:
    - tool_calls: [{name: TaskUpdate, input: {taskId: "1", owner: alice}}]
    - tool_calls: [{name: TaskUpdate, input: {taskId: "1", status: completed}}]
    - tool_calls:
        - {name: SendMessage, input: {to: bob, message: "ALICE-CLAIMED-1: task 1 is mine and done; take task 2"}}
        - {name: SendMessage, input: {to: carl, message: "CARL-NOTE: task 1 is done"}}
    - text: "alice: waiting for bob."
- name: bob-first
  match: "MATE-BOB"
  steps:
    - text: "bob: waiting for alice."
- name: lead-noted
  match: "teammate-message"
  steps:
    - text: "Noted."
"#
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_team_splits_three_tasks_talks_and_shuts_down() {
    let Place { server, dir, .. } = Place::new(&team(), "subagent-teams-e2e-").await;
    let (preset, project) = setup(dir.path(), &server.url());
    let mut command = command(dir.path(), &project, &preset, "LEAD-TEAM: split the work");
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    assert_eq!(outcome["status"], "completed", "{outcome}");

    let team = team_dir(dir.path(), &project, "crew");
    let config = read_json(&team.join("config.json"));
    let members: Vec<(String, String, String, bool)> = config["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_owned(),
                m["provider"].as_str().unwrap_or_default().to_owned(),
                m["status"].as_str().unwrap().to_owned(),
                m["sessionId"].is_string(),
            )
        })
        .collect();
    let member = |name: &str, provider: &str, status: &str, session: bool| {
        (
            name.to_owned(),
            provider.to_owned(),
            status.to_owned(),
            session,
        )
    };
    assert_eq!(
        members,
        [
            member("team-lead", "", "lead", false),
            member("alice", "spawn", "stopped", true),
            member("bob", "spawn", "stopped", true),
            member("carl", "claude-code", "stopped", true),
        ]
    );
    let tasks: Vec<(String, String, String)> = read_json(&team.join("tasks.json"))["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["subject"].as_str().unwrap().to_owned(),
                t["status"].as_str().unwrap().to_owned(),
                t["owner"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let task = |s: &str, o: &str| (s.to_owned(), "completed".to_owned(), o.to_owned());
    assert_eq!(
        tasks,
        [
            task("alpha", "alice"),
            task("beta", "bob"),
            task("gamma", "alice")
        ]
    );

    // What the leader heard: Claude Code's answers (its only way to talk) and its approval.
    let lead_inbox = read_json(&team.join("inboxes/team-lead.json"));
    let from_carl: Vec<String> = lead_inbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["from"] == "carl")
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        from_carl.iter().any(|t| t.contains("CARL-READY")),
        "{from_carl:?}"
    );
    assert!(
        from_carl.iter().any(|t| t.contains("CARL-AGREES")),
        "{from_carl:?}"
    );
    // Every inbox read, each message once.
    for name in ["team-lead", "alice", "bob", "carl"] {
        let inbox = read_json(&team.join(format!("inboxes/{name}.json")));
        let unread: Vec<&Value> = inbox["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["read"] != true)
            .collect();
        assert!(unread.is_empty(), "{name}: {unread:?}");
    }
    let requests = server.requests();
    let refused = requests.iter().any(|r| {
        r.messages.iter().flat_map(|m| m.content.iter()).any(|b| {
            matches!(b, subagent_session::ContentBlock::ToolResult { tool_use_id, content, is_error: true }
                if tool_use_id == "bob-claims-1"
                && content.to_text() == "TASK_ALREADY_CLAIMED: task 1 is already claimed by alice; pick another task")
        })
    });
    assert!(refused, "bob's second claim of task 1 was refused");
    // Claude Code was resumed with its messages (CARL-NOTE, then the shutdown request, in one
    // prompt or two), never started afresh for them.
    let carl_prompts: Vec<String> = requests
        .iter()
        .filter(|r| {
            r.scenario
                .as_ref()
                .is_some_and(|(s, _)| s.starts_with("carl-"))
        })
        .map(|r| r.scenario.clone().unwrap().0)
        .collect();
    assert!(
        carl_prompts.contains(&"carl-first".to_owned()),
        "{carl_prompts:?}"
    );
    assert!(
        carl_prompts.contains(&"carl-stop".to_owned()),
        "{carl_prompts:?}"
    );
    // The shutdown request reached carl in his resumed session: the same conversation, his
    // first task and answer before it.
    let stop = requests
        .iter()
        .find(|r| r.scenario.as_ref().is_some_and(|(s, _)| s == "carl-stop"))
        .unwrap();
    let history: Vec<String> = stop.messages.iter().map(|m| m.text()).collect();
    assert!(
        history.iter().any(|t| t.contains("MATE-CARL"))
            && history.iter().any(|t| t.contains("CARL-READY")),
        "{history:?}"
    );
    // Only this test's: other tests run the same claude at the same time.
    assert!(processes_in(dir.path(), &pinned(".bin/claude").display().to_string()).is_empty());
}

const HOLD: &str = r#"
- name: lead
  match: "LEAD-HOLD"
  steps:
    - tool_calls: [{name: TeamCreate, input: {team_name: held}}]
    - tool_calls:
        - {name: subagent, input: {name: carl, team_name: held, subagent_type: claude-mate, prompt: "MATE-CARL-HOLD: think hard."}}
        - {name: subagent, input: {name: dana, team_name: held, prompt: "MATE-DANA-HOLD: think hard."}}
    - text: "Waiting for the team."
- name: held
  match: "HOLD"
  steps:
    - wait_gate: never
      text: "never"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_leader_stops_the_team_and_leaves_no_process() {
    let Place { server, dir, .. } = Place::new(HOLD, "subagent-teams-e2e-").await;
    let (preset, project) = setup(dir.path(), &server.url());
    let child = command(dir.path(), &project, &preset, "LEAD-HOLD: start and wait")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Both teammates are at work: their model requests are in, held.
    let at_work = |requests: &[subagent_test_support::RecordedRequest]| {
        ["MATE-CARL-HOLD", "MATE-DANA-HOLD"].iter().all(|marker| {
            requests
                .iter()
                .any(|r| r.messages.iter().any(|m| m.text().contains(marker)))
        })
    };
    loop {
        let requests = server.requests();
        if at_work(&requests) {
            break;
        }
        server.wait_requests(requests.len() + 1).await;
    }
    let claude = pinned(".bin/claude").display().to_string();
    let root_dir = dir.path().to_path_buf();
    assert!(
        !processes_in(&root_dir, &claude).is_empty(),
        "Claude Code is running"
    );

    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    assert_eq!(outcome["status"], "cancelled");
    // Every teammate's tree got SIGKILL before subagent exited; the kernel ends a killed
    // process a moment later, so look until Claude Code is gone (a process never killed stays,
    // and the wait fails).
    tokio::task::spawn_blocking(move || {
        wait_for("Claude Code to be gone after the cancel", || {
            processes_in(&root_dir, &claude).is_empty()
        })
    })
    .await
    .unwrap();
    // The team is on disk, its members idle (resumable), none left running.
    let config = read_json(&team_dir(dir.path(), &project, "held").join("config.json"));
    let statuses: Vec<&str> = config["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["lead", "idle", "idle"]);
}

/// A Claude Code teammate started in plan mode: its Write before approval is refused by Claude
/// Code's own plan mode (the row's ceiling `plan`), its answer is its plan, and once the leader
/// approves, its resumed session (acceptEdits, the leader's mode) writes. OUT is the file.
const PLAN: &str = r#"
- name: lead
  match: "LEAD-PLAN-CARL"
  steps:
    - tool_calls: [{name: TeamCreate, input: {team_name: planners}}]
    - tool_calls: [{name: subagent, input: {name: carl, team_name: planners, subagent_type: claude-mate, mode: plan, prompt: "MATE-CARL-PLAN: write out.txt."}}]
    - text: "Started carl."
- name: carl-go
  match: "CARL-GO"
  steps:
    - tool_calls: [{id: carl-writes, name: Write, input: {file_path: "OUT", content: "after approval"}}]
    - text: "CARL-DONE: written."
- name: lead-approves
  match: "PLAN-OF-CARL"
  steps:
    - tool_calls: [{id: lead-approves, name: SendMessage, input: {to: carl, message: {type: plan_approval_response, request_id: "plan-1@carl", approve: true, feedback: "CARL-GO"}}}]
    - text: "Approved carl's plan."
- name: carl-first
  match: "MATE-CARL-PLAN"
  steps:
    - tool_calls: [{id: carl-writes-early, name: Write, input: {file_path: "OUT", content: "too early"}}]
    - text: "PLAN-OF-CARL: write out.txt."
- name: lead-noted
  match: "teammate-message"
  steps:
    - text: "Noted."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_teammate_in_plan_mode_writes_only_once_its_plan_is_approved() {
    let dir = tempfile::Builder::new()
        .prefix("subagent-teams-e2e-")
        .tempdir()
        .unwrap();
    let out = dir.path().join("project/out.txt");
    let scenarios = PLAN.replace("OUT", &out.display().to_string());
    let server = subagent_test_support::FakeServer::from_yaml(&scenarios)
        .await
        .unwrap();
    let (preset, project) = setup_with(
        dir.path(),
        &server.url(),
        "      permission_mode: acceptEdits\n",
    );
    let mut command = Subagent::new(bin(), dir.path())
        .cwd(&project)
        .fake_key()
        .args(["run", "--teams", "--json", "--max-turns", "30"])
        .args(["--permission-mode", "accept-edits"])
        .preset(&preset)
        .arg("LEAD-PLAN-CARL: plan first")
        .command();
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    assert_eq!(outcome["status"], "completed", "{outcome}");

    let requests = server.requests();
    let result = |id: &str| {
        requests
            .iter()
            .flat_map(|r| r.messages.iter().flat_map(|m| m.content.iter()))
            .find_map(|b| match b {
                subagent_session::ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } if tool_use_id == id => Some((content.to_text(), *is_error)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no result for {id}"))
    };
    // Claude Code's plan mode refused the early write; the plan (its answer) reached the
    // leader, who approved it; the resumed session wrote.
    let (early, refused) = result("carl-writes-early");
    assert!(refused, "{early}");
    assert_eq!(result("lead-approves").1, false);
    assert_eq!(result("carl-writes").1, false);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "after approval");

    let team = team_dir(dir.path(), &project, "planners");
    let lead_inbox = read_json(&team.join("inboxes/team-lead.json"));
    let plan = lead_inbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["control"]["type"] == "plan_approval_request")
        .expect("carl's plan reached the leader");
    assert_eq!(plan["control"]["request_id"], "plan-1@carl");
    assert!(
        plan["control"]["plan"]
            .as_str()
            .unwrap()
            .contains("PLAN-OF-CARL")
    );
    let config = read_json(&team.join("config.json"));
    let carl = &config["members"][1];
    assert_eq!(
        (&carl["name"], &carl["planModeRequired"]),
        (&Value::from("carl"), &Value::Null)
    );
    assert!(processes_in(dir.path(), &pinned(".bin/claude").display().to_string()).is_empty());
}
