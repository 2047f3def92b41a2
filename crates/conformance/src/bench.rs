//! One check's bench: a fresh fake model server with the kit's scenarios, the adapter's provider
//! pointed at it, a registry holding that provider; and running a request to its end with the
//! event envelope checked.

use std::sync::Arc;

use futures::StreamExt;
use subagent_core::registry::Registry;
use subagent_core::{
    Capabilities, Outcome, Run, RunEvent, StartRequest, StartRequestBuilder, SubagentProvider,
};
use subagent_test_support::{FakeServer, RecordedRequest};

use crate::{Adapter, TIMEOUT, recorded, scenarios};

/// A run's events and outcome.
#[derive(Debug)]
pub(crate) struct Ended {
    pub(crate) events: Vec<RunEvent>,
    pub(crate) outcome: Outcome,
}

pub(crate) struct Bench<'a> {
    pub(crate) adapter: &'a dyn Adapter,
    pub(crate) server: FakeServer,
    pub(crate) provider: Arc<dyn SubagentProvider>,
    pub(crate) registry: Registry,
    /// The provider's name, as registered.
    pub(crate) name: String,
    /// The provider's capabilities.
    pub(crate) caps: Capabilities,
    /// What the check is, for messages.
    pub(crate) what: &'static str,
}

impl<'a> Bench<'a> {
    pub(crate) async fn new(adapter: &'a dyn Adapter, what: &'static str) -> Self {
        let caps = adapter.factory().capabilities();
        let server = match FakeServer::start(scenarios::all(adapter, caps)).await {
            Ok(server) => server,
            Err(error) => panic!("conformance {what}: cannot start the fake model server: {error}"),
        };
        let provider = adapter.provider(&server);
        let name = provider.name().to_owned();
        let caps = provider.capabilities();
        let mut registry = Registry::new();
        // A request asking for isolation runs its child in a fresh directory of its own.
        registry.set_isolator(Arc::new(crate::apart::Apart));
        if let Err(error) = registry.register(Arc::clone(&provider)) {
            panic!("conformance {what}: cannot register provider {name:?}: {error}");
        }
        Self {
            adapter,
            server,
            provider,
            registry,
            name,
            caps,
            what,
        }
    }

    /// The adapter's request for `prompt`.
    pub(crate) fn request(&self, prompt: &str) -> StartRequestBuilder {
        self.adapter.request(&self.server, prompt)
    }

    /// Starts through the registry; a refusal fails the check.
    pub(crate) async fn start(&self, request: StartRequest) -> Run {
        let asked = request.required_capabilities();
        match self.registry.start(&self.name, request).await {
            Ok(run) => run,
            Err(error) => panic!(
                "conformance {}: provider {:?} refused a request needing {asked:?} (it declares {:?}): {error}",
                self.what, self.name, self.caps
            ),
        }
    }

    /// Starts and waits for the end.
    pub(crate) async fn run(&self, request: StartRequest) -> Ended {
        let run = self.start(request).await;
        self.finish(run).await
    }

    /// Waits (bounded) for the run's end, then checks its envelope: exactly one `Started`
    /// (first, naming the run and the provider) and one `Finished` (last, with the outcome's
    /// status).
    pub(crate) async fn finish(&self, mut run: Run) -> Ended {
        let what = self.what;
        let Some(events) = run.take_events() else {
            panic!("conformance {what}: a fresh run's events were already taken");
        };
        let collected = tokio::spawn(events.collect::<Vec<_>>());
        let id = run.id();
        let description = run.description().to_owned();
        let outcome = match tokio::time::timeout(TIMEOUT, run.outcome()).await {
            Ok(outcome) => outcome,
            Err(_) => panic!(
                "conformance {what}: the run of provider {:?} did not end within {TIMEOUT:?}",
                self.name
            ),
        };
        let events = match tokio::time::timeout(TIMEOUT, collected).await {
            Ok(Ok(events)) => events,
            Ok(Err(error)) => panic!("conformance {what}: collecting events failed: {error}"),
            Err(_) => panic!(
                "conformance {what}: the event stream did not end within {TIMEOUT:?} after the outcome"
            ),
        };
        let started = RunEvent::Started {
            run_id: id,
            provider: self.name.clone(),
            description,
        };
        let finished = RunEvent::Finished {
            status: outcome.status,
        };
        let count = |wanted: fn(&RunEvent) -> bool| events.iter().filter(|e| wanted(e)).count();
        let starts = count(|e| matches!(e, RunEvent::Started { .. }));
        let ends = count(|e| matches!(e, RunEvent::Finished { .. }));
        assert!(
            events.first() == Some(&started)
                && events.last() == Some(&finished)
                && starts == 1
                && ends == 1,
            "conformance {what}: a run reports exactly one Started (first: {started:?}) and one \
             Finished (last: {finished:?}); got {starts} Started and {ends} Finished in {events:#?}"
        );
        Ended { events, outcome }
    }

    /// The model requests whose latest genuine prompt contains `marker`.
    pub(crate) fn requests_for(&self, marker: &str) -> Vec<RecordedRequest> {
        self.server
            .model_requests()
            .into_iter()
            .filter(|r| recorded::genuine_prompt(r).contains(marker))
            .collect()
    }

    /// The first model request for `marker`; its absence fails the check.
    pub(crate) fn first_request_for(&self, marker: &str) -> RecordedRequest {
        match self.requests_for(marker).into_iter().next() {
            Some(request) => request,
            None => panic!(
                "conformance {}: no model request for {marker} was recorded; requests: {:#?}",
                self.what,
                self.server.model_requests()
            ),
        }
    }

    /// Waits (bounded) until a model request for `marker` arrives; `false` if none did.
    pub(crate) async fn wait_for_request(&self, marker: &str) -> bool {
        let wait = async {
            loop {
                // Counted before looking: a request arriving in between ends the wait at once.
                let count = self.server.requests().len();
                if !self.requests_for(marker).is_empty() {
                    return;
                }
                self.server.wait_requests(count + 1).await;
            }
        };
        tokio::time::timeout(TIMEOUT, wait).await.is_ok()
    }
}
