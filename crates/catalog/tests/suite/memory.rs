//! `memory:` (issue 29): the scope read, the directory resolved per scope as Claude Code puts
//! it, and the tools that reach it kept in a `tools` list.

use pretty_assertions::assert_eq;
use subagent_catalog::{Catalog, CatalogConfig, Source};
use subagent_core::ToolFilter;
use subagent_core::agents::AgentDirectory;
use subagent_core::memory::{AgentMemory, MemoryRoots, MemoryScope};

use super::support::{agents_in, write};

fn keeper(scope: &str, tools: &str) -> String {
    format!(
        "---\nname: keeper\ndescription: Keeps notes.\n{tools}memory: {scope}\n---\nYou keep notes.\n"
    )
}

#[test]
fn each_scope_resolves_to_claude_codes_directory() {
    let home = tempfile::tempdir().unwrap();
    let (root, dir) = agents_in(&[
        ("user.md", &keeper("user", "").replace("keeper", "mine")),
        ("project.md", &keeper("project", "")),
        (
            "local.md",
            &keeper("local", "").replace("keeper", "plug:in"),
        ),
        ("none.md", "---\nname: plain\ndescription: d\n---\nx\n"),
    ]);
    let catalog = Catalog::load(
        CatalogConfig::new()
            .builtins(None)
            .dir(Source::Project, &dir)
            .memory(MemoryRoots::new(Some(home.path()), Some(root.path()))),
    );
    assert_eq!(catalog.warnings(), vec![]);
    let memory = |name: &str| catalog.get(name).unwrap().memory;
    assert_eq!(
        memory("mine"),
        Some(AgentMemory {
            scope: MemoryScope::User,
            dir: home.path().join(".claude/agent-memory/mine"),
        })
    );
    assert_eq!(
        memory("keeper"),
        Some(AgentMemory {
            scope: MemoryScope::Project,
            dir: root.path().join(".claude/agent-memory/keeper"),
        })
    );
    // The name's `:` becomes `-`, as Claude Code names the folder.
    assert_eq!(
        memory("plug:in"),
        Some(AgentMemory {
            scope: MemoryScope::Local,
            dir: root.path().join(".claude/agent-memory-local/plug-in"),
        })
    );
    assert_eq!(memory("plain"), None);
    // Without a home, user memory has no directory (the agent runs without memory).
    let homeless = Catalog::load(
        CatalogConfig::new()
            .builtins(None)
            .dir(Source::Project, &dir)
            .memory(MemoryRoots::new(None, Some(root.path()))),
    );
    assert_eq!(homeless.get("mine").unwrap().memory, None);
    assert!(homeless.get("keeper").unwrap().memory.is_some());
}

#[test]
fn a_tools_list_keeps_the_tools_that_reach_memory() {
    let root = tempfile::tempdir().unwrap();
    let file = write(
        root.path(),
        "agents/keeper.md",
        &keeper("project", "tools: Bash\n"),
    );
    let parsed = subagent_catalog::load_file(&file, Source::Project).unwrap();
    assert_eq!(
        parsed.definition.tool_filter(),
        Some(ToolFilter {
            allow: Some(
                [
                    "Bash",
                    "bash",
                    "Write",
                    "write_file",
                    "Edit",
                    "edit_file",
                    "Read",
                    "read_file"
                ]
                .map(String::from)
                .to_vec()
            ),
            deny: vec![],
        })
    );
    // Without `tools`, every tool is inherited: nothing to add. `disallowedTools` still holds.
    let file = write(
        root.path(),
        "agents/denier.md",
        &keeper("user", "disallowedTools: Write\n"),
    );
    let parsed = subagent_catalog::load_file(&file, Source::Project).unwrap();
    assert_eq!(
        parsed.definition.tool_filter(),
        Some(ToolFilter {
            allow: None,
            deny: vec!["Write".to_owned(), "write_file".to_owned()],
        })
    );
    // Without memory, a tools list is as written.
    let file = write(
        root.path(),
        "agents/plain.md",
        "---\nname: plain\ndescription: d\ntools: Bash\n---\nx\n",
    );
    let parsed = subagent_catalog::load_file(&file, Source::Project).unwrap();
    assert_eq!(
        parsed.definition.tool_filter().unwrap().allow,
        Some(vec!["Bash".to_owned(), "bash".to_owned()])
    );
}
