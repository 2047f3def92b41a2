//! Loading good presets, `${VAR}`, building and listing.

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_core::{Capabilities, ErrorCode, Extensions, ToolFilter};
use subagent_model::ModelAliases;
use subagent_preset::{
    Background, Error, ModelKind, ModelSection, Position, Preset, ProviderListing, ProviderRow,
    ToolRow, preset_schema_for,
};

use super::support::{env, factories, no_env};

const FULL: &str = "\
version: 1
max_depth: 2
max_tool_result_bytes: 4000
model:
  kind: openai-chat
  name: ${MODEL:-qwen}
  base_url: http://${HOST}:11434
  timeouts: {connect_ms: 500}
  max_answer_bytes: 65536
  reasoning_effort: true
model_aliases: {fast: '${FAST:-qwen-small}', sonnet: qwen-large}
agents: [agents, ../shared/agents]
providers:
  - name: spawn
    kind: spawn
    config: {max_turns: 4}
  - name: cc
    kind: claude-code
    disabled: true
    config:
      env: {PRICE: \"$$5 and $${LITERAL}\"}
  - name: codex
    kind: codex
    config:
tools:
  - provider: spawn
    max_depth: 1
    background: always
    tool_filter: {allow: [read_*], deny: [bash]}
    persona: careful
  - name: ask_codex
    provider: codex
    description: Codex does it.
    foreground_timeout_ms: 30000
";

fn load(text: &str, vars: &[(&str, &str)]) -> Preset {
    Preset::parse(text, "conf/p.yaml", &factories(), &env(vars)).unwrap()
}

#[test]
fn a_full_preset_loads_into_plain_values() {
    let preset = load(FULL, &[("HOST", "gpu-box")]);
    let expected = Preset {
        settings: None,
        mcp_servers: None,
        path: "conf/p.yaml".into(),
        base_dir: "conf".into(),
        version: 1,
        max_depth: 2,
        max_tool_result_bytes: Some(4000),
        model: Some(ModelSection {
            kind: ModelKind::OpenaiChat,
            name: "qwen".into(),
            base_url: Some("http://gpu-box:11434".into()),
            api_key_env: None,
            scenario: None,
            timeouts: Some(subagent_preset::ModelTimeouts {
                connect_ms: Some(500),
                ..Default::default()
            }),
            retry: None,
            max_answer_bytes: Some(65536),
            reasoning_effort: true,
            price: None,
        }),
        model_aliases: [("fast", "qwen-small"), ("sonnet", "qwen-large")]
            .into_iter()
            .map(|(alias, id)| (alias.to_owned(), id.to_owned()))
            .collect(),
        builtin_models: Default::default(),
        agents: vec![
            PathBuf::from("conf/agents"),
            PathBuf::from("conf/../shared/agents"),
        ],
        providers: vec![
            ProviderRow {
                name: "spawn".into(),
                kind: "spawn".into(),
                disabled: false,
                config: json!({"max_turns": 4}),
                location: Position::new(14, 5),
            },
            ProviderRow {
                name: "cc".into(),
                kind: "claude-code".into(),
                disabled: true,
                config: json!({"env": {"PRICE": "$$5 and ${LITERAL}"}}),
                location: Position::new(17, 5),
            },
            ProviderRow {
                name: "codex".into(),
                kind: "codex".into(),
                disabled: false,
                config: json!({}),
                location: Position::new(22, 5),
            },
        ],
        tools: vec![
            ToolRow {
                name: "subagent".into(),
                provider: "spawn".into(),
                fork: None,
                max_depth: Some(1),
                background: Background::Always,
                foreground_timeout_ms: None,
                tool_filter: Some(ToolFilter {
                    allow: Some(vec!["read_*".into()]),
                    deny: vec!["bash".into()],
                }),
                persona: Some("careful".into()),
                description: None,
                budget: None,
                location: Position::new(26, 5),
            },
            ToolRow {
                name: "ask_codex".into(),
                provider: "codex".into(),
                fork: None,
                max_depth: None,
                background: Background::Allowed,
                foreground_timeout_ms: Some(30_000),
                tool_filter: None,
                persona: None,
                description: Some("Codex does it.".into()),
                budget: None,
                location: Position::new(31, 5),
            },
        ],
    };
    assert_eq!(preset, expected);
    assert_eq!(
        preset
            .enabled_providers()
            .map(|row| row.name.as_str())
            .collect::<Vec<_>>(),
        ["spawn", "codex"]
    );
}

#[test]
fn the_build_context_carries_the_alias_table_and_the_default_models_kind() {
    let preset = load(FULL, &[("HOST", "h"), ("FAST", "tiny")]);
    let context = preset.build_context(Extensions::new());
    let aliases = context.extensions.get::<ModelAliases>().unwrap();
    assert_eq!(
        *aliases,
        ModelAliases::new(
            [("fast", "tiny"), ("sonnet", "qwen-large")]
                .into_iter()
                .map(|(alias, id)| (alias.to_owned(), id.to_owned()))
                .collect(),
            Some(ModelKind::OpenaiChat),
        )
    );
    // A preset without a model or aliases still says so: an empty table, no kind.
    let bare = load("version: 1\n", &[]);
    let context = bare.build_context(Extensions::new());
    assert_eq!(
        *context.extensions.get::<ModelAliases>().unwrap(),
        ModelAliases::default()
    );
}

#[test]
fn variables_set_default_and_escaped() {
    let text = "version: 1\nmodel:\n  kind: anthropic\n  name: \"${A}-${B:-b}-$${C}-$$D-${E:-e}\"\n  api_key_env: ${KEY_VAR}\n";
    let preset = load(text, &[("A", "a"), ("E", ""), ("KEY_VAR", "MY_KEY")]);
    let model = preset.model.unwrap();
    assert_eq!(model.name, "a-b-${C}-$$D-e");
    assert_eq!(model.api_key_env.as_deref(), Some("MY_KEY"));
}

#[test]
fn unset_variable_is_an_error_only_when_referenced() {
    let text = "version: 1\n# ${IN_A_COMMENT}\nagents: [\"${DIR}\"]\n";
    assert_eq!(
        load(text, &[("DIR", "d")]).agents,
        [PathBuf::from("conf/d")]
    );
    let error = Preset::parse(text, "conf/p.yaml", &factories(), &no_env).unwrap_err();
    assert!(
        matches!(&error, Error::UnsetVariable { name, site } if name == "DIR" && site.position == Position::new(3, 10) && site.key == "agents[0]"),
        "{error:?}"
    );
}

#[test]
fn keys_are_never_expanded() {
    let text = "version: 1\nproviders:\n  - name: cc\n    kind: claude-code\n    config:\n      env: {\"${K}\": v}\n";
    let preset = load(text, &[]);
    assert_eq!(preset.providers[0].config, json!({"env": {"${K}": "v"}}));
}

#[test]
fn scripted_scenario_resolves_against_the_preset_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("scenarios")).unwrap();
    std::fs::write(dir.path().join("scenarios/s.yaml"), "[]\n").unwrap();
    let path = dir.path().join("p.yaml");
    std::fs::write(
        &path,
        "version: 1\nmodel: {kind: scripted, name: s, scenario: scenarios/s.yaml}\n",
    )
    .unwrap();
    let preset = Preset::load(&path, &factories(), &no_env).unwrap();
    assert_eq!(
        preset.model.unwrap().scenario,
        Some(dir.path().join("scenarios/s.yaml"))
    );
    assert_eq!(preset.base_dir, dir.path());
}

