//! One check's bench: a fresh fake model server with the kit's scenarios, the adapter's provider
//! pointed at it, a registry holding that provider; the request that makes the child do what a
//! check needs (by the scenario's marker, or the adapter's [`ModelFree`] input); and running a
//! request to its end with the event envelope checked.

use std::sync::Arc;

use futures::StreamExt;
use subagent_core::registry::Registry;
use subagent_core::{
    Capabilities, Outcome, Run, RunEvent, StartRequest, StartRequestBuilder, SubagentProvider,
};
use subagent_test_support::{FakeServer, RecordedRequest};

use crate::failure::{ensure, ensure_eq};
use crate::{Adapter, Failure, ModelFree, TIMEOUT, recorded, scenarios};

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
    pub(crate) async fn new(adapter: &'a dyn Adapter, what: &'static str) -> Result<Self, Failure> {
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
            return Err(Failure::new(format!(
                "conformance {what}: cannot register provider {name:?}: {error}"
            )));
        }
        Ok(Self {
            adapter,
            server,
            provider,
            registry,
            name,
            caps,
            what,
        })
    }

    /// The adapter's request for `prompt`.
    pub(crate) fn request(&self, prompt: &str) -> StartRequestBuilder {
        self.adapter.request(&self.server, prompt)
    }

    /// How the adapter drives a child that calls no model, if so.
    pub(crate) fn model_free(&self) -> Option<&dyn ModelFree> {
        self.adapter.model_free()
    }

    /// A request whose child completes with `answer`: `prompt` (holding the marker of the
    /// kit's scenario that answers it) for a child that asks the model, else the adapter's
    /// [`ModelFree::answer`].
    pub(crate) fn answering(&self, prompt: &str, answer: &str) -> StartRequestBuilder {
        match self.model_free() {
            Some(free) => self.request(&free.answer(answer)),
            None => self.request(prompt),
        }
    }

    /// A request whose child fails with `message` (`prompt` for a child that asks the model).
    pub(crate) fn failing(&self, prompt: &str, message: &str) -> StartRequestBuilder {
        match self.model_free() {
            Some(free) => self.request(&free.fail(message)),
            None => self.request(prompt),
        }
    }

    /// A request whose child runs until it is stopped (`prompt` for a child that asks the
    /// model).
    pub(crate) fn hanging(&self, prompt: &str) -> StartRequestBuilder {
        match self.model_free() {
            Some(free) => self.request(&free.hang()),
            None => self.request(prompt),
        }
    }

    /// A request whose child tries to write `file` (`prompt` for a child that asks the model,
    /// whose scenario makes the adapter's `write_call`), or `None` when its children cannot
    /// write.
    pub(crate) fn writing(&self, prompt: &str, file: &str) -> Option<StartRequestBuilder> {
        match self.model_free() {
            Some(free) => free
                .write(file, scenarios::WRITTEN)
                .map(|input| self.request(&input)),
            None => self
                .adapter
                .write_call(file, scenarios::WRITTEN)
                .map(|_| self.request(prompt)),
        }
    }

    /// Starts through the registry; a refusal fails the check.
    pub(crate) async fn start(&self, request: StartRequest) -> Result<Run, Failure> {
        let asked = request.required_capabilities();
        self.registry
            .start(&self.name, request)
            .await
            .map_err(|error| {
                Failure::new(format!(
                    "conformance {}: provider {:?} refused a request needing {asked:?} (it declares {:?}): {error}",
                    self.what, self.name, self.caps
                ))
            })
    }

    /// Starts and waits for the end.
    pub(crate) async fn run(&self, request: StartRequest) -> Result<Ended, Failure> {
        let run = self.start(request).await?;
        self.finish(run).await
    }

    /// Waits (bounded) for the run's end, then checks its envelope: exactly one `Started`
    /// (first, naming the run and the provider) and one `Finished` (last, with the outcome's
    /// status).
    pub(crate) async fn finish(&self, mut run: Run) -> Result<Ended, Failure> {
        let what = self.what;
        let Some(events) = run.take_events() else {
            return Err(Failure::new(format!(
                "conformance {what}: a fresh run's events were already taken"
            )));
        };
        let collected = tokio::spawn(events.collect::<Vec<_>>());
        let id = run.id();
        let description = run.description().to_owned();
        let Ok(outcome) = tokio::time::timeout(TIMEOUT, run.outcome()).await else {
            return Err(Failure::new(format!(
                "conformance {what}: the run of provider {:?} did not end within {TIMEOUT:?}",
                self.name
            )));
        };
        let events = match tokio::time::timeout(TIMEOUT, collected).await {
            Ok(Ok(events)) => events,
            Ok(Err(error)) => {
                return Err(Failure::new(format!(
                    "conformance {what}: collecting events failed: {error}"
                )));
            }
            Err(_) => {
                return Err(Failure::new(format!(
                    "conformance {what}: the event stream did not end within {TIMEOUT:?} after the outcome"
                )));
            }
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
        ensure!(
            events.first() == Some(&started)
                && events.last() == Some(&finished)
                && starts == 1
                && ends == 1,
            "conformance {what}: a run reports exactly one Started (first: {started:?}) and one \
             Finished (last: {finished:?}); got {starts} Started and {ends} Finished in {events:?}"
        );
        Ok(Ended { events, outcome })
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
    pub(crate) fn first_request_for(&self, marker: &str) -> Result<RecordedRequest, Failure> {
        let recorded = self.server.model_requests();
        let prompts: Vec<String> = recorded.iter().map(recorded::genuine_prompt).collect();
        ensure_eq!(
            self.model_free().is_some(),
            false,
            "conformance {}: the kit looked for a model request of a child that calls no model (a kit bug)",
            self.what
        );
        self.requests_for(marker).into_iter().next().ok_or_else(|| {
            Failure::new(format!(
                "conformance {}: no model request for {marker} was recorded; the prompts of the {} requests recorded: {prompts:?}",
                self.what,
                recorded.len()
            ))
        })
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

/// Removes a file a previous check left, so its existence afterwards is this run's doing.
pub(crate) fn fresh(path: &std::path::Path) -> Result<(), Failure> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(Failure::new(format!(
            "conformance: cannot remove {}: {error}",
            path.display()
        ))),
        _ => Ok(()),
    }
}
