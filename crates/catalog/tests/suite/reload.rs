//! `reload()` picks up new, changed and removed files; profiles handed out before stay valid.

use pretty_assertions::assert_eq;
use subagent_catalog::{Catalog, CatalogConfig, Reloaded, Source};
use subagent_core::agents::AgentDirectory;

use super::support::{agent, shown, write};

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn reload_sees_new_changed_and_removed_files() {
    let root = tempfile::tempdir().unwrap();
    let user = root.path().join("user");
    let project = root.path().join("project");
    write(&user, "keep.md", &agent("keep", "kept"));
    let changing = write(&user, "change.md", &agent("change", "before"));
    let removing = write(&user, "remove.md", &agent("remove", "going"));
    let catalog = Catalog::load(
        CatalogConfig::new()
            .builtins(None)
            .dir(Source::User, &user)
            .dir(Source::Project, &project),
    );
    let before = catalog.get("change").unwrap();
    assert_eq!(catalog.names(), names(&["change", "keep", "remove"]));

    // Nothing touched: nothing changed.
    assert!(catalog.reload().is_empty());

    write(&user, "new.md", &agent("new", "fresh"));
    std::fs::write(&changing, agent("change", "after")).unwrap();
    std::fs::remove_file(&removing).unwrap();
    write(&project, "keep.md", &agent("keep", "project's"));
    write(&project, "broken.md", "---\nname: [\n---\n");

    let changes = catalog.reload();
    assert_eq!(
        changes,
        Reloaded {
            added: names(&["new"]),
            removed: names(&["remove"]),
            changed: names(&["change", "keep"]),
        }
    );
    assert_eq!(catalog.names(), names(&["change", "keep", "new"]));
    assert_eq!(catalog.get("change").unwrap().description, "after");
    assert_eq!(catalog.get("keep").unwrap().description, "project's");
    assert_eq!(
        catalog.entries()[1].overridden[0].source,
        Source::User,
        "the user's keep is listed as overridden"
    );
    assert_eq!(
        shown(&catalog.warnings(), root.path()),
        vec!["<root>/project/broken.md:2:7: invalid frontmatter: unclosed bracket '['"]
    );
    // A profile taken before the reload is a value: unchanged.
    assert_eq!(before.description, "before");

    // Fixing the broken file clears its warning.
    write(&project, "broken.md", &agent("broken", "fixed"));
    let changes = catalog.reload();
    assert_eq!(changes.added, names(&["broken"]));
    assert_eq!(catalog.warnings(), vec![]);
}

#[test]
fn a_directory_created_after_loading_is_read_on_reload() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join(".claude/agents");
    let catalog = Catalog::load(CatalogConfig::new().dir(Source::Project, &dir));
    assert_eq!(catalog.names().len(), 3);
    write(&dir, "late.md", &agent("late", "d"));
    assert_eq!(catalog.reload().added, names(&["late"]));
    assert!(catalog.get("late").is_some());
}
