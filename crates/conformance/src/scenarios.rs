//! The kit's scenarios: one list for every check, each scenario picked by a marker word in the
//! prompt. Built from the adapter's few tool calls; everything else is the same for every
//! provider.

use serde_json::{Value, json};
use subagent_core::Capabilities;
use subagent_model::scenario::{Scenario, Scenarios};

use crate::{Adapter, StructuredAnswer, ToolCall};

/// The output schema of the structured-output checks.
pub const SCHEMA: &str = r#"{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer"}},"required":["name","n"],"additionalProperties":false}"#;

/// Markers: the prompt of each check's run contains one.
pub(crate) const HELLO: &str = "KIT-HELLO";
pub(crate) const HELLO_ANSWER: &str = "kit hello back";
pub(crate) const CANCEL: &str = "KIT-CANCEL";
pub(crate) const FAIL: &str = "KIT-FAIL";
pub(crate) const FAIL_MESSAGE: &str = "kit bad request";
pub(crate) const WRITE_OPEN: &str = "KIT-WRITE-OPEN";
pub(crate) const WRITE_PLAN: &str = "KIT-WRITE-PLAN";
pub(crate) const OPEN_FILE: &str = "kit-open.txt";
pub(crate) const PLAN_FILE: &str = "kit-plan.txt";
pub(crate) const WRITE_DENIED: &str = "KIT-WRITE-DENIED";
pub(crate) const DENIED_FILE: &str = "kit-denied.txt";
/// What a write of the kit writes.
pub(crate) const WRITTEN: &str = "written by the conformance kit";
pub(crate) const SCHEMA_GOOD: &str = "KIT-SCHEMA-GOOD";
pub(crate) const SCHEMA_BAD: &str = "KIT-SCHEMA-BAD";
pub(crate) const DELEGATE: &str = "KIT-DELEGATE";
pub(crate) const NESTED: &str = "KIT-NESTED";
pub(crate) const RELEASE_GATE: &str = "kit-release";
pub(crate) const TURNS: &str = "KIT-TURNS";
pub(crate) const TURN_STEPS: usize = 4;
pub(crate) const REMEMBER: &str = "KIT-REMEMBER";
pub(crate) const REMEMBERED: &str = "I will remember the number 4242.";
pub(crate) const RECALL: &str = "KIT-RECALL";
pub(crate) const RECALLED: &str = "You said 4242.";
pub(crate) const ALL: &str = "KIT-ALL";
pub(crate) const ALL_ANSWER: &str = "all done";
pub(crate) const DELEGATE_ANSWER: &str = "parent done";

/// How many invalid structured answers the model gives before it gives up: more than any
/// provider's retries.
const BAD_ANSWERS: usize = 6;

/// The structured value the model answers with, and one that does not validate.
pub(crate) fn good_value() -> Value {
    json!({"name": "kit-widget", "n": 3})
}

pub(crate) fn bad_value() -> Value {
    json!({"name": "kit-widget", "n": "three"})
}

fn call(call: &ToolCall) -> Value {
    let mut value = json!({"name": call.name, "input": call.input});
    if let Some(namespace) = &call.namespace {
        value["namespace"] = json!(namespace);
    }
    value
}

fn text(text: &str) -> Value {
    json!({"text": text})
}

fn calls(calls: &[&ToolCall]) -> Value {
    json!({"tool_calls": calls.iter().map(|c| call(c)).collect::<Vec<_>>()})
}

fn scenario(name: &str, pattern: &str, steps: Vec<Value>) -> Value {
    json!({"name": name, "match": pattern, "steps": steps})
}

