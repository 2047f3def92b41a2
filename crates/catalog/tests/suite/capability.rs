//! Definitions asking for what their provider cannot do are load warnings.

use pretty_assertions::assert_eq;
use subagent_catalog::{
    Catalog, CatalogConfig, Definition, Isolation, ProviderTable, Source, WarningKind,
    capability_warnings,
};
use subagent_core::{Capabilities, Capability};

use super::support::{agents_in, shown};

fn fork_like() -> Capabilities {
    Capabilities::ALL
        .with(Capability::ToolFilter, false)
        .with(Capability::Persona, false)
        .with(Capability::ModelOverride, false)
}

/// The catalog of the project agents in `dir`, checked against the providers of `table`.
fn project_catalog(dir: &std::path::Path, table: ProviderTable) -> Catalog {
    Catalog::load(
        CatalogConfig::new()
            .dir(Source::Project, dir)
            .providers(table),
    )
}

#[test]
fn unsupported_and_unknown_providers_are_reported_with_lines() {
    let (root, dir) = agents_in(&[
        (
            "limited.md",
            "---\nname: limited\ndescription: d\nprovider: acp\nmodel: m\ntools: ls\nmaxTurns: 2\neffort: low\n---\nbody\n",
        ),
        (
            "fine.md",
            "---\nname: fine\ndescription: d\nprovider: claude-code\ntools: Read\n---\nbody\n",
        ),
        (
            "nowhere.md",
            "---\nname: nowhere\ndescription: d\n\nprovider: nope\n---\n",
        ),
        ("plain.md", "---\nname: plain\ndescription: d\n---\n"),
    ]);
    let table = ProviderTable::new(Some("spawn".into()))
        .with("spawn", Capabilities::ALL)
        .with("claude-code", Capabilities::ALL)
        .with("acp", Capabilities::NONE);
    let catalog = project_catalog(&dir, table);
    assert_eq!(
        shown(&catalog.warnings(), root.path()),
        vec![
            "<root>/agents/limited.md:6:1: agent `limited` asks for tool_filter (for \
             tools/disallowedTools), persona (for persona/body), model_override (for model), \
             max_turns (for maxTurns), effort (for effort) which provider `acp` does not \
             support: starting it will fail with UNSUPPORTED_CAPABILITY",
            "<root>/agents/nowhere.md:5:1: agent `nowhere` runs on provider `nope`, which is not \
             registered: starting it will fail with UNKNOWN_PROVIDER",
        ]
    );
    let kinds: Vec<WarningKind> = catalog.warnings().iter().map(|w| w.kind).collect();
    assert_eq!(
        kinds,
        vec![WarningKind::Unsupported, WarningKind::UnknownProvider]
    );

    // Checking against a default provider that cannot filter tools flags the read-only built-ins
    // (which would otherwise run with every tool) — set after loading, without rereading.
    catalog.set_providers(Some(
        ProviderTable::new(Some("fork".into()))
            .with("fork", fork_like())
            .with("claude-code", Capabilities::ALL)
            .with("acp", Capabilities::ALL),
    ));
    assert_eq!(
        shown(&catalog.warnings(), root.path()),
        vec![
            "agent `general-purpose` asks for persona (for persona/body) which provider `fork` \
             does not support: starting it will fail with UNSUPPORTED_CAPABILITY",
            "agent `explore` asks for tool_filter (for tools/disallowedTools), persona (for \
             persona/body) which provider `fork` does not support: starting it will fail with \
             UNSUPPORTED_CAPABILITY",
            "agent `plan` asks for tool_filter (for tools/disallowedTools), persona (for \
             persona/body) which provider `fork` does not support: starting it will fail with \
             UNSUPPORTED_CAPABILITY",
            "<root>/agents/nowhere.md:5:1: agent `nowhere` runs on provider `nope`, which is not \
             registered: starting it will fail with UNKNOWN_PROVIDER",
        ]
    );

    // No table: no check.
    catalog.set_providers(None);
    assert_eq!(catalog.warnings(), vec![]);
}

