//! One effective configuration, through the delegation tool and the spawn provider: explicit
//! call arguments > agent definition > persona (the row) > parent, for model, effort, turn
//! limit, permission mode and tools, seen in what the child sends the fake model server. A
//! layer that cannot say something (a call names no effort, a row no model) is left out of its
//! case.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_core::agents::{AgentProfile, StaticAgents};
use subagent_core::{Effort, PermissionMode, StopReason, ToolFilter};
use subagent_model::ModelKind;
use subagent_runtime::{DelegationToolConfig, PermissionPolicy};

use super::support::{BUILTIN, delegating, last_results, requests_for};
use super::support::{Parent as Fixture, run};

/// The parent delegates `input` in its first turn and answers in its second; the child runs
/// `echo one`, then `echo two`, then answers: three requests unless a turn limit stops it.
fn scenario(input: &Value) -> String {
    delegating(
        input,
        r#"
- name: child
  match: "CHILD-TASK"
  steps:
    - tool_calls:
        - name: bash
          input: {command: "echo one"}
    - tool_calls:
        - name: bash
          input: {command: "echo two"}
    - text: "child done"
"#,
    )
}

/// The parent run's own settings.
#[derive(Clone, Copy)]
struct Parent {
    effort: Option<Effort>,
    mode: PermissionMode,
    max_turns: Option<u32>,
}

const PARENT: Parent = Parent {
    effort: None,
    mode: PermissionMode::Bypass,
    max_turns: None,
};

/// What the child sent: its model, its reasoning setting, its tools, how many requests it made,
/// and the first line of what its first bash call got.
#[derive(Debug, PartialEq)]
struct Seen {
    model: Value,
    reasoning: Value,
    tools: Vec<String>,
    requests: usize,
    first_bash: String,
}

async fn child_of(
    parent: Parent,
    row: DelegationToolConfig,
    profile: AgentProfile,
    call: Value,
) -> Seen {
    let mut input = json!({"prompt": "CHILD-TASK go", "subagent_type": "worker"});
    input
        .as_object_mut()
        .unwrap()
        .extend(call.as_object().unwrap().clone());
    let fixture = Fixture::start(&scenario(&input), ModelKind::OpenaiResponses, 3).await;
    let (server, _model) = (&fixture.server, &fixture.model);
    let mut config = fixture.config_with(row, Arc::new(StaticAgents(vec![profile])));
    config.permissions = PermissionPolicy::new(parent.mode);
    config.effort = parent.effort;
    config.max_turns = parent.max_turns;
    let outcome = run(config, "please delegate").await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    assert_eq!(server.violations(), Vec::<String>::new());
    let requests = server.model_requests();
    let child = requests_for(&requests, "CHILD-TASK");
    let body = child[0].body.clone().unwrap();
    // The result's first line (the Responses protocol has no error flag).
    let first_bash = child.get(1).map_or_else(
        || "not run".to_owned(),
        |second| match &last_results(second)[..] {
            [(_, text, _)] => text.lines().next().unwrap_or_default().to_owned(),
            other => format!("{other:?}"),
        },
    );
    Seen {
        model: body["model"].clone(),
        reasoning: body.get("reasoning").cloned().unwrap_or(Value::Null),
        tools: child[0].tool_names(),
        requests: child.len(),
        first_bash,
    }
}

fn worker(set: impl FnOnce(&mut AgentProfile)) -> AgentProfile {
    let mut profile = AgentProfile::new("worker", "Does the work.");
    set(&mut profile);
    profile
}

/// What a bash call that ran got first.
const OK: &str = "exit code 0";

fn seen(model: &str, reasoning: Value, tools: &[&str], requests: usize, bash: &str) -> Seen {
    Seen {
        model: json!(model),
        reasoning,
        tools: tools.iter().map(|t| (*t).to_owned()).collect(),
        requests,
        first_bash: bash.to_owned(),
    }
}

#[tokio::test]
async fn model_call_beats_definition_beats_the_parents() {
    let row = DelegationToolConfig::new("spawn");
    let cases = [
        (
            "call > definition",
            json!({"model": "call-m"}),
            Some("def-m"),
            "call-m",
        ),
        ("definition", json!({}), Some("def-m"), "def-m"),
        (
            "`inherit` in the call",
            json!({"model": "inherit"}),
            Some("def-m"),
            "def-m",
        ),
        // The parent's model, inherited as the provider's default.
        ("parent", json!({}), None, "fake-model"),
    ];
    for (what, call, definition, expected) in cases {
        let profile = worker(|p| p.model = definition.map(str::to_owned));
        let got = child_of(PARENT, row.clone(), profile, call).await;
        assert_eq!(got, seen(expected, Value::Null, &BUILTIN, 3, OK), "{what}");
    }
}

