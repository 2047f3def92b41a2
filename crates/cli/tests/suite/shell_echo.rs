//! The newcomer's provider (issue 27, point 10), written from `docs/writing-a-provider.md`
//! alone: `shell-echo` runs its prompt as a shell script through the process owner and answers
//! with what the script prints; it calls no model. The conformance kit passes it with no
//! workaround (its adapter says how a script answers, fails, hangs and writes: `ModelFree`);
//! the same provider with a false capability claim fails the kit in one line; and a binary of
//! one's own that registers it runs `--provider shell-echo` under the built-in preset
//! (`embedding.rs`).

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use subagent_conformance::{Adapter, Check, ModelFree, Verdict, check_blocking};
use subagent_core::{
    BuildContext, Capabilities, Capability, Error, Outcome, PermissionMode, ProviderFactory,
    Result, Run, StartRequest, SubagentProvider,
};
use subagent_process::{Blame, ProcessSpec, Secrets, StopCause};
use subagent_test_support::FakeServer;

/// The kind name in presets.
pub(super) const KIND: &str = "shell-echo";

/// The most of the script's stdout, and of its stderr, that is kept.
const KEPT_BYTES: usize = 64 * 1024;

/// The `config:` block of a `shell-echo` row; `{}` is valid (a default row works).
#[derive(Clone, Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ShellEchoConfig {
    /// The shell that runs the prompt (`SHELL -c PROMPT`).
    #[serde(default = "default_shell")]
    pub shell: String,
}

fn default_shell() -> String {
    "sh".to_owned()
}

/// Runs the prompt as a shell script: what it prints is the answer, a non-zero exit a failure.
pub(super) struct ShellEcho {
    name: String,
    config: ShellEchoConfig,
    secrets: Secrets,
    /// What it declares (honestly: nothing).
    claims: Capabilities,
}

#[async_trait]
impl SubagentProvider for ShellEcho {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        self.claims
    }

    async fn start(&self, request: StartRequest) -> Result<Run> {
        // A shell cannot be kept from writing: refuse a ceiling it cannot keep.
        if let Some(mode) = request.permission_ceiling
            && mode != PermissionMode::Bypass
        {
            return Err(Error::invalid(format!(
                "shell-echo provider {}: a shell cannot be held to a {mode} permission ceiling",
                self.name
            )));
        }
        let (sender, run) = Run::channel(&self.name, &request);
        let child = ProcessSpec::new(&self.config.shell, &request.parent.cwd)
            .args(["-c".to_owned(), request.prompt_text()])
            .withhold(self.secrets.clone())
            .capture_output(KEPT_BYTES)
            .cancel(sender.cancel_token().clone())
            .spawn()
            .map_err(|error| match error.blame() {
                Blame::Request => Error::invalid(error.to_string()),
                _ => Error::spawn_failed(
                    error.start_failure(&self.config.shell, "install it, or name another `shell`"),
                ),
            })?;
        let secrets = self.secrets.clone();
        tokio::spawn(async move {
            let text = |bytes: &[u8]| {
                let text = String::from_utf8_lossy(bytes);
                secrets.redact(&text).trim_end_matches('\n').to_owned()
            };
            let outcome = match child.wait_with_output().await {
                Ok(done) if done.exit.stopped == Some(StopCause::Cancelled) => Outcome::cancelled(),
                Ok(done) if done.exit.success() => Outcome::completed(text(&done.stdout)),
                Ok(done) => Outcome::failed(format!(
                    "the script exited with {:?}: {}",
                    done.exit.code(),
                    text(&done.stderr)
                )),
                Err(error) => Outcome::failed(format!("the shell: {error}")),
            };
            sender.finish(outcome);
        });
        Ok(run)
    }
}

/// Builds [`ShellEcho`]s from rows of `kind: shell-echo`; `claims` is what they declare.
pub(super) struct ShellEchoFactory {
    pub claims: Capabilities,
}

impl Default for ShellEchoFactory {
    fn default() -> Self {
        Self::new()
    }
}

impl ShellEchoFactory {
    /// The honest factory: it declares nothing.
    pub(super) fn new() -> Self {
        Self {
            claims: Capabilities::NONE,
        }
    }

    fn provider(&self, name: &str, config: ShellEchoConfig, secrets: Secrets) -> ShellEcho {
        ShellEcho {
            name: name.to_owned(),
            config,
            secrets,
            claims: self.claims,
        }
    }
}

impl ProviderFactory for ShellEchoFactory {
    fn kind(&self) -> &str {
        KIND
    }

    fn summary(&self) -> &str {
        "runs the prompt as a shell script, no model"
    }

    fn capabilities(&self) -> Capabilities {
        self.claims
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::schema_for!(ShellEchoConfig)
    }

