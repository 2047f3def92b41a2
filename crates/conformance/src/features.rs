//! One check per gated capability, each proving behaviour from what the model was asked and
//! what the run returned; and one request using every declared capability at once, each
//! showing its effect (`honoured`).

use serde_json::Value;
use subagent_core::{Capability, Effort, Error, SessionRef, StopReason, ToolFilter};

use crate::asks::{MODEL, PERSONA, with_capability};
use crate::bench::{Bench, Ended};
use crate::failure::{ensure, ensure_eq};
use crate::scenarios::{
    ALL, ALL_ANSWER, DELEGATE, DELEGATE_ANSWER, HELLO, NESTED, RECALL, RECALLED, RELEASE_GATE,
    REMEMBER, REMEMBERED, SCHEMA_BAD, SCHEMA_GOOD, TURNS, bad_value, good_value, schema,
};
use crate::{Adapter, Failure, Verdict, recorded};

fn declared(adapter: &dyn Adapter, capability: Capability) -> bool {
    adapter.factory().capabilities().supports(capability)
}

/// The capabilities the kit can see only in what a child asks its model.
const SEEN_IN_MODEL_REQUESTS: [Capability; 6] = [
    Capability::ToolFilter,
    Capability::Persona,
    Capability::ModelOverride,
    Capability::MaxTurns,
    Capability::Resume,
    Capability::Effort,
];

/// Fails `what` when the provider's children call no model and it declares `capability`, which
/// the kit proves only from model requests.
fn needs_model(adapter: &dyn Adapter, capability: Capability, what: &str) -> Result<(), Failure> {
    ensure!(
        adapter.model_free().is_none() || !declared(adapter, capability),
        "conformance {what}: declares {capability} but does not honour it: the adapter's \
         children call no model (Adapter::model_free), and {capability} shows only in what a \
         child asks its model; a provider without a model does not declare it"
    );
    Ok(())
}

fn validates(schema: &Value, value: &Value) -> Result<bool, Failure> {
    match jsonschema::validator_for(schema) {
        Ok(validator) => Ok(validator.is_valid(value)),
        Err(error) => Err(Failure::new(format!(
            "conformance: the kit's schema does not compile: {error}"
        ))),
    }
}

/// A valid answer comes back as structured output that validates; a model that never answers
/// validly does not complete, and nothing invalid comes back as structured output.
pub(crate) async fn output_schema(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    if !declared(adapter, Capability::OutputSchema) {
        return Ok(Verdict::NotDeclared);
    }
    let bench = Bench::new(adapter, "output_schema").await?;
    let schema = schema();
    let good = bench
        .run(
            bench
                .answering(
                    &format!("{SCHEMA_GOOD}: describe the widget"),
                    &good_value().to_string(),
                )
                .output_schema(schema.clone())
                .build(),
        )
        .await?;
    ensure_eq!(
        (good.outcome.status, good.outcome.structured.clone()),
        (StopReason::Completed, Some(good_value())),
        "conformance output_schema: the child's valid answer is the structured output: {:?}",
        good.outcome
    );
    ensure!(
        validates(&schema, &good_value())?,
        "conformance: the kit's own value does not validate"
    );
    let bad = bench
        .run(
            bench
                .answering(
                    &format!("{SCHEMA_BAD}: describe the widget"),
                    &bad_value().to_string(),
                )
                .output_schema(schema.clone())
                .build(),
        )
        .await?;
    let escaped = match &bad.outcome.structured {
        Some(value) => !validates(&schema, value)?,
        None => false,
    };
    ensure!(
        bad.outcome.status != StopReason::Completed && !escaped,
        "conformance output_schema: a child that never answers validly must not complete, and \
         no invalid structured output may come back: {:?}",
        bad.outcome
    );
    Ok(Verdict::Passed)
}