#[tokio::test]
async fn effort_definition_beats_the_parents_and_the_parents_is_inherited() {
    let row = DelegationToolConfig::new("spawn");
    let thinking = Parent {
        effort: Some(Effort::High),
        ..PARENT
    };
    let cases = [
        (
            "definition > parent",
            thinking,
            Some(Effort::Low),
            json!({"effort": "low"}),
        ),
        ("parent", thinking, None, json!({"effort": "high"})),
        ("neither", PARENT, None, Value::Null),
    ];
    for (what, parent, definition, expected) in cases {
        let profile = worker(|p| p.effort = definition);
        let got = child_of(parent, row.clone(), profile, json!({})).await;
        assert_eq!(got, seen("fake-model", expected, &BUILTIN, 3, OK), "{what}");
    }
}

#[tokio::test]
async fn the_turn_limit_is_the_definitions_and_never_the_parents() {
    let row = DelegationToolConfig::new("spawn");
    let limited = worker(|p| p.max_turns = Some(1));
    // One request: the limit stops the child before its first bash call is answered.
    let got = child_of(PARENT, row.clone(), limited, json!({})).await;
    assert_eq!(got, seen("fake-model", Value::Null, &BUILTIN, 1, "not run"));
    // The parent's own limit (its two turns) is not the child's: the child takes three.
    let parent = Parent {
        max_turns: Some(2),
        ..PARENT
    };
    let got = child_of(parent, row, worker(|_| ()), json!({})).await;
    assert_eq!(got, seen("fake-model", Value::Null, &BUILTIN, 3, OK));
}

#[tokio::test]
async fn permission_modes_intersect_so_no_layer_loosens_another() {
    let row = DelegationToolConfig::new("spawn");
    let asked = "permission denied: bash needs approval and no one can be asked";
    let read_only = ["ls", "read_file", "glob", "grep"];
    let unknown = format!(
        "No tool named \"bash\" is available. Available tools: {}",
        read_only.join(", ")
    );
    let parent = |mode| Parent { mode, ..PARENT };
    let cases: [(&str, PermissionMode, Option<PermissionMode>, Seen); 4] = [
        (
            "a bypass parent, no definition mode: bypass",
            PermissionMode::Bypass,
            None,
            seen("fake-model", Value::Null, &BUILTIN, 3, OK),
        ),
        (
            "the definition's accept-edits tightens a bypass parent",
            PermissionMode::Bypass,
            Some(PermissionMode::AcceptEdits),
            seen("fake-model", Value::Null, &BUILTIN, 3, asked),
        ),
        (
            "the definition's bypass does not loosen a default parent",
            PermissionMode::Default,
            Some(PermissionMode::Bypass),
            seen("fake-model", Value::Null, &BUILTIN, 3, asked),
        ),
        (
            "plan anywhere is read-only",
            PermissionMode::Plan,
            Some(PermissionMode::Bypass),
            seen("fake-model", Value::Null, &read_only, 3, &unknown),
        ),
    ];
    for (what, mode, definition, expected) in cases {
        let profile = worker(|p| p.permission_mode = definition);
        let got = child_of(parent(mode), row.clone(), profile, json!({})).await;
        assert_eq!(got, expected, "{what}");
    }
}

#[tokio::test]
async fn tool_filters_of_the_definition_and_the_row_intersect() {
    let mut row = DelegationToolConfig::new("spawn");
    row.tool_filter = Some(ToolFilter::deny(["write_file"]));
    let profile = worker(|p| {
        p.tool_filter = Some(ToolFilter::allow(["read_file", "write_file", "bash"]));
    });
    let got = child_of(PARENT, row.clone(), profile, json!({})).await;
    assert_eq!(
        got,
        seen("fake-model", Value::Null, &["read_file", "bash"], 3, OK)
    );
    // The row alone.
    let got = child_of(PARENT, row, worker(|_| ()), json!({})).await;
    let without_write: Vec<&str> = BUILTIN.into_iter().filter(|t| *t != "write_file").collect();
    assert_eq!(got, seen("fake-model", Value::Null, &without_write, 3, OK));
}
