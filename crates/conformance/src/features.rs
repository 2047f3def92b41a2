//! One check per gated capability, each proving behaviour from what the model was asked and
//! what the run returned; and one request using every declared capability at once.

use serde_json::Value;
use subagent_core::{Capability, Error, SessionRef, StopReason, ToolFilter};

use crate::bench::Bench;
use crate::checks::{MODEL, PERSONA, with_capability};
use crate::scenarios::{
    ALL, DELEGATE, HELLO, NESTED, RECALL, RECALLED, RELEASE_GATE, REMEMBER, REMEMBERED, SCHEMA_BAD,
    SCHEMA_GOOD, TURNS, good_value, schema,
};
use crate::{Adapter, Verdict, recorded};

fn declared(adapter: &dyn Adapter, capability: Capability) -> bool {
    adapter.factory().capabilities().supports(capability)
}

fn validates(schema: &Value, value: &Value) -> bool {
    match jsonschema::validator_for(schema) {
        Ok(validator) => validator.is_valid(value),
        Err(error) => panic!("conformance: the kit's schema does not compile: {error}"),
    }
}

/// A valid answer comes back as structured output that validates; a model that never answers
/// validly does not complete, and nothing invalid comes back as structured output.
pub(crate) async fn output_schema(adapter: &dyn Adapter) -> Verdict {
    if !declared(adapter, Capability::OutputSchema) {
        return Verdict::NotDeclared;
    }
    let bench = Bench::new(adapter, "output_schema").await;
    let schema = schema();
    let good = bench
        .run(
            bench
                .request(&format!("{SCHEMA_GOOD}: describe the widget"))
                .output_schema(schema.clone())
                .build(),
        )
        .await;
    assert_eq!(
        (good.outcome.status, good.outcome.structured.clone()),
        (StopReason::Completed, Some(good_value())),
        "conformance output_schema: the model's valid answer is the structured output: {:?}",
        good.outcome
    );
    assert!(validates(&schema, &good_value()));
    let bad = bench
        .run(
            bench
                .request(&format!("{SCHEMA_BAD}: describe the widget"))
                .output_schema(schema.clone())
                .build(),
        )
        .await;
    let escaped = bad
        .outcome
        .structured
        .as_ref()
        .is_some_and(|value| !validates(&schema, value));
    assert!(
        bad.outcome.status != StopReason::Completed && !escaped,
        "conformance output_schema: a model that never answers validly must not complete, and \
         no invalid structured output may come back: {:?}",
        bad.outcome
    );
    Verdict::Passed
}

/// The registry refuses a request past its `max_depth`; without a cap the child's delegate call
/// reaches a nested agent (the control), with the child at its cap the same call does not.
pub(crate) async fn depth_limit(adapter: &dyn Adapter) -> Verdict {
    if !declared(adapter, Capability::DepthLimit) {
        return Verdict::NotDeclared;
    }
    let bench = Bench::new(adapter, "depth_limit (gate)").await;
    let refused = bench
        .registry
        .start(&bench.name, bench.request(DELEGATE).max_depth(0).build())
        .await
        .err();
    assert_eq!(
        refused,
        Some(Error::DepthExceeded {
            child_depth: 1,
            max_depth: 0
        }),
        "conformance depth_limit: a request's max_depth lowers the registry's cap"
    );
    let prompt = format!("{DELEGATE}: hand the task on");
    if adapter.delegate_call("x").is_none() {
        // Children that never delegate: the cap holds trivially; the request must still run.
        let ended = bench.run(bench.request(&prompt).max_depth(1).build()).await;
        assert_eq!(
            ended.outcome.status,
            StopReason::Completed,
            "conformance depth_limit: {:?}",
            ended.outcome
        );
        return Verdict::Passed;
    }
    // The control: uncapped, the nested agent asks the model; then the parent may end.
    let control = Bench::new(adapter, "depth_limit (uncapped control)").await;
    let run = control.start(control.request(&prompt).build()).await;
    let nested = control.wait_for_request(NESTED).await;
    control.server.gate(RELEASE_GATE).open();
    let ended = control.finish(run).await;
    assert!(
        nested,
        "conformance depth_limit: without a cap the delegate_call started no agent that asked \
         the model (so a capped run would prove nothing); the run: {:?}",
        ended.outcome
    );
    // Capped: the child runs at its cap (depth 1 of 1), and the same call starts nothing.
    let capped = Bench::new(adapter, "depth_limit (capped)").await;
    capped.server.gate(RELEASE_GATE).open();
    let ended = capped
        .run(capped.request(&prompt).max_depth(1).build())
        .await;
    capped.first_request_for(DELEGATE);
    assert_eq!(
        capped.requests_for(NESTED),
        Vec::new(),
        "conformance depth_limit: a child at its cap started an agent that asked the model; the run: {:?}",
        ended.outcome
    );
    assert_eq!(
        ended.outcome.status,
        StopReason::Completed,
        "conformance depth_limit: a refused nested call is the child's business, the run completes: {:?}",
        ended.outcome
    );
    Verdict::Passed
}

