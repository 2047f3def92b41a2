//! Budgets, as users know them from `claude --max-budget-usd` (issue 25, point 17): a token
//! budget (and a cost budget where the price is known) per run and per child, ending it with
//! its own stop reason, `budget_exceeded`, said in the outcome.

use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_test_support::FakeServer;

use super::support::{fake_preset, json_lines, keyed, stderr};

/// A child that works for three answers (10 in / 5 out tokens each), then a parent that
/// delegates to it.
const WORKER: &str = r#"
- match: "work long"
  steps:
    - tool_calls: [{name: ls, input: {}}]
    - tool_calls: [{name: ls, input: {}}]
    - text: "done at last"
- match: "delegate the long work"
  steps:
    - tool_calls: [{name: subagent, input: {prompt: "work long", description: "long work"}}]
    - text: "the parent is done"
"#;

/// `subagent ARGS` in `dir` with the fake key (the fake server keeps serving); its output and
/// last JSON line.
fn run(dir: &std::path::Path, args: &[&str]) -> (std::process::Output, Value) {
    let output = tokio::task::block_in_place(|| keyed(dir, args));
    let last = json_lines(&output).pop().unwrap_or_default();
    (output, last)
}

/// The fake server on [`WORKER`], a temp dir and a [`priced_preset`] in it with `row`.
async fn priced(row: &str) -> (FakeServer, tempfile::TempDir, String) {
    let server = FakeServer::from_yaml(WORKER).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = priced_preset(dir.path(), &server.url(), row);
    (server, dir, preset)
}

/// `fake_preset` with `price:` in its model section and `extra` in its tool row.
fn priced_preset(dir: &std::path::Path, url: &str, row: &str) -> String {
    let preset = fake_preset(dir, url, "");
    let text = std::fs::read_to_string(&preset).unwrap().replace(
        "  retry:",
        "  price: {input: 100000, output: 100000}\n  retry:",
    ) + row;
    std::fs::write(&preset, text).unwrap();
    preset.to_string_lossy().into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_budget_stops_the_child_with_its_own_stop_reason() {
    let (server, dir, preset) = priced("").await;
    let budget = ["--max-tokens-budget", "20", "work long"];
    let (output, outcome) = run(
        dir.path(),
        &[
            &["delegate", "--json", "--preset", preset.as_str()],
            &budget[..],
        ]
        .concat(),
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(outcome["status"], "budget_exceeded", "{outcome}");
    assert_eq!(
        outcome["diagnostic"],
        "budget exceeded: the run used 30 tokens, over its budget of 20 (--max-tokens-budget)"
    );
    // Stopped after the answer that crossed it: the cancel goes out when that answer's usage
    // reaches the budget's watcher, which runs beside the child (the record of runs relays
    // it too), so a child already asking again may have sent its third request; it never gets
    // to use its answer (the diagnostic above counts 30 tokens, not 45).
    let asked = server.model_requests().len();
    assert!(
        (2..=3).contains(&asked),
        "stopped after the answer that crossed it: {asked} requests"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cost_budget_needs_a_known_price_and_stops_the_child() {
    let (server, dir, priced) = priced("").await;
    let other = dir.path().join("unpriced");
    std::fs::create_dir(&other).unwrap();
    let unpriced = fake_preset(&other, &server.url(), "");
    let unpriced = unpriced.to_string_lossy().into_owned();
    let with = |preset: &str, more: &[&str]| {
        let mut args = vec!["delegate", "--json", "--preset", preset];
        args.extend(["--max-budget-usd", "$2"]);
        args.extend(more);
        args.push("work long");
        run(dir.path(), &args)
    };
    let (spent, unknown, other_model) = (
        with(&priced, &[]),
        with(&unpriced, &[]),
        with(&priced, &["--model", "another-model"]),
    );
    // 15 tokens at $0.10 each per answer: $1.50, then $3.00.
    assert_eq!(spent.0.status.code(), Some(1), "{}", stderr(&spent.0));
    assert_eq!(spent.1["status"], "budget_exceeded");
    assert_eq!(
        spent.1["diagnostic"],
        "budget exceeded: the run spent $3.0000 (30 tokens), over its budget of $2 (--max-budget-usd)"
    );
    for (output, refusal) in [unknown, other_model] {
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert_eq!(refusal["code"], "INVALID_ARGUMENTS");
        assert!(
            refusal["message"]
                .as_str()
                .unwrap()
                .starts_with("--max-budget-usd 2: the price of what runs is not known"),
            "{refusal}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rows_budget_holds_each_child_and_a_runs_budget_the_whole_run() {
    let (_server, dir, per_child) = priced("    budget: {max_tokens: 20}\n").await;
    let with = |budget: &[&str]| {
        let head = ["run", "--json", "--preset", per_child.as_str()];
        run(
            dir.path(),
            &[&head[..], budget, &["delegate the long work"]].concat(),
        )
    };
    let (child_stopped, whole_run) = (with(&[]), with(&["--max-tokens-budget", "40"]));
    // The child stopped; the parent heard why and finished.
    assert_eq!(
        child_stopped.0.status.code(),
        Some(0),
        "{}",
        stderr(&child_stopped.0)
    );
    let result = child_stopped.1["delegations"][0]["result"]
        .as_str()
        .unwrap();
    assert!(
        result.starts_with(
            "The subagent did not complete: budget_exceeded\nDiagnostic: budget exceeded: the run used 30 tokens, over its budget of 20 (the budget of the subagent tool's children)"
        ),
        "{result}"
    );
    assert_eq!(child_stopped.1["text"], "the parent is done");
    // The run's own budget counts its children's tokens: 15 (parent) + 30 (child) > 40.
    assert_eq!(
        whole_run.0.status.code(),
        Some(1),
        "{}",
        stderr(&whole_run.0)
    );
    assert_eq!(whole_run.1["status"], "budget_exceeded", "{}", whole_run.1);
    assert!(
        whole_run.1["diagnostic"]
            .as_str()
            .unwrap()
            .ends_with("over its budget of 40 (--max-tokens-budget)"),
        "{}",
        whole_run.1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_types_budget_holds_its_runs() {
    let (_server, dir, preset) = priced("").await;
    let agents = dir.path().join(".subagents/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("thrifty.md"),
        "---\nname: thrifty\ndescription: Spends little.\nmaxTokensBudget: 20\n---\nBe brief.\n",
    )
    .unwrap();
    let with = |budget: &str| {
        let head = [
            "delegate",
            "--json",
            "--preset",
            preset.as_str(),
            "--agent",
            "thrifty",
        ];
        run(
            dir.path(),
            &[&head[..], &["--max-tokens-budget", budget, "work long"]].concat(),
        )
    };
    let (looser_flag, tighter_flag) = (with("1000"), with("10"));
    assert_eq!(
        looser_flag.1["status"], "budget_exceeded",
        "{}",
        looser_flag.1
    );
    assert_eq!(
        looser_flag.1["diagnostic"],
        "budget exceeded: the run used 30 tokens, over its budget of 20 (the maxTokensBudget of agent thrifty)"
    );
    assert_eq!(
        tighter_flag.1["diagnostic"],
        "budget exceeded: the run used 15 tokens, over its budget of 10 (--max-tokens-budget)"
    );
}