/// The registry refuses a request past its `max_depth`; without a cap the child's delegate call
/// reaches a nested agent (the control), with the child at its cap the same call does not.
pub(crate) async fn depth_limit(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    if !declared(adapter, Capability::DepthLimit) {
        return Ok(Verdict::NotDeclared);
    }
    let bench = Bench::new(adapter, "depth_limit (gate)").await?;
    let prompt = format!("{DELEGATE}: hand the task on");
    let refused = bench
        .registry
        .start(
            &bench.name,
            bench
                .answering(&prompt, DELEGATE_ANSWER)
                .max_depth(0)
                .build(),
        )
        .await
        .err();
    ensure_eq!(
        refused,
        Some(Error::DepthExceeded {
            child_depth: 1,
            max_depth: 0
        }),
        "conformance depth_limit: a request's max_depth lowers the registry's cap"
    );
    if bench.model_free().is_some() || adapter.delegate_call("x").is_none() {
        // Children that never delegate: the cap holds trivially; the request must still run.
        let ended = bench
            .run(
                bench
                    .answering(&prompt, DELEGATE_ANSWER)
                    .max_depth(1)
                    .build(),
            )
            .await?;
        ensure_eq!(
            ended.outcome.status,
            StopReason::Completed,
            "conformance depth_limit: {:?}",
            ended.outcome
        );
        return Ok(Verdict::Passed);
    }
    // The control: uncapped, the nested agent asks the model; then the parent may end.
    let control = Bench::new(adapter, "depth_limit (uncapped control)").await?;
    let run = control.start(control.request(&prompt).build()).await?;
    let nested = control.wait_for_request(NESTED).await;
    control.server.gate(RELEASE_GATE).open();
    let ended = control.finish(run).await?;
    ensure!(
        nested,
        "conformance depth_limit: without a cap the delegate_call started no agent that asked \
         the model (so a capped run would prove nothing); the run: {:?}",
        ended.outcome
    );
    // Capped: the child runs at its cap (depth 1 of 1), and the same call starts nothing.
    let capped = Bench::new(adapter, "depth_limit (capped)").await?;
    capped.server.gate(RELEASE_GATE).open();
    let ended = capped
        .run(capped.request(&prompt).max_depth(1).build())
        .await?;
    capped.first_request_for(DELEGATE)?;
    ensure_eq!(
        capped.requests_for(NESTED).len(),
        0,
        "conformance depth_limit: a child at its cap started an agent that asked the model; the run: {:?}",
        ended.outcome
    );
    ensure_eq!(
        ended.outcome.status,
        StopReason::Completed,
        "conformance depth_limit: a refused nested call is the child's business, the run completes: {:?}",
        ended.outcome
    );
    Ok(Verdict::Passed)
}

/// `tail*` for a tool name: its first two characters and a wildcard.
fn prefix_pattern(name: &str) -> String {
    let head: String = name.chars().take(2).collect();
    format!("{head}*")
}

