//! Product teammates of every kind that runs on this machine: a codex teammate (the pinned
//! `codex`) and an ACP teammate (the pinned `codex-acp`) join a team led in-process, each
//! answers its first prompt, receives a message from the leader by resume and answers it, then
//! approves the leader's shutdown request. Runs with the `e2e` feature (`cargo xtask
//! install-clis`).

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::pinned::{codex_acp_row, codex_row};
use super::support::write_file;
use super::support::{Place, Subagent, bin};
use super::support::{json_lines, stderr};

/// The leader makes the team and its two product teammates; each teammate's answer leads to
/// the next message. First match wins, on the latest genuine prompt.
const SCENARIOS: &str = r#"
- name: lead
  match: "LEAD-PRODUCTS"
  steps:
    - tool_calls: [{name: TeamCreate, input: {team_name: products}}]
    - tool_calls:
        - {name: subagent, input: {name: dave, team_name: products, subagent_type: codex-mate, description: dave, prompt: "MATE-DAVE: stand by."}}
        - {name: subagent, input: {name: erin, team_name: products, subagent_type: acp-mate, description: erin, prompt: "MATE-ERIN: stand by."}}
    - text: "The team is at work."
- name: lead-dave-ready
  match: "DAVE-READY"
  steps:
    - tool_calls: [{name: SendMessage, input: {to: dave, message: "DAVE-NOTE: the build is green"}}]
    - text: "Told dave."
- name: lead-dave-ack
  match: "DAVE-ACK"
  steps:
    - tool_calls: [{name: SendMessage, input: {to: dave, message: {type: shutdown_request, reason: "DAVE-STOP"}}}]
    - text: "Asked dave to stop."
- name: lead-erin-ready
  match: "ERIN-READY"
  steps:
    - tool_calls: [{name: SendMessage, input: {to: erin, message: "ERIN-NOTE: the docs are done"}}]
    - text: "Told erin."
- name: lead-erin-ack
  match: "ERIN-ACK"
  steps:
    - tool_calls: [{name: SendMessage, input: {to: erin, message: {type: shutdown_request, reason: "ERIN-STOP"}}}]
    - text: "Asked erin to stop."
- name: dave-stop
  match: "DAVE-STOP"
  steps:
    - text: '{"type":"shutdown_response","approve":true,"reason":"DAVE-AGREES"}'
- name: dave-note
  match: "DAVE-NOTE"
  steps:
    - text: "DAVE-ACK: noted the build."
- name: dave-first
  match: "MATE-DAVE"
  steps:
    - text: "DAVE-READY: standing by."
- name: erin-stop
  match: "ERIN-STOP"
  steps:
    - text: '{"type":"shutdown_response","approve":true,"reason":"ERIN-AGREES"}'
- name: erin-note
  match: "ERIN-NOTE"
  steps:
    - text: "ERIN-ACK: noted the docs."
- name: erin-first
  match: "MATE-ERIN"
  steps:
    - text: "ERIN-READY: standing by."
- name: lead-noted
  match: "teammate-message"
  steps:
    - text: "Noted."
"#;

/// A preset with spawn, codex and codex-acp rows, and a project whose agent types `codex-mate`
/// and `acp-mate` run on them.
fn setup(dir: &Path, url: &str) -> (PathBuf, PathBuf) {
    let project = dir.join("project");
    let agents = project.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    // An ACP agent takes no persona (ACP v1 has no way to pass one): its type has no body.
    for (name, provider, body) in [
        ("codex-mate", "codex", "You are a careful reviewer.\n"),
        ("acp-mate", "codex-acp", ""),
    ] {
        std::fs::write(
            agents.join(format!("{name}.md")),
            format!("---\nname: {name}\ndescription: A teammate on {provider}.\nprovider: {provider}\n---\n{body}"),
        )
        .unwrap();
    }
    let text = format!(
        r#"version: 1
max_depth: 2
model: {{kind: anthropic, name: lead-model, base_url: "{url}", api_key_env: FAKE_KEY, retry: {{max_retries: 0}}}}
providers:
  - name: spawn
    kind: spawn
{codex}{acp}tools:
  - {{name: subagent, provider: spawn}}
"#,
        codex = codex_row(dir, url, "", ""),
        acp = codex_acp_row(dir, url, "codex-acp"),
    );
    (write_file(dir, "teams.yaml", &text), project)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_and_an_acp_teammate_answer_by_resume_and_approve_their_shutdown() {
    let Place { server, dir, .. } = Place::new(SCENARIOS, "subagent-teams-products-").await;
    let (preset, project) = setup(dir.path(), &server.url());
    let mut command = Subagent::new(bin(), dir.path())
        .cwd(&project)
        .fake_key()
        .args(["run", "--teams", "--json", "--max-turns", "40"])
        .preset(&preset)
        .arg("LEAD-PRODUCTS: two reviewers")
        .command();
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    assert_eq!(outcome["status"], "completed", "{outcome}");

    let team = dir
        .path()
        .join(".local/state/subagents/teams")
        .join(super::support::state_key(&project))
        .join("products");
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(team.join(name)).unwrap()).unwrap()
    };
    let members: Vec<(String, String, String)> = read("config.json")["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_owned(),
                m["provider"].as_str().unwrap_or_default().to_owned(),
                m["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let member = |name: &str, provider: &str, status: &str| {
        (name.to_owned(), provider.to_owned(), status.to_owned())
    };
    assert_eq!(
        members,
        [
            member("team-lead", "", "lead"),
            member("dave", "codex", "stopped"),
            member("erin", "codex-acp", "stopped"),
        ]
    );
    // What the leader heard from each: the first answer, the answer to its message, and the
    // approval of its shutdown request.
    let lead = read("inboxes/team-lead.json");
    for (name, marks) in [
        ("dave", ["DAVE-READY", "DAVE-ACK", "DAVE-AGREES"]),
        ("erin", ["ERIN-READY", "ERIN-ACK", "ERIN-AGREES"]),
    ] {
        let heard: Vec<&str> = lead["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["from"] == name)
            .filter_map(|m| m["text"].as_str())
            .collect();
        for mark in marks {
            assert!(
                heard.iter().any(|t| t.contains(mark)),
                "{name}: {mark} in {heard:?}"
            );
        }
    }
    // Each teammate got the leader's message and the shutdown request in its resumed
    // conversation: its first prompt and answer came before them.
    let requests = server.requests();
    for (stop, first, answer) in [
        ("dave-stop", "MATE-DAVE", "DAVE-ACK"),
        ("erin-stop", "MATE-ERIN", "ERIN-ACK"),
    ] {
        let request = requests
            .iter()
            .find(|r| r.scenario.as_ref().is_some_and(|(s, _)| s == stop))
            .unwrap_or_else(|| panic!("no {stop} request"));
        let history: Vec<String> = request.messages.iter().map(|m| m.text()).collect();
        assert!(
            history.iter().any(|t| t.contains(first)) && history.iter().any(|t| t.contains(answer)),
            "{stop}: {history:?}"
        );
    }
}
