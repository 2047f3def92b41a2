//! The registry's gates, in order, and that a refused start starts nothing.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_core::registry::Registry;
use subagent_core::{
    Capabilities, Capability, Error, ErrorCode, Isolation, SessionRef, StartRequest,
    StartRequestBuilder, ToolFilter,
};

use super::helpers::{Counting, InPlace, Observer};

fn request() -> StartRequestBuilder {
    StartRequest::builder("do the thing").cwd("/tmp")
}

/// Sets the request field gated by `capability`.
fn needing(builder: StartRequestBuilder, capability: Capability) -> StartRequestBuilder {
    match capability {
        Capability::OutputSchema => builder.output_schema(json!({"type": "object"})),
        Capability::DepthLimit => builder.max_depth(2),
        Capability::ToolFilter => builder.tool_filter(ToolFilter::deny(["bash"])),
        Capability::Persona => builder.persona("terse"),
        Capability::ModelOverride => builder.model("m"),
        Capability::MaxTurns => builder.max_turns(3),
        Capability::Resume => builder.resume(SessionRef {
            provider: "p".into(),
            id: "s".into(),
            cwd: None,
            transcript: None,
        }),
        Capability::Isolation => builder.isolation(Isolation::Worktree),
        Capability::Effort => builder.effort(subagent_core::Effort::High),
        Capability::PermissionRules => builder.permission_rules(subagent_core::PermissionRules {
            deny: vec!["Bash(rm -rf:*)".into()],
            ..subagent_core::PermissionRules::default()
        }),
        Capability::McpServers => builder.mcp_servers(vec![subagent_core::mcp::McpServerSpec {
            name: "kit".into(),
            reach: subagent_core::mcp::McpReach::Stdio {
                command: "kit-server".into(),
                args: Vec::new(),
                env: Default::default(),
            },
            scope: subagent_core::mcp::McpScope::Agent,
            timeout_ms: None,
        }]),
        other => panic!("no field for {other}"),
    }
}

fn registry_with(provider: Arc<Counting>) -> (Registry, Arc<Observer>) {
    let mut registry = Registry::new();
    let observer = Arc::new(Observer::default());
    registry.add_observer(observer.clone());
    registry.set_isolator(Arc::new(InPlace));
    registry.register(provider).unwrap();
    (registry, observer)
}

#[tokio::test]
async fn each_capability_alone_is_refused_by_a_provider_without_it() {
    for capability in Capability::ALL {
        let provider = Counting::new("bare", Capabilities::NONE);
        let (registry, observer) = registry_with(provider.clone());
        let err = registry
            .start("bare", needing(request(), capability).build())
            .await
            .unwrap_err();
        assert_eq!(
            err,
            Error::UnsupportedCapability {
                provider: "bare".into(),
                missing: vec![capability],
                because: None,
            }
        );
        assert_eq!(err.code(), ErrorCode::UnsupportedCapability);
        assert_eq!(
            err.to_string(),
            format!("subagent provider \"bare\" does not support the capability: \"{capability}\"")
        );
        assert_eq!(provider.starts(), 0, "{capability}: provider started");
        assert!(
            observer.seen.lock().unwrap().is_empty(),
            "{capability}: event emitted"
        );

        // The same request passes once the capability is declared.
        let able = Counting::new("able", Capabilities::NONE.with(capability, true));
        let (registry, observer) = registry_with(able.clone());
        let run = registry
            .start("able", needing(request(), capability).build())
            .await
            .unwrap();
        assert!(run.outcome().await.is_completed());
        assert_eq!(able.starts(), 1);
        assert_eq!(observer.seen.lock().unwrap().len(), 1);
    }
}