/// `tail*` for a tool name: its first two characters and a wildcard.
fn prefix_pattern(name: &str) -> String {
    let head: String = name.chars().take(2).collect();
    format!("{head}*")
}

/// The model is offered exactly the tools the filter lets through: a filter with an exact name,
/// a denied name and a wildcard, built from the tools offered without one.
pub(crate) async fn tool_filter(adapter: &dyn Adapter) -> Verdict {
    if !declared(adapter, Capability::ToolFilter) {
        return Verdict::NotDeclared;
    }
    let prompt = format!("{HELLO}: say hello");
    let open = Bench::new(adapter, "tool_filter (unfiltered)").await;
    open.run(open.request(&prompt).build()).await;
    let offered = recorded::offered_tools(&open.first_request_for(HELLO));
    let [first, second, third, ..] = offered.as_slice() else {
        panic!(
            "conformance tool_filter: the child is offered {offered:?}; the kit needs three \
             tools to tell a filter from none"
        );
    };
    let filter = ToolFilter {
        allow: Some(vec![first.clone(), second.clone(), prefix_pattern(third)]),
        deny: vec![second.clone()],
    };
    let expected: Vec<String> = offered
        .iter()
        .filter(|tool| filter.permits(tool))
        .cloned()
        .collect();
    let filtered = Bench::new(adapter, "tool_filter").await;
    let ended = filtered
        .run(
            filtered
                .request(&prompt)
                .tool_filter(filter.clone())
                .build(),
        )
        .await;
    assert_eq!(
        ended.outcome.status,
        StopReason::Completed,
        "conformance tool_filter: {:?}",
        ended.outcome
    );
    assert_eq!(
        recorded::offered_tools(&filtered.first_request_for(HELLO)),
        expected,
        "conformance tool_filter: with {filter:?} the model is offered exactly these of {offered:?}"
    );
    Verdict::Passed
}

/// The persona is among the instructions the model receives.
pub(crate) async fn persona(adapter: &dyn Adapter) -> Verdict {
    if !declared(adapter, Capability::Persona) {
        return Verdict::NotDeclared;
    }
    let bench = Bench::new(adapter, "persona").await;
    let ended = bench
        .run(
            bench
                .request(&format!("{HELLO}: say hello"))
                .persona(PERSONA)
                .build(),
        )
        .await;
    assert_eq!(ended.outcome.status, StopReason::Completed, "{ended:?}");
    let instructions = recorded::instructions(&bench.first_request_for(HELLO));
    assert!(
        instructions.contains(PERSONA),
        "conformance persona: {PERSONA:?} is not in the model request's instructions: {instructions:?}"
    );
    Verdict::Passed
}

/// The model request names the requested model.
pub(crate) async fn model_override(adapter: &dyn Adapter) -> Verdict {
    if !declared(adapter, Capability::ModelOverride) {
        return Verdict::NotDeclared;
    }
    let bench = Bench::new(adapter, "model_override").await;
    let ended = bench
        .run(
            bench
                .request(&format!("{HELLO}: say hello"))
                .model(MODEL)
                .build(),
        )
        .await;
    assert_eq!(ended.outcome.status, StopReason::Completed, "{ended:?}");
    assert_eq!(
        recorded::model_name(&bench.first_request_for(HELLO)).as_deref(),
        Some(MODEL),
        "conformance model_override: the model request names the requested model"
    );
    Verdict::Passed
}

