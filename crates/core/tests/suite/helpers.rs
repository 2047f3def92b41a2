//! Test providers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use subagent_core::registry::RegistryObserver;
use subagent_core::{Capabilities, Outcome, Result, Run, StartRequest, SubagentProvider};

/// Counts its starts; completes at once with the prompt echoed.
pub(super) struct Counting {
    pub name: String,
    pub capabilities: Capabilities,
    pub starts: AtomicUsize,
}

impl Counting {
    pub(super) fn new(name: &str, capabilities: Capabilities) -> Arc<Self> {
        Arc::new(Self {
            name: name.to_owned(),
            capabilities,
            starts: AtomicUsize::new(0),
        })
    }

    pub(super) fn starts(&self) -> usize {
        self.starts.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl SubagentProvider for Counting {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    async fn start(&self, request: StartRequest) -> Result<Run> {
        self.starts.fetch_add(1, Ordering::SeqCst);
        let (sender, run) = Run::channel(&self.name, &request);
        sender.finish(Outcome::completed(request.prompt_text()));
        Ok(run)
    }
}

/// Records every run the registry reports.
#[derive(Default)]
pub(super) struct Observer {
    pub seen: std::sync::Mutex<Vec<String>>,
}

impl RegistryObserver for Observer {
    fn started(&self, provider: &str, run: &Run) {
        self.seen
            .lock()
            .unwrap()
            .push(format!("{provider}:{}", run.description()));
    }
}

/// An isolator that leaves the child where it is (for gating tests, which need one installed
/// for a request asking for isolation to reach the provider).
pub(super) struct InPlace;

#[async_trait]
impl subagent_core::isolation::Isolator for InPlace {
    async fn prepare(
        &self,
        _: subagent_core::Isolation,
        _: &mut StartRequest,
    ) -> Result<Box<dyn subagent_core::isolation::Isolated>> {
        Ok(Box::new(InPlace))
    }
}

#[async_trait]
impl subagent_core::isolation::Isolated for InPlace {
    fn attach(self: Box<Self>, run: Run) -> Run {
        run
    }

    async fn abandon(self: Box<Self>) {}
}
