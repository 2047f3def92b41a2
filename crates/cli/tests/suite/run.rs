//! `subagent run`: the main job.

use pretty_assertions::assert_eq;

use super::support::{json_lines, preset, stderr, stdout, subagent};

#[test]
fn the_main_job_works_offline_and_reports_its_delegation() {
    let home = tempfile::tempdir().unwrap();
    let output = subagent(home.path())
        .args(["run", "--preset"])
        .arg(preset("offline.yaml"))
        .arg("Please delegate a hello to a subagent")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "[offline scripted model] The subagent finished and reported back: its report is the \
         delegation's result.\n"
    );
    let err = stderr(&output);
    assert!(
        err.contains("offline:"),
        "the offline model is announced: {err}"
    );
    assert!(
        err.contains("delegations: 1\n  subagent [general-purpose] “offline demo subtask” → ok: [offline scripted model] Hello from the subagent."),
        "{err}"
    );
}

#[test]
fn run_json_lists_the_delegations() {
    let home = tempfile::tempdir().unwrap();
    let output = subagent(home.path())
        .args(["run", "--json", "--preset"])
        .arg(preset("offline.yaml"))
        .arg("Please delegate a hello to a subagent")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    assert_eq!(outcome["type"], "outcome");
    assert_eq!(outcome["status"], "completed");
    let delegations = outcome["delegations"].as_array().unwrap();
    assert_eq!(delegations.len(), 1);
    assert_eq!(delegations[0]["tool"], "subagent");
    assert_eq!(delegations[0]["is_error"], false);
}
