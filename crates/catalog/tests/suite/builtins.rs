//! The built-ins: general-purpose inherits, explore and plan cannot write.

use pretty_assertions::assert_eq;
use subagent_catalog::{
    BuiltinOptions, Catalog, CatalogConfig, EXPLORE_MAX_TURNS, Layers, Settings, builtins, resolve,
};
use subagent_core::PermissionMode;
use subagent_core::agents::AgentDirectory;

const WRITERS: [&str; 9] = [
    "write_file",
    "edit_file",
    "delete",
    "bash",
    "Write",
    "Edit",
    "MultiEdit",
    "Bash",
    "subagent",
];
const READERS: [&str; 8] = [
    "ls",
    "read_file",
    "glob",
    "grep",
    "LS",
    "Read",
    "Glob",
    "Grep",
];

#[test]
fn general_purpose_inherits_model_and_tools() {
    let catalog = Catalog::load(CatalogConfig::new());
    let general = catalog.get("general-purpose").unwrap();
    assert_eq!(general.tool_filter, None);
    assert_eq!(general.model, None);
    assert_eq!(general.max_turns, None);
    assert_eq!(general.permission_mode, None);
    assert_eq!(general.provider, None);
    assert_eq!(general.source, "builtin");
    assert!(general.instructions.unwrap().contains("final message"));
    assert!(!general.description.is_empty());
}

#[test]
fn explore_and_plan_cannot_write_or_run_commands() {
    let catalog = Catalog::load(CatalogConfig::new());
    for name in ["explore", "plan"] {
        let profile = catalog.get(name).unwrap();
        let filter = profile.tool_filter.clone().unwrap();
        for tool in READERS {
            assert!(filter.permits(tool), "{name} may {tool}");
        }
        for tool in WRITERS
            .iter()
            .chain(&["mcp__github__create_issue", "web_fetch"])
        {
            assert!(!filter.permits(tool), "{name} must not {tool}");
        }
        // Even when the caller asks for more, the effective filter stays read-only.
        let effective = resolve(&Layers {
            request: Settings::default()
                .tool_filter(subagent_core::ToolFilter::allow(["*"]))
                .permission_mode(PermissionMode::Bypass),
            definition: Settings::from_profile(&profile),
            ..Layers::default()
        });
        let filter = effective.tool_filter.unwrap();
        assert!(WRITERS.iter().all(|tool| !filter.permits(tool)), "{name}");
        assert!(filter.permits("read_file"), "{name}");
        if name == "plan" {
            assert_eq!(effective.permission_mode, Some(PermissionMode::Plan));
        }
    }
    let explore = catalog.get("explore").unwrap();
    assert_eq!(explore.max_turns, Some(EXPLORE_MAX_TURNS));
    assert_eq!(EXPLORE_MAX_TURNS, 8);
    assert_eq!(explore.model, None, "no small model configured: inherit");
    let plan = catalog.get("plan").unwrap();
    assert_eq!(plan.permission_mode, Some(PermissionMode::Plan));
    assert_eq!(plan.max_turns, None);
}

#[test]
fn explore_runs_the_configured_small_model() {
    let catalog = Catalog::load(
        CatalogConfig::new().builtins(Some(BuiltinOptions::with_small_model("haiku"))),
    );
    assert_eq!(
        catalog.get("explore").unwrap().model.as_deref(),
        Some("haiku")
    );
    assert_eq!(catalog.get("plan").unwrap().model, None);
    assert_eq!(catalog.get("general-purpose").unwrap().model, None);
}

#[test]
fn builtins_can_be_left_out() {
    let catalog = Catalog::load(CatalogConfig::new().builtins(None));
    assert_eq!(catalog.agents(), vec![]);
    let names: Vec<String> = builtins(&BuiltinOptions::default())
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(names, subagent_catalog::BUILTIN_NAMES);
}