/// A run whose model would call tools for five turns stops after two, as `max_turns`.
pub(crate) async fn max_turns(adapter: &dyn Adapter) -> Verdict {
    if !declared(adapter, Capability::MaxTurns) {
        return Verdict::NotDeclared;
    }
    assert!(
        adapter.write_call("x", "x").is_some(),
        "conformance max_turns: the kit makes turns with the adapter's write_call, and it has none"
    );
    let bench = Bench::new(adapter, "max_turns").await;
    let ended = bench
        .run(
            bench
                .request(&format!("{TURNS}: keep working"))
                .max_turns(2)
                .build(),
        )
        .await;
    assert_eq!(
        (ended.outcome.status, bench.requests_for(TURNS).len()),
        (StopReason::MaxTurns, 2),
        "conformance max_turns: the run stops as max_turns after two model requests: {:?}",
        ended.outcome
    );
    Verdict::Passed
}

/// A first run, then a run resuming its session: the second one's model request carries the
/// first exchange.
pub(crate) async fn resume(adapter: &dyn Adapter) -> Verdict {
    if !declared(adapter, Capability::Resume) {
        return Verdict::NotDeclared;
    }
    let bench = Bench::new(adapter, "resume").await;
    let session = first_session(&bench).await;
    let second = bench
        .run(
            bench
                .request(&format!("{RECALL}: which number?"))
                .resume(session)
                .build(),
        )
        .await;
    assert_eq!(
        (second.outcome.status, second.outcome.text.as_str()),
        (StopReason::Completed, RECALLED),
        "conformance resume: {:?}",
        second.outcome
    );
    let history =
        serde_json::to_string(&bench.first_request_for(RECALL).messages).unwrap_or_default();
    assert!(
        history.contains(REMEMBER) && history.contains(REMEMBERED),
        "conformance resume: the resumed run's model request does not carry the first exchange: {history}"
    );
    Verdict::Passed
}

/// Runs the first exchange of a resume and returns its session.
async fn first_session(bench: &Bench<'_>) -> SessionRef {
    let first = bench
        .run(
            bench
                .request(&format!("{REMEMBER} the number 4242"))
                .build(),
        )
        .await;
    assert_eq!(
        (first.outcome.status, first.outcome.text.as_str()),
        (StopReason::Completed, REMEMBERED),
        "conformance resume: {:?}",
        first.outcome
    );
    match first.outcome.session {
        Some(session) => session,
        None => panic!(
            "conformance resume: the provider declares resume but a completed run's outcome has no session"
        ),
    }
}

/// One request setting every declared capability passes the gate, starts and completes.
/// Isolation excepted: it moves the child into a new place, where a resumed session of a
/// provider that keys sessions by directory (Claude Code) is not found; isolation is checked by
/// the gate here and with real git in each provider's own tests.
pub(crate) async fn all_declared(adapter: &dyn Adapter) -> Verdict {
    let bench = Bench::new(adapter, "all declared").await;
    let session = if bench.caps.resume {
        first_session(&bench).await
    } else {
        SessionRef {
            provider: bench.name.clone(),
            id: String::new(),
            cwd: None,
            transcript: None,
        }
    };
    let mut request = bench.request(&format!("{ALL}: everything at once"));
    let mut asked = Vec::new();
    for capability in Capability::ALL {
        if bench.caps.supports(capability) && capability != Capability::Isolation {
            request = with_capability(request, capability, &session);
            asked.push(capability);
        }
    }
    let request = request.build();
    assert_eq!(request.required_capabilities(), asked);
    let ended = bench.run(request).await;
    let expected = bench.caps.output_schema.then(good_value);
    assert_eq!(
        (ended.outcome.status, ended.outcome.structured.clone()),
        (StopReason::Completed, expected),
        "conformance all declared: a request with {asked:?} completes: {:?}",
        ended.outcome
    );
    Verdict::Passed
}
