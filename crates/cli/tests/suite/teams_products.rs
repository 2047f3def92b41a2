//! Teammates of every product kind: a codex teammate (the pinned `codex`), an ACP teammate
//! (the pinned `codex-acp`) and an A2A teammate (another `subagent serve` process) join a team
//! led in-process; each answers its first prompt, receives a message from the leader by resume
//! and answers it, then approves the leader's shutdown request. Runs with the `e2e` feature
//! (`cargo xtask install-clis`).

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::pinned::{codex_acp_row, codex_row};
use super::serve::{TOKEN, start, stop};
use super::support::{Place, Subagent, bin};
use super::support::{fake_preset, write_file};
use super::support::{json_lines, stderr};

/// The scenarios of one teammate `name` (upper-case `mark`), the leader's answers to it
/// included: its first answer, the leader's message and its answer, the leader's shutdown
/// request and its approval. Scenario names start with `name`.
fn mate(name: &str, mark: &str) -> String {
    format!(
        r#"
- name: {name}-lead-ready
  match: "{mark}-READY"
  steps:
    - tool_calls: [{{name: SendMessage, input: {{to: {name}, message: "{mark}-NOTE: the build is green"}}}}]
    - text: "Told {name}."
- name: {name}-lead-ack
  match: "{mark}-ACK"
  steps:
    - tool_calls: [{{name: SendMessage, input: {{to: {name}, message: {{type: shutdown_request, reason: "{mark}-STOP"}}}}}}]
    - text: "Asked {name} to stop."
- name: {name}-stop
  match: "{mark}-STOP"
  steps:
    - text: '{{"type":"shutdown_response","approve":true,"reason":"{mark}-AGREES"}}'
- name: {name}-note
  match: "{mark}-NOTE"
  steps:
    - text: "{mark}-ACK: noted the build."
- name: {name}-first
  match: "MATE-{mark}"
  steps:
    - text: "{mark}-READY: standing by."
"#
    )
}

/// A leader that makes team `team` on `prompt` with the teammates `(name, mark, agent type)`,
/// their scenarios, then its answer to any other teammate message. First match wins, on the
/// latest genuine prompt.
fn scenarios(prompt: &str, team: &str, mates: &[(&str, &str, &str)]) -> String {
    let spawns: String = mates
        .iter()
        .map(|(name, mark, agent_type)| {
            format!(
                "        - {{name: subagent, input: {{name: {name}, team_name: {team}, subagent_type: {agent_type}, description: {name}, prompt: \"MATE-{mark}: stand by.\"}}}}\n"
            )
        })
        .collect();
    let mut yaml = format!(
        "- name: lead\n  match: \"{prompt}\"\n  steps:\n    - tool_calls: [{{name: TeamCreate, input: {{team_name: {team}}}}}]\n    - tool_calls:\n{spawns}    - text: \"The team is at work.\"\n"
    );
    for (name, mark, _) in mates {
        yaml.push_str(&mate(name, mark));
    }
    yaml.push_str(
        "- name: lead-noted\n  match: \"teammate-message\"\n  steps:\n    - text: \"Noted.\"\n",
    );
    yaml
}

/// Writes the agent type `name` running on `provider`, its prompt `body`, into `project`.
fn agent_type(project: &Path, name: &str, provider: &str, body: &str) {
    let agents = project.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join(format!("{name}.md")),
        format!("---\nname: {name}\ndescription: A teammate on {provider}.\nprovider: {provider}\n---\n{body}"),
    )
    .unwrap();
}

/// The leader's preset: its model at `url`, spawn, then `rows`.
fn lead_preset(dir: &Path, url: &str, rows: &str) -> PathBuf {
    let text = format!(
        r#"version: 1
max_depth: 2
model: {{kind: anthropic, name: lead-model, base_url: "{url}", api_key_env: FAKE_KEY, retry: {{max_retries: 0}}}}
providers:
  - name: spawn
    kind: spawn
{rows}tools:
  - {{name: subagent, provider: spawn}}
"#
    );
    write_file(dir, "lead.yaml", &text)
}

/// `run --teams --json` of `prompt` in `project` (with `env` set); asserts it completed and
/// returns a reader of team `team`'s files.
async fn lead(
    dir: &Path,
    project: &Path,
    preset: &Path,
    prompt: &str,
    env: &[(&str, &str)],
    team: &str,
) -> impl Fn(&str) -> Value {
    let mut command = Subagent::new(bin(), dir)
        .cwd(project)
        .fake_key()
        .args(["run", "--teams", "--json", "--max-turns", "40"])
        .preset(preset);
    for (name, value) in env {
        command = command.env(name, value);
    }
    let mut command = command.arg(prompt).command();
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    assert_eq!(outcome["status"], "completed", "{outcome}");
    let team = dir
        .join(".local/state/subagents/teams")
        .join(super::support::state_key(project))
        .join(team);
    move |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(team.join(name)).unwrap()).unwrap()
    }
}