#[test]
fn the_lookup_function_form() {
    let mut needs_all = Definition::new("x", "d", "prompt");
    needs_all.tools = Some(vec!["ls".into()]);
    needs_all.max_turns = Some(1);
    needs_all.isolation = Some(Isolation::Worktree);
    assert_eq!(
        needs_all.required_capabilities(),
        vec![
            Capability::ToolFilter,
            Capability::Persona,
            Capability::MaxTurns,
            Capability::Isolation
        ]
    );
    let bare = Definition::new("y", "d", "  ");
    assert_eq!(bare.required_capabilities(), vec![]);

    let lookup = |name: &str| (name == "spawn").then_some(Capabilities::ALL);
    assert_eq!(
        capability_warnings([&needs_all, &bare], Some("spawn"), lookup),
        vec![]
    );
    // Without a default provider, definitions that name none are not checked.
    assert_eq!(capability_warnings([&needs_all], None, |_| None), vec![]);
    let warnings = capability_warnings([&needs_all], Some("codex"), |_| Some(Capabilities::NONE));
    assert_eq!(warnings.len(), 1);
    assert_eq!(
        warnings[0].to_string(),
        "agent `x` asks for tool_filter (for tools/disallowedTools), persona (for persona/body), \
         max_turns (for maxTurns), isolation (for isolation) which provider `codex` does not \
         support: starting it will fail with UNSUPPORTED_CAPABILITY"
    );
}

/// The tools the test's `spawn` provider has (our runtime's built-ins).
const SPAWN_TOOLS: [&str; 8] = [
    "ls",
    "read_file",
    "write_file",
    "edit_file",
    "delete",
    "glob",
    "grep",
    "bash",
];

#[test]
fn unknown_tools_are_named_with_a_guess_and_a_child_left_with_no_tools_is_reported() {
    let (root, dir) = agents_in(&[
        (
            "typo.md",
            "---\nname: typo\ndescription: d\ntools: raed_file, grep, frobnicate\n---\nbody\n",
        ),
        (
            "none.md",
            "---\nname: none\ndescription: d\ntools: [Raed]\n---\nbody\n",
        ),
        (
            "denied.md",
            "---\nname: denied\ndescription: d\ntools: grep\ndisallowedTools: Grep\n---\nbody\n",
        ),
        // Claude Code's names, patterns, rules and MCP tools are not typos.
        (
            "fine.md",
            "---\nname: fine\ndescription: d\ntools: Read, read_*, Bash(git:*), mcp__x__y, bash\n---\n",
        ),
        // On a provider whose tools are not known, nothing is checked but the spelling.
        (
            "elsewhere.md",
            "---\nname: elsewhere\ndescription: d\nprovider: other\ntools: WebFetch, grpe\n---\n",
        ),
    ]);
    let table = ProviderTable::new(Some("spawn".into()))
        .with("spawn", Capabilities::ALL)
        .with_tools("spawn", SPAWN_TOOLS)
        .with("other", Capabilities::ALL)
        .with("claude-code", Capabilities::ALL)
        .with_tools("claude-code", ["Read", "Grep", "Glob", "Bash", "WebFetch"]);
    let catalog = project_catalog(&dir, table);
    assert_eq!(
        shown(&catalog.warnings(), root.path()),
        vec![
            "<root>/agents/denied.md:4:1: agent `denied` would run with no tools on provider \
             `spawn`: its tools/disallowedTools leave none of ls, read_file, write_file, \
             edit_file, delete, glob, grep, bash",
            "<root>/agents/elsewhere.md:5:1: agent `elsewhere`: unknown tool `grpe` in tools \
             (did you mean `grep`?)",
            "<root>/agents/none.md:4:1: agent `none`: unknown tool `Raed` in tools (did you \
             mean `Read`?)",
            "<root>/agents/none.md:4:1: agent `none` would run with no tools on provider \
             `spawn`: its tools/disallowedTools leave none of ls, read_file, write_file, \
             edit_file, delete, glob, grep, bash",
            "<root>/agents/typo.md:4:1: agent `typo`: unknown tool `raed_file` in tools (did \
             you mean `read_file`?)",
            "<root>/agents/typo.md:4:1: agent `typo`: unknown tool `frobnicate` in tools",
        ]
    );
    let kinds: Vec<WarningKind> = catalog.warnings().iter().map(|w| w.kind).collect();
    assert_eq!(
        kinds,
        vec![
            WarningKind::NoTools,
            WarningKind::UnknownTool,
            WarningKind::UnknownTool,
            WarningKind::NoTools,
            WarningKind::UnknownTool,
            WarningKind::UnknownTool,
        ]
    );
}
