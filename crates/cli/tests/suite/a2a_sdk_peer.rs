//! The `a2a` provider against an agent we did not write: a small agent on the official A2A
//! Python SDK (`a2a_sdk_agent.py`, a2a-sdk 1.3.0 in the venv `cargo xtask install-clis` makes).
//! Send, stream, structured data, a failing task, cancel. Runs with the `e2e` feature.

use std::path::Path;
use std::process::Stdio;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_a2a::{A2aConfig, A2aProvider, PLAIN};
use subagent_core::{Outcome, Run, RunEvent, StartRequest, StopReason, SubagentProvider};
use subagent_test_support::cli_peer::Peer;

/// Starts the SDK agent (killed when dropped); its base URL.
fn agent() -> (Peer, String) {
    let python = super::support::root().join("target/py/a2a-sdk/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run `cargo xtask install-clis`",
        python.display()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/a2a_sdk_agent.py");
    let agent = Peer::start(
        std::process::Command::new(&python).arg(&script),
        Stdio::inherit(),
    );
    let line = agent.first_line();
    let port = line
        .strip_prefix("PORT ")
        .unwrap_or_else(|| panic!("the agent did not say its port: {line:?}"))
        .trim()
        .to_owned();
    (agent, format!("http://127.0.0.1:{port}"))
}

/// The run's events but `Started`/`Finished`, and its outcome.
async fn ended(mut run: Run) -> (Vec<RunEvent>, Outcome) {
    let events: Vec<RunEvent> = run
        .take_events()
        .unwrap()
        .filter(|event| {
            futures::future::ready(!matches!(
                event,
                RunEvent::Started { .. } | RunEvent::Finished { .. }
            ))
        })
        .collect()
        .await;
    (events, run.outcome().await)
}

fn text(text: &str) -> RunEvent {
    RunEvent::Text {
        text: text.to_owned(),
        parent_tool_use_id: None,
    }
}

fn progress(message: &str) -> RunEvent {
    RunEvent::progress(message.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_provider_sends_streams_and_cancels_on_the_official_python_sdks_agent() {
    let (_agent, base) = agent();
    let dir = tempfile::tempdir().unwrap();
    // The agent's socket listens before it prints its port: the card request waits for it.
    let provider = A2aProvider::connect("sdk", A2aConfig::new(&base), None)
        .await
        .unwrap();
    // Not a subagent serve: nothing optional is declared (the registry refuses the rest).
    assert_eq!(
        (provider.is_subagents_peer(), provider.capabilities()),
        (false, PLAIN)
    );
    let request = |prompt: &str| StartRequest::builder(prompt).cwd(dir.path()).build();

    // Send and stream: the status message is progress, the artifact's chunks are the text.
    let (events, outcome) = ended(provider.start(request("ECHO hi")).await.unwrap()).await;
    assert_eq!(
        events,
        [progress("echoing"), text("echo: hi"), text(" (more)")]
    );
    assert_eq!(
        (outcome.status, outcome.text.as_str()),
        (StopReason::Completed, "echo: hi (more)")
    );

    // A data part is the structured output, its numbers whole again (Python sends 42.0).
    let (_, outcome) = ended(provider.start(request("DATA")).await.unwrap()).await;
    assert_eq!(
        (outcome.status, outcome.structured),
        (StopReason::Completed, Some(json!({"answer": 42})))
    );

    // A failed task fails the run with the agent's message.
    let (_, outcome) = ended(provider.start(request("WHAT")).await.unwrap()).await;
    assert_eq!(
        (outcome.status, outcome.diagnostic.as_deref()),
        (
            StopReason::Failed,
            Some("the agent ended the task TASK_STATE_FAILED: no idea what to do")
        )
    );

    // Cancel: once the agent works, the run's cancel cancels the remote task.
    let mut run = provider.start(request("SLOW")).await.unwrap();
    let mut events = run.take_events().unwrap();
    while let Some(event) = events.next().await {
        if event == progress("waiting") {
            break;
        }
    }
    run.cancel();
    while events.next().await.is_some() {}
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Cancelled, "{outcome:?}");
    let listed: serde_json::Value = reqwest::Client::new()
        .post(format!("{base}/a2a"))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let states: Vec<&str> = listed["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["status"]["state"].as_str().unwrap())
        .collect();
    assert!(
        states.contains(&"TASK_STATE_CANCELED") && !states.contains(&"TASK_STATE_WORKING"),
        "the agent's tasks: {states:?}"
    );

    // Opted in (`resume_by_context`): `resume` continues the first run's context.
    let config = A2aConfig {
        resume_by_context: true,
        ..A2aConfig::new(&base)
    };
    let contexts = A2aProvider::connect("sdk", config, None).await.unwrap();
    assert!(contexts.capabilities().resume);
    let (_, first) = ended(contexts.start(request("CONTEXT")).await.unwrap()).await;
    let session = first.session.clone().unwrap();
    assert_eq!(
        (session.provider.as_str(), session.id.as_str()),
        ("sdk", first.text.as_str())
    );
    let again = StartRequest::builder("CONTEXT")
        .cwd(dir.path())
        .resume(session)
        .build();
    let (_, second) = ended(contexts.start(again).await.unwrap()).await;
    assert_eq!(
        (second.status, second.text.as_str()),
        (StopReason::Completed, first.text.as_str())
    );

    // A preset row `kind: a2a` in front of the same agent, from the command line.
    let row = format!("  - name: sdk\n    kind: a2a\n    config: {{url: \"{base}\"}}\n");
    let preset = super::support::fake_preset(dir.path(), "http://127.0.0.1:9", &row);
    let home = dir.path().to_path_buf();
    let output = tokio::task::spawn_blocking(move || {
        super::support::subagent(&home)
            .env("FAKE_KEY", "test-key")
            .args(["delegate", "--provider", "sdk", "--preset"])
            .arg(&preset)
            .arg("ECHO from the command line")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(
        (
            output.status.code(),
            super::support::stdout(&output).as_str()
        ),
        (Some(0), "echo: from the command line (more)\n"),
        "{}",
        super::support::stderr(&output)
    );
}