#[tokio::test]
async fn all_capabilities_together_are_all_named() {
    let provider = Counting::new("bare", Capabilities::NONE);
    let (registry, observer) = registry_with(provider.clone());
    let builder = Capability::ALL.into_iter().fold(request(), needing);
    let err = registry.start("bare", builder.build()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "subagent provider \"bare\" does not support the capabilities: \"output_schema\", \
         \"depth_limit\", \"tool_filter\", \"persona\", \"model_override\", \"max_turns\", \"resume\", \
         \"isolation\", \"effort\", \"permission_rules\", \"mcp_servers\""
    );
    assert_eq!(provider.starts(), 0);
    assert!(observer.seen.lock().unwrap().is_empty());

    // Only the missing ones are named.
    let partial = Counting::new(
        "partial",
        Capabilities::NONE
            .with(Capability::Persona, true)
            .with(Capability::ModelOverride, true),
    );
    let (registry, _) = registry_with(partial.clone());
    let builder = Capability::ALL.into_iter().fold(request(), needing);
    match registry
        .start("partial", builder.build())
        .await
        .unwrap_err()
    {
        Error::UnsupportedCapability { missing, .. } => assert_eq!(
            missing,
            vec![
                Capability::OutputSchema,
                Capability::DepthLimit,
                Capability::ToolFilter,
                Capability::MaxTurns,
                Capability::Resume,
                Capability::Isolation,
                Capability::Effort,
                Capability::PermissionRules,
                Capability::McpServers
            ]
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(partial.starts(), 0);
}

#[tokio::test]
async fn unknown_provider_lists_the_known_names_in_order() {
    let registry = Registry::new();
    for name in ["spawn", "fork", "claude-code"] {
        registry
            .register(Counting::new(name, Capabilities::ALL))
            .unwrap();
    }
    let err = registry
        .start("codex", request().build())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnknownProvider);
    assert_eq!(
        err.to_string(),
        "no subagent provider named \"codex\" (known: \"spawn\", \"fork\", \"claude-code\")"
    );
    let empty = Registry::new();
    assert_eq!(
        empty
            .start("x", request().build())
            .await
            .unwrap_err()
            .to_string(),
        "no subagent provider named \"x\" (known: none)"
    );
}

#[tokio::test]
async fn unknown_provider_is_checked_before_capabilities() {
    let registry = Registry::new();
    let err = registry
        .start("nope", request().persona("p").build())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnknownProvider);
}

#[test]
fn duplicate_names_are_refused_and_order_is_kept() {
    let registry = Registry::new();
    registry
        .register(Counting::new("a", Capabilities::NONE))
        .unwrap();
    registry
        .register(Counting::new("b", Capabilities::NONE))
        .unwrap();
    let err = registry
        .register(Counting::new("a", Capabilities::ALL))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::DuplicateProvider);
    assert_eq!(
        err.to_string(),
        "a subagent provider named \"a\" is already registered"
    );
    assert_eq!(registry.names(), ["a", "b"]);
    // The first registration stays.
    assert_eq!(
        registry.get("a").unwrap().capabilities(),
        Capabilities::NONE
    );
}

#[tokio::test]
async fn depth_is_refused_exactly_when_parent_depth_plus_one_exceeds_max_depth() {
    for max_depth in 0..4u32 {
        for parent_depth in 0..6u32 {
            let provider = Counting::new("p", Capabilities::ALL);
            let (registry, observer) = registry_with(provider.clone());
            let result = registry
                .start(
                    "p",
                    request().depth(parent_depth).max_depth(max_depth).build(),
                )
                .await;
            if parent_depth + 1 > max_depth {
                let err = result.unwrap_err();
                assert_eq!(
                    err,
                    Error::DepthExceeded {
                        child_depth: parent_depth + 1,
                        max_depth
                    }
                );
                assert_eq!(
                    err.to_string(),
                    format!(
                        "subagent depth {} exceeds max_depth {max_depth}",
                        parent_depth + 1
                    )
                );
                assert_eq!(provider.starts(), 0);
                assert!(observer.seen.lock().unwrap().is_empty());
            } else {
                assert!(result.is_ok(), "depth {parent_depth} cap {max_depth}");
                assert_eq!(provider.starts(), 1);
            }
        }
    }
}

