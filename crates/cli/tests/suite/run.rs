//! `subagent run`: the main job.

use pretty_assertions::assert_eq;

use super::support::{
    OFFLINE_RUN_ANSWER, fake_setup, json_lines, preset, stderr, stdout, subagent,
};

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
    assert_eq!(stdout(&output), OFFLINE_RUN_ANSWER);
    let err = stderr(&output);
    assert!(
        err.contains("offline:"),
        "the offline model is announced: {err}"
    );
    assert!(
        err.contains("delegations: 1\n  subagent [general-purpose on spawn] “offline demo subtask” → ok: [offline scripted model] Hello from the subagent."),
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

/// `subagent run`'s parent has the task tools: it starts a subagent in the background, waits for
/// it with `task_output` and gets its result (then no notification repeats it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_reads_a_background_subagent_with_task_output() {
    let (server, dir, preset) = fake_setup(super::background::BACKGROUND, "").await;
    let output = super::background::in_background(dir.path(), &preset);
    assert_eq!(stdout(&output), "parent done\n");
    let requests = server.model_requests();
    let (read, _) = subagent_test_support::parent::result_of(&requests, "call_read").unwrap();
    assert!(
        read.starts_with("<retrieval_status>success</retrieval_status>\n<task_id>"),
        "{read}"
    );
    assert!(
        read.contains("\n<task_type>agent</task_type>\n<status>completed</status>\n<description>bg notes</description>\n<tool_use_id>call_bg</tool_use_id>\n"),
        "{read}"
    );
    assert!(
        read.contains("\n<result>child finished in the background</result>\n"),
        "{read}"
    );
    // The output file is in the project's directory of the state dir (HOME is the temp dir).
    let start = read.find("<output_file>").unwrap() + "<output_file>".len();
    let file = &read[start..read.find("</output_file>").unwrap()];
    assert!(
        std::path::Path::new(file).starts_with(dir.path().join(".local/state/subagents/tasks")),
        "{file}"
    );
    assert!(std::path::Path::new(file).is_file(), "{file}");
    assert!(
        requests
            .iter()
            .flat_map(|request| request.messages.iter())
            .all(|message| !message.text().contains("<task-notification>"))
    );
}
