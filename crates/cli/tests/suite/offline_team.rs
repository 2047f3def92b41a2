//! The offline demo plays a small team (issue 25, point 18): `subagent run --offline --teams`
//! with no key leads a team of one in-process teammate to its end, on disk as a real team.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Project, stderr, stdout};

#[test]
fn the_offline_demo_leads_a_team_with_no_key() {
    let project = Project::new();
    let output = project.output(["run", "--offline", "--teams", "Start a team to say hello"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "[offline scripted model] The team's work is done: alice completed task 1 and greeted me.\n"
    );
    let teams = project.home.join(".local/state/subagents/teams");
    let team = std::fs::read_dir(&teams)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("offline-demo");
    let read = |file: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(team.join(file)).unwrap()).unwrap()
    };
    let config = read("config.json");
    let alice = &config["members"][1];
    assert_eq!(
        (&alice["name"], &alice["provider"], &alice["status"]),
        (&json!("alice"), &json!("spawn"), &json!("stopped"))
    );
    let task = &read("tasks.json")["tasks"][0];
    assert_eq!(
        (&task["subject"], &task["status"], &task["owner"]),
        (&json!("Say hello"), &json!("completed"), &json!("alice"))
    );
    // The leader heard her: her greeting is in its session, as a teammate message.
    assert!(
        stderr(&output)
            .contains(r#"tool SendMessage {"to":"alice","message":{"type":"shutdown_request""#),
        "{}",
        stderr(&output)
    );
}
