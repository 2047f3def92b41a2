//! A small provider for the kit's own tests: one question to a model on the fake server, no
//! tools, declaring `persona`, `model_override` and `effort`; and the defects the kit must catch.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use subagent_conformance::{Adapter, ToolCall};
use subagent_core::{
    CancellationToken, Capabilities, Capability, Outcome, ProviderFactory, Result, Run, RunEvent,
    StartRequest, SubagentProvider,
};
use subagent_model::{Model, ModelKind, ModelRequest};
use subagent_session::Message;
use subagent_test_support::FakeServer;
use tempfile::TempDir;

use super::support::Factory;

/// Something a provider gets wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Defect {
    /// Declares `persona` but never sends it.
    DropsPersona,
    /// Declares `model_override` but asks its own model.
    IgnoresModel,
    /// Declares `effort` but never sends it.
    DropsEffort,
    /// Emits a second `Started`.
    StartsTwice,
    /// Reports a model error as a completed run.
    HidesFailures,
    /// Its factory declares `resume`, which the provider does not.
    FactoryOverclaims,
    /// Factory and provider declare `output_schema`, which the provider ignores.
    ClaimsOutputSchema,
    /// Factory and provider declare `tool_filter`, which the provider ignores.
    ClaimsToolFilter,
}

fn capabilities(defect: Option<Defect>) -> Capabilities {
    Capabilities::NONE
        .with(Capability::Persona, true)
        .with(Capability::ModelOverride, true)
        .with(Capability::Effort, true)
        .with(
            Capability::OutputSchema,
            defect == Some(Defect::ClaimsOutputSchema),
        )
        .with(
            Capability::ToolFilter,
            defect == Some(Defect::ClaimsToolFilter),
        )
}

struct Probe {
    model: Arc<dyn Model>,
    defect: Option<Defect>,
}

#[async_trait]
impl SubagentProvider for Probe {
    fn name(&self) -> &str {
        "probe"
    }

    fn capabilities(&self) -> Capabilities {
        capabilities(self.defect)
    }

    async fn start(&self, request: StartRequest) -> Result<Run> {
        let model_id = match (&request.model, self.defect) {
            (Some(model), d) if d != Some(Defect::IgnoresModel) => model.clone(),
            _ => "fake-model".to_owned(),
        };
        let mut question = ModelRequest::new(model_id, vec![Message::user(request.prompt_text())]);
        if self.defect != Some(Defect::DropsPersona) {
            question.system = request.persona.as_deref().map(Arc::from);
        }
        if self.defect != Some(Defect::DropsEffort) {
            question.effort = request.effort;
        }
        let (sender, run) = Run::channel("probe", &request);
        if self.defect == Some(Defect::StartsTwice) {
            sender.emit(RunEvent::Started {
                run_id: run.id(),
                provider: "probe".to_owned(),
                description: run.description().to_owned(),
            });
        }
        let model = Arc::clone(&self.model);
        let defect = self.defect;
        tokio::spawn(async move {
            let cancel: CancellationToken = sender.cancel_token().clone();
            let outcome = match subagent_model::complete(&*model, question, cancel.clone()).await {
                Ok(answer) => Outcome::completed(answer.message.text()),
                Err(_) if cancel.is_cancelled() => Outcome::cancelled(),
                Err(_) if defect == Some(Defect::HidesFailures) => Outcome::completed(""),
                Err(error) => Outcome::failed(error.to_string()),
            };
            sender.finish(outcome);
        });
        Ok(run)
    }
}

/// The adapter of [`Probe`], with or without a defect.
pub(super) struct ProbeAdapter {
    dir: TempDir,
    defect: Option<Defect>,
}

impl ProbeAdapter {
    pub(super) fn new(defect: Option<Defect>) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap_or_else(|e| panic!("a temp dir: {e}")),
            defect,
        }
    }
}

impl Adapter for ProbeAdapter {
    fn factory(&self) -> Arc<dyn ProviderFactory> {
        Arc::new(Factory {
            kind: "probe",
            summary: "the kit's test provider",
            capabilities: capabilities(self.defect).with(
                Capability::Resume,
                self.defect == Some(Defect::FactoryOverclaims),
            ),
            built: None,
        })
    }

    fn provider(&self, server: &FakeServer) -> Arc<dyn SubagentProvider> {
        let model = server.model(ModelKind::Anthropic);
        Arc::new(Probe {
            model,
            defect: self.defect,
        })
    }

    fn workdir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    fn write_call(&self, _file: &str, _text: &str) -> Option<ToolCall> {
        None
    }
}
