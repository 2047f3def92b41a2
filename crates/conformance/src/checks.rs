//! The checks every provider passes whatever it declares: its capability table, the seam's run
//! contract, cancel, a failing child, the permission ceiling. The capability checks are in
//! `features.rs`.

use subagent_core::{Capability, Error, PermissionMode, Run, SessionRef, StopReason};

use crate::asks::with_capability;
use crate::bench::{Bench, fresh};
use crate::failure::{ensure, ensure_eq};
use crate::scenarios::{
    CANCEL, FAIL, FAIL_MESSAGE, HELLO, HELLO_ANSWER, OPEN_FILE, PLAN_FILE, WRITE_OPEN, WRITE_PLAN,
};
use crate::{Adapter, Check, Failure, Verdict, features, recorded};

pub(crate) async fn run(adapter: &dyn Adapter, check: Check) -> Result<Verdict, Failure> {
    match check {
        Check::Capabilities => capabilities(adapter).await,
        Check::Lifecycle => lifecycle(adapter).await,
        Check::Cancel => cancel(adapter).await,
        Check::ChildFailure => child_failure(adapter).await,
        Check::PermissionCeiling => permission_ceiling(adapter).await,
        Check::OutputSchema => features::output_schema(adapter).await,
        Check::DepthLimit => features::depth_limit(adapter).await,
        Check::ToolFilter => features::tool_filter(adapter).await,
        Check::Persona => features::persona(adapter).await,
        Check::ModelOverride => features::model_override(adapter).await,
        Check::MaxTurns => features::max_turns(adapter).await,
        Check::Resume => features::resume(adapter).await,
        Check::Effort => features::effort(adapter).await,
        Check::PermissionRules => crate::rules::permission_rules(adapter).await,
        Check::McpServers => crate::mcp::mcp_servers(adapter).await,
        Check::AllDeclared => features::all_declared(adapter).await,
    }
}

/// Factory and provider agree; the gate lets every declared capability through and refuses
/// every other one; a request deeper than the registry's cap is refused without reaching the
/// model; a run whose sender is dropped ends `failed`; and each declared capability shows its
/// effect in a run (`features::honoured`).
async fn capabilities(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    let bench = Bench::new(adapter, "capabilities").await?;
    let factory = adapter.factory();
    ensure_eq!(
        factory.capabilities(),
        bench.provider.capabilities(),
        "conformance capabilities: factory {:?} and its provider {:?} must declare the same table",
        factory.kind(),
        bench.name
    );
    ensure_eq!(
        bench.provider.capabilities(),
        bench.provider.capabilities(),
        "conformance capabilities: the table is static"
    );
    let session = SessionRef {
        provider: bench.name.clone(),
        id: "kit-session".to_owned(),
        cwd: Some(adapter.workdir()),
        transcript: None,
    };
    for capability in Capability::ALL {
        let request = with_capability(bench.request(HELLO), capability, &session).build();
        let verdict = bench.registry.check(&bench.name, &request).map(|_| ());
        // The provider may say why it lacks one (`capability_reason`); what is refused is fixed.
        let verdict = verdict.map_err(|error| match error {
            Error::UnsupportedCapability {
                provider, missing, ..
            } => Error::UnsupportedCapability {
                provider,
                missing,
                because: None,
            },
            other => other,
        });
        let expected = if bench.caps.supports(capability) {
            Ok(())
        } else {
            Err(Error::UnsupportedCapability {
                provider: bench.name.clone(),
                missing: vec![capability],
                because: None,
            })
        };
        ensure_eq!(
            verdict,
            expected,
            "conformance capabilities: the gate's answer for {capability} (declared: {:?})",
            bench.caps
        );
    }
    let too_deep = bench
        .request(HELLO)
        .depth(bench.registry.max_depth())
        .build();
    let refused = bench.registry.start(&bench.name, too_deep).await.err();
    ensure_eq!(
        refused,
        Some(Error::DepthExceeded {
            child_depth: bench.registry.max_depth() + 1,
            max_depth: bench.registry.max_depth(),
        }),
        "conformance capabilities: a child past the registry's cap is refused"
    );
    ensure_eq!(
        bench.server.model_requests().len(),
        0,
        "conformance capabilities: nothing refused reaches the model"
    );
    // The seam's contract, on this provider's name and request: a sender dropped without an
    // outcome ends the run `failed`, with its one `Started` and one `Finished`.
    let (sender, run) = Run::channel(&bench.name, &bench.request(HELLO).build());
    drop(sender);
    let ended = bench.finish(run).await?;
    ensure_eq!(
        (ended.outcome.status, ended.outcome.diagnostic.as_deref()),
        (
            StopReason::Failed,
            Some("the provider dropped the run without reporting an outcome")
        ),
        "conformance capabilities: a dropped sender ends the run failed"
    );
    // What the table says is true: each declared capability shows in a run.
    features::honoured(adapter, "capabilities").await?;
    Ok(Verdict::Passed)
}