#[test]
fn build_registers_enabled_rows_with_the_preset_cap() {
    let preset = load(FULL, &[("HOST", "h")]);
    let built = preset
        .build(&factories(), &preset.build_context(Extensions::new()))
        .unwrap();
    assert_eq!(built.registry.names(), ["spawn", "codex"]);
    assert_eq!(built.registry.max_depth(), 2);
    assert_eq!(built.tools, preset.tools);
    assert_eq!(built.model, preset.model);
    assert_eq!(built.agents, preset.agents);
}

#[test]
fn default_cap_is_the_core_default() {
    let preset = load("version: 1\n", &[]);
    assert_eq!(preset.max_depth, subagent_core::registry::DEFAULT_MAX_DEPTH);
    let built = preset
        .build(&factories(), &preset.build_context(Extensions::new()))
        .unwrap();
    assert!(built.registry.names().is_empty());
    assert!(built.tools.is_empty());
}

#[test]
fn a_factory_refusal_is_reported_at_its_row_with_its_code() {
    let text = "version: 1\nproviders:\n  - name: s\n    kind: spawn\n  - name: cc\n    kind: claude-code\n    config: {fail: true}\n";
    let preset = load(text, &[]);
    let error = preset
        .build(&factories(), &preset.build_context(Extensions::new()))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "conf/p.yaml:5:5: providers[1]: cannot build provider \"cc\": could not start the subagent: binary not found"
    );
    assert_eq!(error.code(), ErrorCode::SpawnFailed);
}

