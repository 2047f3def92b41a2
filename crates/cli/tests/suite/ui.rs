//! `subagent ui` in a real browser (issue 30): the pinned-by-Debian headless Chromium of
//! test-support drives the page while a fan-out of 20 spawn children appears and finishes, a
//! team's task list changes, and the stop button cancels a background run (its process gone);
//! a request without the page's token is refused. The test leaves its screenshot at
//! `target/ui-runs.png` (docs/runs.md shows one).

use std::io::BufRead as _;
use std::time::Duration;

use subagent_test_browser::Browser;
use subagent_test_support::FakeServer;
use subagent_test_support::procs;

use super::support::Home;

fn scenario() -> String {
    let calls: String = (1..=20)
        .map(|n| {
            format!(
                "        - name: subagent\n          input: {{description: \"child {n}\", prompt: \"CHILD-{n} wait for go\"}}\n"
            )
        })
        .collect();
    format!(
        r#"
- match: "fan out twenty"
  steps:
    - tool_calls:
{calls}    - text: "all twenty done"
- match: "wait for go"
  steps:
    - wait_gate: go
      text: "child done"
- match: "stop me"
  steps:
    - wait_gate: never
      text: "never"
"#
    )
}

/// What a page's `tr.run` rows of `status` number.
fn rows(status: &str) -> String {
    format!("document.querySelectorAll('tr.run[data-status=\"{status}\"]').length")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_runs_live_a_teams_tasks_and_stops_a_run() {
    let server = FakeServer::from_yaml(&scenario()).await.unwrap();
    let project = Home::new(&server.url(), "");
    let subagent = || project.subagent().env("SUBAGENT_PRESET", &project.preset);
    let mut ui = subagent().arg("ui").spawn();
    let url = {
        let stdout = ui.stdout.take().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        line.trim().to_owned()
    };
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
        "{url}"
    );
    let base = url.split("/?token=").next().unwrap().to_owned();
    // Without the token: refused.
    let refused = reqwest::get(format!("{base}/api/runs")).await.unwrap();
    assert_eq!(refused.status(), 401);
    let refused = reqwest::get(format!("{base}/?token=wrong")).await.unwrap();
    assert_eq!(refused.status(), 401);

    let browser = Browser::launch().await.unwrap();
    let page = browser.open(&url).await.unwrap();
    let parent = tokio::task::block_in_place(|| subagent().args(["run", "fan out twenty"]).spawn());
    // The fan-out appears live: the parent and its 20 children running, as a tree.
    page.wait_for(
        &format!("{} === 21", rows("running")),
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    let indented = page
        .eval("[...document.querySelectorAll('tr.run .indent')].filter(e => e.textContent.includes('└')).length")
        .await
        .unwrap();
    assert_eq!(indented, 20);
    // Its stream, picked by a click on its row.
    page.click("tr.run[data-description=\"fan out twenty\"]")
        .await
        .unwrap();
    page.wait_for(
        "document.getElementById('stream').textContent.includes('tool subagent')",
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    server.gate("go").open();
    // And finishes live.
    page.wait_for(
        &format!("{} >= 21", rows("completed")),
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    page.wait_for(
        "document.getElementById('stream').textContent.includes('[parent] all twenty done') && document.getElementById('stream').textContent.includes('finished: completed')",
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    let output = tokio::task::block_in_place(|| parent.wait_with_output().unwrap());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // A team's task list, changing under the page.
    let teams = subagent_teams::TeamStore::new(
        project
            .home
            .path()
            .join(".local/state/subagents/teams/project-key"),
    );
    let team = teams.create("crew", "two tasks").unwrap();
    team.tasks(|list| {
        list.create(
            "alpha".into(),
            "first part".into(),
            None,
            Default::default(),
        );
        list.create(
            "beta".into(),
            "second part".into(),
            None,
            Default::default(),
        );
        Ok(())
    })
    .unwrap();
    page.wait_for(
        "document.querySelectorAll('#teams tr.task[data-status=\"pending\"]').length === 2",
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    team.tasks(|list| list.claim("1", "researcher").map(|_| ()))
        .unwrap();
    page.wait_for(
        "document.querySelector('#teams tr.task[data-subject=\"alpha\"]')?.dataset.status === 'in_progress'",
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    let owner = page
        .eval("document.querySelector('#teams tr.task[data-subject=\"alpha\"]').children[3].textContent")
        .await
        .unwrap();
    assert_eq!(owner, "researcher");

    // The stop button cancels a background run through its owner; its process goes.
    let launched = tokio::task::block_in_place(|| {
        subagent()
            .args(["run", "--bg", "--json", "stop me"])
            .output()
    });
    let launched: serde_json::Value = serde_json::from_slice(&launched.stdout).unwrap();
    let id = launched["id"].as_str().unwrap().to_owned();
    let pid = u32::try_from(launched["pid"].as_u64().unwrap()).unwrap();
    let button = format!("button.stop[data-id=\"{id}\"]");
    page.wait_for(
        &format!("!!document.querySelector('{button}')"),
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ui-runs.png");
    let (width, height) = page.screenshot(&shot).await.unwrap();
    assert!(width >= 400 && height >= 300, "{width}x{height}");
    page.click(&button).await.unwrap();
    page.wait_for(
        &format!(
            "document.querySelector('tr.run[data-id=\"{id}\"]')?.dataset.status === 'cancelled'"
        ),
        Duration::from_secs(30),
    )
    .await
    .unwrap();
    tokio::task::block_in_place(|| {
        for _ in 0..200 {
            if procs::gone(pid) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the stopped run's process {pid} is still there");
    });
    assert!(
        page.console_errors().is_empty(),
        "{:?}",
        page.console_errors()
    );
    browser.close().await.unwrap();
    let _ = ui.kill();
    let _ = ui.wait();
}
