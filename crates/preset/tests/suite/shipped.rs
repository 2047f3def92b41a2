//! The shipped presets load, and the committed JSON Schema is up to date.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use subagent_core::Extensions;
use subagent_preset::{ModelKind, Preset, preset_schema};

use super::support::{env, permissive_factories};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shipped(name: &str) -> Preset {
    let path = root().join("presets").join(name);
    Preset::load(&path, &permissive_factories(), &env(&[]))
        .unwrap_or_else(|error| panic!("{name}: {error}"))
}

#[test]
fn every_shipped_preset_loads_and_builds_without_any_variable_set() {
    let mut names: Vec<String> = std::fs::read_dir(root().join("presets"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".yaml"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "cross-product.yaml",
            "offline.yaml",
            "read-only.yaml",
            "standard.yaml"
        ]
    );
    for name in &names {
        let preset = shipped(name);
        let built = preset
            .build(
                &permissive_factories(),
                &preset.build_context(Extensions::new()),
            )
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        assert!(!built.tools.is_empty(), "{name} has no delegation tool");
    }
}

fn summary(preset: &Preset) -> Vec<String> {
    preset
        .providers
        .iter()
        .map(|row| {
            format!(
                "{}{}",
                row.name,
                if row.disabled { " (disabled)" } else { "" }
            )
        })
        .chain(
            preset
                .tools
                .iter()
                .map(|tool| format!("tool {} -> {}", tool.name, tool.provider)),
        )
        .collect()
}

#[test]
fn standard_has_products_disabled() {
    let preset = shipped("standard.yaml");
    assert_eq!(
        summary(&preset),
        [
            "spawn",
            "fork",
            "claude-code (disabled)",
            "codex (disabled)",
            "tool subagent -> spawn"
        ]
    );
    assert_eq!(preset.model.unwrap().name, "claude-sonnet-4-5");
}

#[test]
fn standard_model_follows_the_variable() {
    let path = root().join("presets/standard.yaml");
    let preset = Preset::load(
        &path,
        &permissive_factories(),
        &env(&[("SUBAGENT_MODEL", "claude-opus-4-1")]),
    )
    .unwrap();
    assert_eq!(preset.model.unwrap().name, "claude-opus-4-1");
}

#[test]
fn cross_product_enables_both_products_and_an_acp_agent_and_lists_disabled_remotes() {
    assert_eq!(
        summary(&shipped("cross-product.yaml")),
        [
            "spawn",
            "fork",
            "claude-code",
            "codex",
            "codex-acp",
            "remote (disabled)",
            "workers (disabled)",
            "tool subagent -> spawn",
            "tool claude_code -> claude-code",
            "tool codex -> codex",
            "tool codex_acp -> codex-acp"
        ]
    );
}

#[test]
fn offline_uses_the_scripted_model_and_its_built_in_scenario() {
    let preset = shipped("offline.yaml");
    let model = preset.model.unwrap();
    assert_eq!(model.kind, ModelKind::Scripted);
    // No path into the clone: a copy of `presets/` anywhere runs the demo built into the binary.
    assert_eq!(model.scenario, None);
    assert!(
        subagent_model::scenario::OFFLINE_DEMO.contains("name: subagent"),
        "the built-in scenario calls the preset's tool"
    );
    assert_eq!(preset.tools[0].name, "subagent");
}

#[test]
fn read_only_filters_children_to_read_only_tools() {
    let preset = shipped("read-only.yaml");
    assert_eq!(summary(&preset), ["spawn", "tool subagent -> spawn"]);
    let filter = preset.tools[0].tool_filter.clone().unwrap();
    for tool in ["ls", "read_file", "glob", "grep"] {
        assert!(filter.permits(tool), "{tool}");
    }
    for tool in ["write_file", "edit_file", "delete", "bash", "subagent"] {
        assert!(!filter.permits(tool), "{tool}");
    }
}

/// `docs/preset.schema.json` is `preset_schema()`. To update it after changing the format, run
/// this test with `SUBAGENT_UPDATE_SCHEMA=1` (read, never set, by the test).
#[test]
fn committed_schema_is_up_to_date() {
    let path = root().join("docs/preset.schema.json");
    let expected = format!(
        "{}\n",
        serde_json::to_string_pretty(&preset_schema()).unwrap()
    );
    if std::env::var_os("SUBAGENT_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "docs/preset.schema.json is out of date: run `SUBAGENT_UPDATE_SCHEMA=1 cargo test -p subagent-preset committed_schema`"
    );
}

#[test]
fn schema_accepts_the_shipped_presets_as_json() {
    let validator = jsonschema::validator_for(&preset_schema()).unwrap();
    for name in [
        "standard.yaml",
        "offline.yaml",
        "read-only.yaml",
        "cross-product.yaml",
    ] {
        let text = std::fs::read_to_string(root().join("presets").join(name)).unwrap();
        let value: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
}