#[test]
fn listing_marks_disabled_rows_with_their_capabilities() {
    let preset = load(FULL, &[("HOST", "h")]);
    let listing = preset.listing(&factories());
    let names: Vec<(&str, &str, bool)> = listing
        .iter()
        .map(|row| (row.name.as_str(), row.kind.as_str(), row.disabled))
        .collect();
    assert_eq!(
        names,
        [
            ("spawn", "spawn", false),
            ("cc", "claude-code", true),
            ("codex", "codex", false)
        ]
    );
    assert_eq!(
        listing[1],
        ProviderListing {
            name: "cc".into(),
            kind: "claude-code".into(),
            disabled: true,
            summary: "a fake provider for tests".into(),
            capabilities: Capabilities::ALL,
            reasons: Default::default(),
            unavailable: None,
            location: Position::new(17, 5),
        }
    );
}

#[test]
fn schema_for_factories_checks_each_kind_config() {
    let schema = preset_schema_for(&factories());
    let validator = jsonschema::validator_for(&schema).unwrap();
    let good = json!({"version": 1, "providers": [{"name": "c", "kind": "claude-code", "config": {"model": "m"}}]});
    assert!(validator.is_valid(&good));
    let bad_config = json!({"version": 1, "providers": [{"name": "c", "kind": "claude-code", "config": {"model": ""}}]});
    assert!(!validator.is_valid(&bad_config));
    let bad_kind = json!({"version": 1, "providers": [{"name": "c", "kind": "nope"}]});
    assert!(!validator.is_valid(&bad_kind));
}

#[test]
fn builtin_models_name_a_built_in_and_a_model() {
    let preset = load(
        "version: 1\nbuiltin_models:\n  explore: ${SMALL:-haiku}\n  plan: inherit\n",
        &[],
    );
    assert_eq!(
        preset.builtin_models,
        [("explore".to_owned(), "haiku".to_owned())].into()
    );
    let refused = |text: &str| {
        Preset::parse(text, "p.yaml", &factories(), &env(&[]))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused("version: 1\nbuiltin_models:\n  reviewer: haiku\n"),
        "p.yaml:3:3: builtin_models.reviewer: `reviewer` is not a built-in agent (built in: general-purpose, explore, plan); give an agent of your own its model in its definition"
    );
    assert_eq!(
        refused("version: 1\nbuiltin_models: {explore: \"\"}\n"),
        "p.yaml:2:18: builtin_models.explore: the model of `explore` must not be empty"
    );
}

#[test]
fn a_kind_without_a_row_gets_a_default_one_when_its_default_config_is_valid() {
    let text = "version: 1\nproviders:\n  - name: a\n    kind: spawn\n  - name: codex\n    kind: fork\n  - name: off\n    kind: claude-code\n    disabled: true\n";
    let mut preset = Preset::parse(text, "p.yaml", &factories(), &no_env).unwrap();
    let needs_config: std::sync::Arc<dyn subagent_core::ProviderFactory> =
        std::sync::Arc::new(super::support::FakeFactory {
            kind: "needs-config",
            capabilities: Capabilities::NONE,
            schema: json!({"type": "object", "required": ["target"]}),
        });
    let free_kind: std::sync::Arc<dyn subagent_core::ProviderFactory> =
        std::sync::Arc::new(super::support::FakeFactory {
            kind: "mine",
            capabilities: Capabilities::NONE,
            schema: json!({"type": "object", "properties": {"depth": {"type": "integer"}}}),
        });
    let mut kinds = factories();
    kinds.extend([needs_config, free_kind]);
    preset.add_default_rows(&kinds);
    // spawn and claude-code have rows (a disabled one counts), the name `codex` is taken,
    // `needs-config` must be configured: only `mine` gets a row.
    assert_eq!(
        preset.providers.last(),
        Some(&ProviderRow {
            name: "mine".into(),
            kind: "mine".into(),
            disabled: false,
            config: json!({}),
            location: Position::default(),
        })
    );
    assert_eq!(preset.providers.len(), 4);
}