    fn build(
        &self,
        name: &str,
        config: &serde_json::Value,
        context: &BuildContext,
    ) -> Result<Arc<dyn SubagentProvider>> {
        let config: ShellEchoConfig = BuildContext::parse_config(KIND, name, config)?;
        let secrets = context.secrets.clone();
        Ok(Arc::new(self.provider(name, config, secrets)))
    }
}

/// The kit's adapter: the provider as a preset row would build it, driven by scripts.
struct ShellEchoAdapter {
    dir: tempfile::TempDir,
    claims: Capabilities,
}

impl ShellEchoAdapter {
    fn new(claims: Capabilities) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            claims,
        }
    }
}

impl Adapter for ShellEchoAdapter {
    fn factory(&self) -> Arc<dyn ProviderFactory> {
        Arc::new(ShellEchoFactory {
            claims: self.claims,
        })
    }

    fn provider(&self, _server: &FakeServer) -> Arc<dyn SubagentProvider> {
        self.factory()
            .build(KIND, &serde_json::json!({}), &BuildContext::default())
            .unwrap()
    }

    fn workdir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    fn model_free(&self) -> Option<&dyn ModelFree> {
        Some(self)
    }
}

/// `text` as one shell word.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

impl ModelFree for ShellEchoAdapter {
    fn answer(&self, text: &str) -> String {
        format!("printf '%s' {}", quoted(text))
    }

    fn fail(&self, message: &str) -> String {
        format!("echo {} >&2; exit 7", quoted(message))
    }

    fn hang(&self) -> String {
        "sleep 1000".to_owned()
    }

    fn write(&self, file: &str, text: &str) -> Option<String> {
        Some(format!("printf '%s' {} > {}", quoted(text), quoted(file)))
    }
}

/// The kit as the guide has it: one `#[test]` per check, no workaround.
mod kit {
    use super::*;

    subagent_conformance::suite!(ShellEchoAdapter::new(Capabilities::NONE));
}

#[test]
fn the_newcomers_provider_passes_every_check_without_a_model() {
    let verdicts: Vec<(Check, Verdict)> = Check::ALL
        .into_iter()
        .map(|check| {
            let verdict = check_blocking(check, || ShellEchoAdapter::new(Capabilities::NONE));
            (check, verdict.unwrap_or_else(|failure| panic!("{failure}")))
        })
        .collect();
    let generic = [
        Check::Capabilities,
        Check::Lifecycle,
        Check::Cancel,
        Check::ChildFailure,
        Check::PermissionCeiling,
        Check::AllDeclared,
    ];
    let expected: Vec<(Check, Verdict)> = Check::ALL
        .into_iter()
        .map(|check| {
            let verdict = if generic.contains(&check) {
                Verdict::Passed
            } else {
                Verdict::NotDeclared
            };
            (check, verdict)
        })
        .collect();
    assert_eq!(verdicts, expected);
}

#[test]
fn a_false_capability_claim_fails_the_kit_in_one_line_naming_it() {
    for (claimed, checks) in [
        (
            Capability::OutputSchema,
            [Check::Capabilities, Check::AllDeclared, Check::OutputSchema],
        ),
        (
            Capability::ToolFilter,
            [Check::Capabilities, Check::AllDeclared, Check::ToolFilter],
        ),
    ] {
        let claims = Capabilities::NONE.with(claimed, true);
        for check in checks {
            let failure = check_blocking(check, || ShellEchoAdapter::new(claims))
                .err()
                .unwrap_or_else(|| panic!("{check:?} passed a false claim of {claimed}"));
            let verdict = failure.message();
            assert!(
                verdict.starts_with("conformance ")
                    && verdict.contains(&claimed.to_string())
                    && !verdict.contains('\n'),
                "{check:?}: {verdict}"
            );
        }
    }
}

#[test]
fn what_the_script_prints_is_redacted_of_the_configured_secrets() {
    // Through the factory, as a preset row builds it, with the secrets the CLI configures.
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let outcome = runtime.block_on(async {
        let context = BuildContext {
            secrets: Secrets::from_names(["SHELL_ECHO_TEST_TOKEN"], |_| {
                Some("s3cret-value-of-the-test".to_owned())
            }),
            ..BuildContext::default()
        };
        let provider = ShellEchoFactory::new()
            .build(KIND, &serde_json::json!({}), &context)
            .unwrap();
        let request = StartRequest::builder("echo the key is s3cret-value-of-the-test")
            .cwd(dir.path())
            .build();
        provider.start(request).await.unwrap().outcome().await
    });
    assert_eq!(
        (outcome.status, outcome.text.as_str()),
        (
            subagent_core::StopReason::Completed,
            "the key is [REDACTED:SHELL_ECHO_TEST_TOKEN]"
        ),
        "{outcome:?}"
    );
}
