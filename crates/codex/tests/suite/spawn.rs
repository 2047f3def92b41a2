//! Starting codex fails cleanly, before any child exists, when the CLI is missing.

use pretty_assertions::assert_eq;
use subagent_codex::{CodexConfig, CodexProvider};
use subagent_core::{ErrorCode, StartRequest, SubagentProvider};

async fn start_error(binary: &str) -> subagent_core::Error {
    let cwd = std::env::temp_dir();
    let provider = CodexProvider::new(
        "codex",
        CodexConfig {
            binary: binary.into(),
            ..CodexConfig::default()
        },
    )
    .unwrap();
    provider
        .start(StartRequest::new("say hi", cwd))
        .await
        .unwrap_err()
}

#[tokio::test]
async fn a_missing_binary_path_is_spawn_failed_naming_the_path_and_the_install() {
    let error = start_error("/nonexistent/bin/codex").await;
    assert_eq!(error.code(), ErrorCode::SpawnFailed);
    assert_eq!(
        error.to_string(),
        "could not start the subagent: the codex CLI was not found (tried /nonexistent/bin/codex); \
         install it with `npm install -g @openai/codex@0.171.0` (in a clone of subagents, \
         `cargo xtask install-clis` puts it in target/clis), or set `binary` in the provider's \
         config to its path"
    );
}

#[tokio::test]
async fn a_missing_binary_name_is_spawn_failed_listing_the_path_searched() {
    let error = start_error("codex-not-installed-anywhere").await;
    assert_eq!(error.code(), ErrorCode::SpawnFailed);
    let text = error.to_string();
    assert!(
        text.contains("tried `codex-not-installed-anywhere` on PATH "),
        "{text}"
    );
    assert!(text.contains("cargo xtask install-clis"), "{text}");
}

#[tokio::test]
async fn an_empty_prompt_and_an_empty_resume_id_are_refused() {
    let provider = CodexProvider::new("codex", CodexConfig::default()).unwrap();
    let cwd = std::env::temp_dir();
    let error = provider
        .start(StartRequest::new("  ", &cwd))
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArguments);
    let request = StartRequest::builder("hi")
        .cwd(&cwd)
        .resume(subagent_core::SessionRef {
            provider: "codex".into(),
            id: String::new(),
            cwd: None,
            transcript: None,
        })
        .build();
    let error = provider.start(request).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::NotResumable);
}