/// The steps of a structured answer with `value`; `bad` repeats it as a model that never gets it
/// right would, then gives up in words.
fn structured_steps(answer: &StructuredAnswer, value: &Value, bad: bool) -> Vec<Value> {
    let times = if bad { BAD_ANSWERS } else { 1 };
    let mut steps: Vec<Value> = match answer {
        StructuredAnswer::Tool(name) => (0..times)
            .map(|_| calls(&[&ToolCall::new(name.clone(), value.clone())]))
            .collect(),
        StructuredAnswer::FinalText => (0..times).map(|_| text(&value.to_string())).collect(),
    };
    if let StructuredAnswer::Tool(_) = answer {
        steps.push(text(if bad { "I could not do it." } else { "Done." }));
    }
    steps
}

/// Every scenario of the kit, for this adapter and capability table.
pub(crate) fn all(adapter: &dyn Adapter, caps: Capabilities) -> Scenarios {
    let mut list = vec![
        scenario("kit-hello", HELLO, vec![text(HELLO_ANSWER)]),
        scenario(
            "kit-cancel",
            CANCEL,
            vec![json!({"wait_gate": "kit-never-opened", "text": "too late"})],
        ),
        scenario(
            "kit-fail",
            FAIL,
            vec![
                json!({"error": {"status": 400, "type": "invalid_request_error", "message": FAIL_MESSAGE}}),
            ],
        ),
    ];
    for (marker, file) in [
        (WRITE_OPEN, OPEN_FILE),
        (WRITE_PLAN, PLAN_FILE),
        (WRITE_DENIED, DENIED_FILE),
    ] {
        let steps = match adapter.write_call(file, WRITTEN) {
            Some(write) => vec![calls(&[&write]), text("Written.")],
            None => vec![text("I have no tool that writes.")],
        };
        list.push(scenario(&marker.to_lowercase(), marker, steps));
    }
    let answer = adapter.structured_answer();
    list.push(scenario(
        "kit-schema-good",
        SCHEMA_GOOD,
        structured_steps(&answer, &good_value(), false),
    ));
    list.push(scenario(
        "kit-schema-bad",
        SCHEMA_BAD,
        structured_steps(&answer, &bad_value(), true),
    ));
    // The nested agent first: a notification about it (codex sends one) must not restart the
    // parent's scenario.
    list.push(scenario("kit-nested", NESTED, vec![text("nested done")]));
    let nested_prompt = format!("{NESTED} task: answer with two words");
    let delegate_steps = match adapter.delegate_call(&nested_prompt) {
        Some(delegate) => vec![
            calls(&[&delegate]),
            json!({"wait_gate": RELEASE_GATE, "text": DELEGATE_ANSWER}),
        ],
        None => vec![text(DELEGATE_ANSWER)],
    };
    list.push(scenario("kit-delegate", DELEGATE, delegate_steps));
    let mut turns: Vec<Value> = (1..=TURN_STEPS)
        .filter_map(|n| adapter.write_call(&format!("kit-turn-{n}.txt"), "turn"))
        .map(|write| calls(&[&write]))
        .collect();
    turns.push(text("never reached under the turn limit"));
    list.push(scenario("kit-turns", TURNS, turns));
    list.push(scenario("kit-remember", REMEMBER, vec![text(REMEMBERED)]));
    list.push(scenario("kit-recall", RECALL, vec![text(RECALLED)]));
    let all_steps = if caps.output_schema {
        structured_steps(&answer, &good_value(), false)
    } else {
        vec![text(ALL_ANSWER)]
    };
    list.push(scenario("kit-all", ALL, all_steps));
    list.push(scenario("kit-fallback", ".*", vec![text("kit fallback")]));
    let list: Vec<Scenario> = match serde_json::from_value(Value::Array(list)) {
        Ok(list) => list,
        Err(error) => panic!("conformance: the kit's scenarios do not parse: {error}"),
    };
    match Scenarios::new(list) {
        Ok(scenarios) => scenarios,
        Err(error) => panic!("conformance: the kit's scenarios do not compile: {error}"),
    }
}

/// The schema of the structured-output checks, as a value.
pub(crate) fn schema() -> Value {
    match serde_json::from_str(SCHEMA) {
        Ok(schema) => schema,
        Err(error) => panic!("conformance: SCHEMA is not JSON: {error}"),
    }
}