/// The model is offered exactly the tools the filter lets through: a filter with an exact name,
/// a denied name and a wildcard, built from the tools offered without one.
pub(crate) async fn tool_filter(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    if !declared(adapter, Capability::ToolFilter) {
        return Ok(Verdict::NotDeclared);
    }
    needs_model(adapter, Capability::ToolFilter, "tool_filter")?;
    let prompt = format!("{HELLO}: say hello");
    let open = Bench::new(adapter, "tool_filter (unfiltered)").await?;
    open.run(open.request(&prompt).build()).await?;
    let offered = recorded::offered_tools(&open.first_request_for(HELLO)?);
    let [first, second, third, ..] = offered.as_slice() else {
        return Err(Failure::new(format!(
            "conformance tool_filter: declares tool_filter but does not honour it: the child is \
             offered {offered:?}; the kit needs three tools to tell a filter from none"
        )));
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
    let filtered = Bench::new(adapter, "tool_filter").await?;
    let ended = filtered
        .run(
            filtered
                .request(&prompt)
                .tool_filter(filter.clone())
                .build(),
        )
        .await?;
    ensure_eq!(
        ended.outcome.status,
        StopReason::Completed,
        "conformance tool_filter: {:?}",
        ended.outcome
    );
    ensure_eq!(
        recorded::offered_tools(&filtered.first_request_for(HELLO)?),
        expected,
        "conformance tool_filter: with {filter:?} the model is offered exactly these of {offered:?}"
    );
    Ok(Verdict::Passed)
}

/// The persona is among the instructions the model receives.
pub(crate) async fn persona(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    if !declared(adapter, Capability::Persona) {
        return Ok(Verdict::NotDeclared);
    }
    needs_model(adapter, Capability::Persona, "persona")?;
    let bench = Bench::new(adapter, "persona").await?;
    let ended = bench
        .run(
            bench
                .request(&format!("{HELLO}: say hello"))
                .persona(PERSONA)
                .build(),
        )
        .await?;
    ensure_eq!(
        ended.outcome.status,
        StopReason::Completed,
        "conformance persona: {:?}",
        ended.outcome
    );
    let instructions = recorded::instructions(&bench.first_request_for(HELLO)?);
    ensure!(
        instructions.contains(PERSONA),
        "conformance persona: {PERSONA:?} is not in the model request's instructions: {:?}",
        excerpt(&instructions)
    );
    Ok(Verdict::Passed)
}

/// The model request names the requested model.
pub(crate) async fn model_override(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    if !declared(adapter, Capability::ModelOverride) {
        return Ok(Verdict::NotDeclared);
    }
    needs_model(adapter, Capability::ModelOverride, "model_override")?;
    let bench = Bench::new(adapter, "model_override").await?;
    let ended = bench
        .run(
            bench
                .request(&format!("{HELLO}: say hello"))
                .model(MODEL)
                .build(),
        )
        .await?;
    ensure_eq!(
        ended.outcome.status,
        StopReason::Completed,
        "conformance model_override: {:?}",
        ended.outcome
    );
    ensure_eq!(
        recorded::model_name(&bench.first_request_for(HELLO)?).as_deref(),
        Some(MODEL),
        "conformance model_override: the model request names the requested model"
    );
    Ok(Verdict::Passed)
}

/// A run whose model would call tools for five turns stops after two, as `max_turns`.
pub(crate) async fn max_turns(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    if !declared(adapter, Capability::MaxTurns) {
        return Ok(Verdict::NotDeclared);
    }
    needs_model(adapter, Capability::MaxTurns, "max_turns")?;
    ensure!(
        adapter.write_call("x", "x").is_some(),
        "conformance max_turns: the kit makes turns with the adapter's write_call, and it has none"
    );
    let bench = Bench::new(adapter, "max_turns").await?;
    let ended = bench
        .run(
            bench
                .request(&format!("{TURNS}: keep working"))
                .max_turns(2)
                .build(),
        )
        .await?;
    ensure_eq!(
        (ended.outcome.status, bench.requests_for(TURNS).len()),
        (StopReason::MaxTurns, 2),
        "conformance max_turns: the run stops as max_turns after two model requests: {:?}",
        ended.outcome
    );
    Ok(Verdict::Passed)
}

/// A run asking for a low effort and one asking for a high one: every model request of each
/// carries its effort, in the protocol's spelling ([`recorded::effort`]). (A provider that
/// does not declare `effort` has it refused by the registry: [`crate::Check::Capabilities`].)
pub(crate) async fn effort(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    if !declared(adapter, Capability::Effort) {
        return Ok(Verdict::NotDeclared);
    }
    needs_model(adapter, Capability::Effort, "effort")?;
    let bench = Bench::new(adapter, "effort").await?;
    for (effort, marker) in [
        (Effort::Low, "KIT-EFFORT-LOW"),
        (Effort::High, "KIT-EFFORT-HIGH"),
    ] {
        let ended = bench
            .run(
                bench
                    .request(&format!("{HELLO}: say hello ({marker})"))
                    .effort(effort)
                    .build(),
            )
            .await?;
        ensure_eq!(
            ended.outcome.status,
            StopReason::Completed,
            "conformance effort: a run asking for effort {effort}: {:?}",
            ended.outcome
        );
        let asked: Vec<Option<Effort>> = bench
            .requests_for(marker)
            .iter()
            .map(recorded::effort)
            .collect();
        ensure!(
            !asked.is_empty() && asked.iter().all(|asked| *asked == Some(effort)),
            "conformance effort: declares effort but does not honour it: a run asking for {effort} \
             sent the model the efforts {asked:?} (one per request)"
        );
    }
    Ok(Verdict::Passed)
}

/// A first run, then a run resuming its session: the second one's model request carries the
/// first exchange.
pub(crate) async fn resume(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    if !declared(adapter, Capability::Resume) {
        return Ok(Verdict::NotDeclared);
    }
    needs_model(adapter, Capability::Resume, "resume")?;
    let bench = Bench::new(adapter, "resume").await?;
    let session = first_session(&bench).await?;
    let second = bench
        .run(
            bench
                .request(&format!("{RECALL}: which number?"))
                .resume(session)
                .build(),
        )
        .await?;
    ensure_eq!(
        (second.outcome.status, second.outcome.text.as_str()),
        (StopReason::Completed, RECALLED),
        "conformance resume: {:?}",
        second.outcome
    );
    let history =
        serde_json::to_string(&bench.first_request_for(RECALL)?.messages).unwrap_or_default();
    ensure!(
        history.contains(REMEMBER) && history.contains(REMEMBERED),
        "conformance resume: the resumed run's model request does not carry the first exchange: {:?}",
        excerpt(&history)
    );
    Ok(Verdict::Passed)
}

/// Runs the first exchange of a resume and returns its session.
async fn first_session(bench: &Bench<'_>) -> Result<SessionRef, Failure> {
    let first = bench
        .run(
            bench
                .request(&format!("{REMEMBER} the number 4242"))
                .build(),
        )
        .await?;
    ensure_eq!(
        (first.outcome.status, first.outcome.text.as_str()),
        (StopReason::Completed, REMEMBERED),
        "conformance {}: {:?}",
        bench.what,
        first.outcome
    );
    first.outcome.session.ok_or_else(|| {
        Failure::new(format!(
            "conformance {}: declares resume but does not honour it: a completed run's outcome has no session",
            bench.what
        ))
    })
}

/// Each declared capability shows its effect (`honoured`), and one request setting every
/// declared capability passes the gate, starts and completes. Isolation excepted: it moves the
/// child into a new place, where a resumed session of a provider that keys sessions by
/// directory (Claude Code) is not found; isolation is checked by the gate and with real git in
/// each provider's own tests.
pub(crate) async fn all_declared(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    honoured(adapter, "all declared").await?;
    if !declared(adapter, Capability::Resume) {
        // `honoured`'s request was that one.
        return Ok(Verdict::Passed);
    }
    let bench = Bench::new(adapter, "all declared").await?;
    let session = first_session(&bench).await?;
    let (ended, asked) = everything(&bench, Some(&session), None).await?;
    let expected = bench.caps.output_schema.then(good_value);
    ensure_eq!(
        (ended.outcome.status, ended.outcome.structured.clone()),
        (StopReason::Completed, expected),
        "conformance all declared: a request with {asked:?} completes: {:?}",
        ended.outcome
    );
    Ok(Verdict::Passed)
}

/// At most this much of a text a verdict quotes.
const QUOTED_CHARS: usize = 300;

/// `text`, cut to [`QUOTED_CHARS`] with `…` when longer.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Runs one request setting every declared capability (isolation excepted; `resume` only with
/// a `session`), `denied` by its tool filter when given; returns the run and what it asked for.
async fn everything(
    bench: &Bench<'_>,
    session: Option<&SessionRef>,
    denied: Option<&str>,
) -> Result<(Ended, Vec<Capability>), Failure> {
    let answer = if bench.caps.output_schema {
        good_value().to_string()
    } else {
        ALL_ANSWER.to_owned()
    };
    let none = SessionRef {
        provider: bench.name.clone(),
        id: String::new(),
        cwd: None,
        transcript: None,
    };
    let mut request = bench.answering(&format!("{ALL}: everything at once"), &answer);
    let mut asked = Vec::new();
    for capability in Capability::ALL {
        let skipped = capability == Capability::Isolation
            || (capability == Capability::Resume && session.is_none());
        if bench.caps.supports(capability) && !skipped {
            request = with_capability(request, capability, session.unwrap_or(&none));
            asked.push(capability);
        }
    }
    if let Some(denied) = denied {
        request = request.tool_filter(ToolFilter::deny([denied]));
    }
    let request = request.build();
    ensure_eq!(
        request.required_capabilities(),
        asked,
        "conformance {}: the kit's request",
        bench.what
    );
    let ended = bench.run(request).await?;
    Ok((ended, asked))
}

/// Each declared capability shows its effect where a run can show it: one request setting
/// every declared capability but `resume` completes with the structured output
/// (`output_schema`), the persona among the model request's instructions, the model's name in
/// it, a tool the filter denies missing from the tools it offers; then a run resuming a first
/// one carries the first exchange (`resume`). (`max_turns`, `max_depth` and `effort` have their
/// own checks.) A provider whose children call no model must not declare what only a model
/// request shows.
pub(crate) async fn honoured(adapter: &dyn Adapter, what: &'static str) -> Result<(), Failure> {
    for capability in SEEN_IN_MODEL_REQUESTS {
        needs_model(adapter, capability, what)?;
    }
    let bench = Bench::new(adapter, what).await?;
    let caps = bench.caps;
    let unhonoured = |capability: Capability, seen: String| {
        Failure::new(format!(
            "conformance {what}: declares {capability} but does not honour it: {seen}"
        ))
    };
    // A tool the filter denies: one the child is offered without a filter.
    let denied = if caps.tool_filter {
        bench
            .run(bench.request(&format!("{HELLO}: say hello")).build())
            .await?;
        let offered = recorded::offered_tools(&bench.first_request_for(HELLO)?);
        let denied = offered.get(1).or(offered.first()).cloned();
        Some(denied.ok_or_else(|| {
            unhonoured(
                Capability::ToolFilter,
                "the child is offered no tool to filter".to_owned(),
            )
        })?)
    } else {
        None
    };
    let (ended, asked) = everything(&bench, None, denied.as_deref()).await?;
    ensure_eq!(
        ended.outcome.status,
        StopReason::Completed,
        "conformance {what}: a request with {asked:?} completes: {:?}",
        ended.outcome
    );
    if caps.output_schema && ended.outcome.structured != Some(good_value()) {
        return Err(unhonoured(
            Capability::OutputSchema,
            format!(
                "the structured output is {:?}, expected {}; the run: {:?}",
                ended.outcome.structured,
                good_value(),
                ended.outcome
            ),
        ));
    }
    if bench.model_free().is_some() {
        return Ok(());
    }
    let all = bench.first_request_for(ALL)?;
    let instructions = recorded::instructions(&all);
    if caps.persona && !instructions.contains(PERSONA) {
        return Err(unhonoured(
            Capability::Persona,
            format!(
                "{PERSONA:?} is not in the model request's instructions: {:?}",
                excerpt(&instructions)
            ),
        ));
    }
    let model = recorded::model_name(&all);
    if caps.model_override && model.as_deref() != Some(MODEL) {
        return Err(unhonoured(
            Capability::ModelOverride,
            format!("the model request names {model:?}, not {MODEL:?}"),
        ));
    }
    let offered = recorded::offered_tools(&all);
    if let Some(denied) = denied.filter(|denied| offered.contains(denied)) {
        return Err(unhonoured(
            Capability::ToolFilter,
            format!("the filter denies {denied:?} and the model is offered {offered:?}"),
        ));
    }
    if caps.resume {
        let session = first_session(&bench).await?;
        let second = bench
            .run(
                bench
                    .request(&format!("{RECALL}: which number?"))
                    .resume(session)
                    .build(),
            )
            .await?;
        let history =
            serde_json::to_string(&bench.first_request_for(RECALL)?.messages).unwrap_or_default();
        if !(history.contains(REMEMBER) && history.contains(REMEMBERED)) {
            return Err(unhonoured(
                Capability::Resume,
                format!(
                    "the resumed run's model request does not carry the first exchange: {:?}; the run: {:?}",
                    excerpt(&history),
                    second.outcome
                ),
            ));
        }
    }
    Ok(())
}