/// What the leader heard from `name`.
fn heard(read: &impl Fn(&str) -> Value, name: &str) -> Vec<String> {
    read("inboxes/team-lead.json")["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["from"] == name)
        .filter_map(|m| m["text"].as_str().map(str::to_owned))
        .collect()
}

/// The model request answered by scenario `stop` carried the teammate's earlier prompt `first`
/// and its answer `answer`: it was resumed, not started afresh.
fn resumed(
    requests: &[subagent_test_support::RecordedRequest],
    stop: &str,
    first: &str,
    answer: &str,
) {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_and_an_acp_teammate_answer_by_resume_and_approve_their_shutdown() {
    let Place { server, dir, .. } = Place::new(
        &scenarios(
            "LEAD-PRODUCTS",
            "products",
            &[("dave", "DAVE", "codex-mate"), ("erin", "ERIN", "acp-mate")],
        ),
        "subagent-teams-products-",
    )
    .await;
    let project = dir.path().join("project");
    agent_type(
        &project,
        "codex-mate",
        "codex",
        "You are a careful reviewer.\n",
    );
    // An ACP agent takes no persona (ACP v1 has no way to pass one): its type has no body.
    agent_type(&project, "acp-mate", "codex-acp", "");
    let url = server.url();
    let rows = codex_row(dir.path(), &url, "", "") + &codex_acp_row(dir.path(), &url, "codex-acp");
    let preset = lead_preset(dir.path(), &url, &rows);
    let read = lead(
        dir.path(),
        &project,
        &preset,
        "LEAD-PRODUCTS: two reviewers",
        &[],
        "products",
    )
    .await;
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
    // approval of its shutdown request; each was resumed for the message and the request.
    let requests = server.requests();
    for (name, mark) in [("dave", "DAVE"), ("erin", "ERIN")] {
        let heard = heard(&read, name);
        for said in ["READY", "ACK", "AGREES"] {
            let said = format!("{mark}-{said}");
            assert!(
                heard.iter().any(|t| t.contains(&said)),
                "{name}: {said} in {heard:?}"
            );
        }
        resumed(
            &requests,
            &format!("{name}-stop"),
            &format!("MATE-{mark}"),
            &format!("{mark}-ACK"),
        );
    }
}

/// An A2A teammate: its agent type runs on an `a2a` row in front of another `subagent serve`
/// (spawn on the same fake model), which keeps its session between the leader's messages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_a2a_teammate_answers_by_resume_and_approves_its_shutdown() {
    let Place { server, dir, .. } = Place::new(
        &scenarios("LEAD-ONE", "one", &[("fred", "FRED", "remote-mate")]),
        "subagent-teams-a2a-",
    )
    .await;
    let far = dir.path().join("far");
    std::fs::create_dir_all(&far).unwrap();
    let (served, served_stderr, base) = start(dir.path(), &fake_preset(&far, &server.url(), ""));
    let project = dir.path().join("project");
    agent_type(
        &project,
        "remote-mate",
        "remote",
        "You are a careful reviewer.\n",
    );
    let row = format!(
        "  - name: remote\n    kind: a2a\n    config: {{url: \"{base}\", token_env: A2A_TOKEN}}\n"
    );
    let preset = lead_preset(dir.path(), &server.url(), &row);
    let read = lead(
        dir.path(),
        &project,
        &preset,
        "LEAD-ONE: a remote reviewer",
        &[("A2A_TOKEN", TOKEN)],
        "one",
    )
    .await;
    let fred = read("config.json")["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "fred")
        .cloned()
        .unwrap();
    assert_eq!(
        (fred["provider"].as_str(), fred["status"].as_str()),
        (Some("remote"), Some("stopped")),
        "{fred}"
    );
    let heard = heard(&read, "fred");
    for mark in ["FRED-READY", "FRED-ACK", "FRED-AGREES"] {
        assert!(
            heard.iter().any(|t| t.contains(mark)),
            "{mark} in {heard:?}"
        );
    }
    // The far side resumed fred's session for the message and the shutdown request.
    resumed(&server.requests(), "fred-stop", "MATE-FRED", "FRED-ACK");
    let (code, _, _) = tokio::task::spawn_blocking(move || stop(served, served_stderr))
        .await
        .unwrap();
    assert_eq!(code, Some(0));
}