#[tokio::test]
async fn the_registry_cap_applies_without_a_request_cap_and_bounds_it() {
    // A provider without depth support still cannot run deeper than the registry allows.
    let provider = Counting::new("p", Capabilities::NONE);
    let registry = Registry::with_max_depth(2);
    registry.register(provider.clone()).unwrap();
    assert!(
        registry
            .start("p", request().depth(1).build())
            .await
            .is_ok()
    );
    assert_eq!(
        registry
            .start("p", request().depth(2).build())
            .await
            .unwrap_err(),
        Error::DepthExceeded {
            child_depth: 3,
            max_depth: 2
        }
    );
    // A request cap cannot raise the registry's.
    let able = Counting::new("able", Capabilities::ALL);
    registry.register(able.clone()).unwrap();
    assert_eq!(
        registry
            .start("able", request().depth(2).max_depth(10).build())
            .await
            .unwrap_err()
            .code(),
        ErrorCode::DepthExceeded
    );
    assert_eq!(able.starts(), 0);
}

#[tokio::test]
async fn capabilities_are_checked_before_depth_and_depth_before_schema() {
    let bare = Counting::new("bare", Capabilities::NONE);
    let (registry, _) = registry_with(bare.clone());
    let err = registry
        .start("bare", request().depth(9).output_schema(json!([])).build())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnsupportedCapability);

    let able = Counting::new("able", Capabilities::ALL);
    let (registry, _) = registry_with(able.clone());
    let err = registry
        .start("able", request().depth(9).output_schema(json!([])).build())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::DepthExceeded);
}

#[tokio::test]
async fn non_object_schemas_are_refused() {
    let provider = Counting::new("p", Capabilities::ALL);
    let (registry, observer) = registry_with(provider.clone());
    for (schema, message) in [
        (
            json!({"type": "array", "items": {}}),
            "invalid arguments: output_schema must have \"type\": \"object\" at its root, got \"type\": \"array\"",
        ),
        (
            json!({"properties": {}}),
            "invalid arguments: output_schema must have \"type\": \"object\" at its root (no \"type\" given)",
        ),
        (
            json!("object"),
            "invalid arguments: output_schema must be a JSON Schema object with \"type\": \"object\", got a string",
        ),
        (
            json!(true),
            "invalid arguments: output_schema must be a JSON Schema object with \"type\": \"object\", got a boolean",
        ),
    ] {
        let err = registry
            .start("p", request().output_schema(schema).build())
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArguments);
        assert_eq!(err.to_string(), message);
    }
    assert_eq!(provider.starts(), 0);
    assert!(observer.seen.lock().unwrap().is_empty());
    let ok = registry
        .start(
            "p",
            request()
                .output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
                .build(),
        )
        .await;
    assert!(ok.is_ok());
}

#[tokio::test]
async fn removal_blocks_new_starts_only() {
    let provider = Counting::new("p", Capabilities::NONE);
    let registry = Registry::new();
    registry.register(provider.clone()).unwrap();
    let running = registry.start("p", request().build()).await.unwrap();
    assert!(registry.remove("p").is_some());
    assert_eq!(
        registry
            .start("p", request().build())
            .await
            .unwrap_err()
            .code(),
        ErrorCode::UnknownProvider
    );
    // The run started before removal still delivers its outcome.
    assert_eq!(running.outcome().await.text, "do the thing");
    assert!(registry.remove("p").is_none());
}

#[tokio::test]
async fn default_description_is_filled_in_and_a_cancelled_start_is_refused() {
    let provider = Counting::new("p", Capabilities::NONE);
    let (registry, observer) = registry_with(provider.clone());
    let run = registry
        .start("p", StartRequest::new("x".repeat(100), "/tmp"))
        .await
        .unwrap();
    assert_eq!(run.description(), "x".repeat(80));
    assert_eq!(
        observer.seen.lock().unwrap()[0],
        format!("p:{}", "x".repeat(80))
    );

    let cancelled = request().build();
    cancelled.cancel.cancel();
    assert_eq!(
        registry.start("p", cancelled).await.unwrap_err(),
        Error::Cancelled
    );
    assert_eq!(provider.starts(), 1);
}
