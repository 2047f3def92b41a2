//! What needs no CLI: the factory, and the refusals before anything starts.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_claude_code::{
    CAPABILITIES, ClaudeCodeConfig, ClaudeCodeFactory, ClaudeCodeProvider, ClaudePermissionMode,
    KIND,
};
use subagent_core::{BuildContext, ErrorCode, ProviderFactory, StartRequest, SubagentProvider};

#[test]
fn the_factory_builds_from_a_preset_config() {
    let factory = ClaudeCodeFactory;
    assert_eq!(factory.kind(), KIND);
    assert_eq!(factory.capabilities(), CAPABILITIES);
    let schema = serde_json::to_value(factory.config_schema()).unwrap();
    assert!(
        schema["properties"]["permission_mode"].is_object(),
        "{schema}"
    );
    let context = BuildContext {
        base_dir: "/presets".into(),
        ..BuildContext::default()
    };
    let provider = factory
        .build(
            "cc",
            &json!({"binary": "bin/claude", "permission_mode": "acceptEdits"}),
            &context,
        )
        .unwrap();
    assert_eq!(provider.name(), "cc");
    assert_eq!(provider.capabilities(), CAPABILITIES);

    let err = factory
        .build("cc", &json!({"permision_mode": "plan"}), &context)
        .err()
        .unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidArguments);
    assert!(
        factory
            .build("cc", &serde_json::Value::Null, &context)
            .is_ok()
    );
}

/// What starting a run of a provider of `config` failed with: a `SPAWN_FAILED`.
async fn spawn_failure(config: ClaudeCodeConfig) -> subagent_core::Error {
    let provider = ClaudeCodeProvider::new("cc", config).unwrap();
    let err = provider
        .start(StartRequest::new("hi", std::env::temp_dir()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::SpawnFailed);
    err
}

#[tokio::test]
async fn a_missing_cli_is_spawn_failed_naming_the_path_and_the_install() {
    let err = spawn_failure(ClaudeCodeConfig {
        binary: "/nonexistent/dir/claude".into(),
        ..ClaudeCodeConfig::default()
    })
    .await;
    let text = err.to_string();
    assert!(text.contains("/nonexistent/dir/claude"), "{text}");
    assert!(text.contains("cargo xtask install-clis"), "{text}");
    assert!(
        text.contains("npm install -g @anthropic-ai/claude-code@2.1.197"),
        "{text}"
    );

    let err = spawn_failure(ClaudeCodeConfig {
        binary: "claude-not-installed-x".into(),
        env: [("PATH".to_owned(), "/nonexistent/bin".to_owned())].into(),
        ..ClaudeCodeConfig::default()
    })
    .await;
    assert!(
        err.to_string().contains("on PATH /nonexistent/bin"),
        "{err}"
    );
}

#[tokio::test]
async fn bypass_permissions_as_root_asks_for_is_sandbox() {
    let is_root =
        std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    if !is_root.unwrap_or(false) || std::env::var("IS_SANDBOX").as_deref() == Ok("1") {
        return; // the refusal only applies to root outside a declared sandbox
    }
    let err = spawn_failure(ClaudeCodeConfig {
        binary: "/nonexistent/claude".into(),
        permission_mode: ClaudePermissionMode::BypassPermissions,
        ..ClaudeCodeConfig::default()
    })
    .await;
    assert!(err.to_string().contains("IS_SANDBOX=1"), "{err}");
}

#[tokio::test]
async fn a_relative_cwd_is_refused() {
    let provider = ClaudeCodeProvider::new("cc", ClaudeCodeConfig::default()).unwrap();
    let err = provider
        .start(StartRequest::new("hi", "relative/dir"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArguments, "{err}");
}