/// A plain run completes with the model's answer, its requests keep the protocol's rules.
async fn lifecycle(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    let bench = Bench::new(adapter, "lifecycle").await?;
    let ended = bench
        .run(
            bench
                .answering(&format!("{HELLO}: say hello"), HELLO_ANSWER)
                .build(),
        )
        .await?;
    ensure_eq!(
        (ended.outcome.status, ended.outcome.text.as_str()),
        (StopReason::Completed, HELLO_ANSWER),
        "conformance lifecycle: a plain run completes with the child's answer: {:?}",
        ended.outcome
    );
    if bench.model_free().is_none() {
        bench.first_request_for(HELLO)?;
    }
    ensure_eq!(
        bench.server.violations(),
        Vec::<String>::new(),
        "conformance lifecycle: protocol rules"
    );
    Ok(Verdict::Passed)
}

/// A cancel while the child works (its model answering, or a child without a model running)
/// ends the run `cancelled` within the kit's bound.
async fn cancel(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    let bench = Bench::new(adapter, "cancel").await?;
    let run = bench
        .start(bench.hanging(&format!("{CANCEL}: wait")).build())
        .await?;
    // A child that asks the model is cancelled while the model answers; one that calls none
    // exists once `start` has returned.
    let asked = bench.model_free().is_some() || bench.wait_for_request(CANCEL).await;
    run.cancel();
    let ended = bench.finish(run).await?;
    ensure!(asked, "conformance cancel: the child never asked the model");
    ensure_eq!(
        ended.outcome.status,
        StopReason::Cancelled,
        "conformance cancel: {:?}",
        ended.outcome
    );
    Ok(Verdict::Passed)
}

/// A model error (or a failing child) ends the run `failed`, its diagnostic carrying the
/// error's message.
async fn child_failure(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    let bench = Bench::new(adapter, "child failure").await?;
    let ended = bench
        .run(
            bench
                .failing(&format!("{FAIL}: fail"), FAIL_MESSAGE)
                .build(),
        )
        .await?;
    let diagnostic = ended.outcome.diagnostic.clone().unwrap_or_default();
    ensure!(
        ended.outcome.status == StopReason::Failed && diagnostic.contains(FAIL_MESSAGE),
        "conformance child failure: a failing child ends the run failed, its diagnostic naming \
         {FAIL_MESSAGE:?}: {:?}",
        ended.outcome
    );
    Ok(Verdict::Passed)
}

/// Without a ceiling the write happens (the control); under a `plan` ceiling it does not (the
/// provider keeps the child from writing, or refuses the request).
async fn permission_ceiling(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    let bench = Bench::new(adapter, "permission ceiling").await?;
    let open = adapter.workdir().join(OPEN_FILE);
    let plan = adapter.workdir().join(PLAN_FILE);
    fresh(&open)?;
    fresh(&plan)?;
    let writes = bench.writing(WRITE_PLAN, PLAN_FILE).is_some();
    if let Some(control) = bench.writing(&format!("{WRITE_OPEN}: write"), OPEN_FILE) {
        let control = bench.run(control.build()).await?;
        ensure!(
            open.is_file(),
            "conformance permission ceiling: without a ceiling the child must write {} \
             (configure the adapter's provider to allow writes); the run: {:?}",
            open.display(),
            control.outcome
        );
    }
    let prompt = format!("{WRITE_PLAN}: write");
    let ceiling = bench
        .writing(&prompt, PLAN_FILE)
        .unwrap_or_else(|| bench.answering(&prompt, "nothing written"))
        .permission_ceiling(PermissionMode::Plan)
        .build();
    // Refusing a ceiling it cannot keep is the strictest way to honour it.
    let Ok(run) = bench.registry.start(&bench.name, ceiling).await else {
        ensure!(
            !plan.exists(),
            "conformance permission ceiling: {} was written by a refused request",
            plan.display()
        );
        return Ok(Verdict::Passed);
    };
    let ceiling = bench.finish(run).await?;
    ensure!(
        !plan.exists(),
        "conformance permission ceiling: {} was written under a plan ceiling; the run: {:?}, \
         its events: {:?}",
        plan.display(),
        ceiling.outcome,
        ceiling.events
    );
    if bench.model_free().is_none() {
        let asked = bench.first_request_for(WRITE_PLAN)?;
        if !writes {
            ensure_eq!(
                recorded::offered_tools(&asked),
                Vec::<String>::new(),
                "conformance permission ceiling: the adapter says the child cannot write, so it must be offered no tool"
            );
        }
    }
    Ok(Verdict::Passed)
}
