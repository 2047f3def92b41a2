//! A provider whose children call no model, for the kit's own tests: its prompt is its script
//! (`answer TEXT`, `fail MESSAGE`, `hang`, `write FILE TEXT`), run in-process; it declares
//! `output_schema` and `depth_limit`. And the false claims the kit must catch.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use subagent_conformance::{Adapter, ModelFree};
use subagent_core::{
    Capabilities, Capability, Outcome, PermissionMode, ProviderFactory, Result, Run, StartRequest,
    SubagentProvider,
};
use subagent_test_support::FakeServer;
use tempfile::TempDir;

use super::support::Factory;

/// A claim the provider makes and does not keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Claim {
    /// Declares `persona`, which only a model request could show.
    Persona,
    /// Declares `output_schema` and answers with text only.
    IgnoredSchema,
}

fn capabilities(claim: Option<Claim>) -> Capabilities {
    Capabilities::NONE
        .with(Capability::OutputSchema, true)
        .with(Capability::DepthLimit, true)
        .with(Capability::Persona, claim == Some(Claim::Persona))
}

struct Script {
    claim: Option<Claim>,
}

/// What a run of the script does.
fn outcome(request: &StartRequest, script: &str, claim: Option<Claim>) -> Outcome {
    let (verb, rest) = script.split_once(' ').unwrap_or((script, ""));
    match verb {
        "answer" => match &request.output_schema {
            Some(schema) if claim != Some(Claim::IgnoredSchema) => {
                let value: Option<Value> = serde_json::from_str(rest).ok();
                let valid = value.as_ref().is_some_and(|value| {
                    jsonschema::validator_for(schema).is_ok_and(|v| v.is_valid(value))
                });
                match value {
                    Some(value) if valid => {
                        let mut outcome = Outcome::completed(rest);
                        outcome.structured = Some(value);
                        outcome
                    }
                    _ => Outcome::failed("the answer does not match the output schema"),
                }
            }
            _ => Outcome::completed(rest),
        },
        "fail" => Outcome::failed(format!("the script failed: {rest}")),
        "write" => {
            if request.permission_ceiling == Some(PermissionMode::Plan) {
                return Outcome::failed("not written: a plan ceiling");
            }
            let (file, text) = rest.split_once(' ').unwrap_or((rest, ""));
            match std::fs::write(request.parent.cwd.join(file), text) {
                Ok(()) => Outcome::completed("written"),
                Err(error) => Outcome::failed(format!("cannot write {file}: {error}")),
            }
        }
        other => Outcome::failed(format!("unknown script {other:?}")),
    }
}

#[async_trait]
impl SubagentProvider for Script {
    fn name(&self) -> &str {
        "script"
    }

    fn capabilities(&self) -> Capabilities {
        capabilities(self.claim)
    }

    async fn start(&self, request: StartRequest) -> Result<Run> {
        let (sender, run) = Run::channel("script", &request);
        let script = request.prompt_text();
        let claim = self.claim;
        tokio::spawn(async move {
            let outcome = if script == "hang" {
                sender.cancel_token().cancelled().await;
                Outcome::cancelled()
            } else {
                outcome(&request, &script, claim)
            };
            sender.finish(outcome);
        });
        Ok(run)
    }
}

/// The adapter of [`Script`], with or without a false claim.
pub(super) struct ScriptAdapter {
    dir: TempDir,
    claim: Option<Claim>,
}

impl ScriptAdapter {
    pub(super) fn new(claim: Option<Claim>) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap_or_else(|e| panic!("a temp dir: {e}")),
            claim,
        }
    }
}

impl Adapter for ScriptAdapter {
    fn factory(&self) -> Arc<dyn ProviderFactory> {
        Arc::new(Factory {
            kind: "script",
            summary: "runs its prompt as a script, no model",
            capabilities: capabilities(self.claim),
            built: Some(Arc::new(Script { claim: self.claim })),
        })
    }

    fn provider(&self, _server: &FakeServer) -> Arc<dyn SubagentProvider> {
        Arc::new(Script { claim: self.claim })
    }

    fn workdir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    fn model_free(&self) -> Option<&dyn ModelFree> {
        Some(self)
    }
}

impl ModelFree for ScriptAdapter {
    fn answer(&self, text: &str) -> String {
        format!("answer {text}")
    }

    fn fail(&self, message: &str) -> String {
        format!("fail {message}")
    }

    fn hang(&self) -> String {
        "hang".to_owned()
    }

    fn write(&self, file: &str, text: &str) -> Option<String> {
        Some(format!("write {file} {text}"))
    }
}

/// The suite as a provider's tests write it. Its adapter is the sound script, or (in the child
/// process of `verdicts::a_failing_suite_test_prints_one_line_and_no_backtrace`, which sets
/// [`CLAIM`]) the one claiming `persona`.
pub(super) mod as_written {
    use super::{Claim, ScriptAdapter};

    /// Set: the suite's adapter makes a false claim.
    pub(crate) const CLAIM: &str = "SUBAGENT_KIT_TEST_FALSE_CLAIM";

    fn adapter() -> ScriptAdapter {
        let claim = std::env::var_os(CLAIM).map(|_| Claim::Persona);
        ScriptAdapter::new(claim)
    }

    subagent_conformance::suite!(adapter());
}
