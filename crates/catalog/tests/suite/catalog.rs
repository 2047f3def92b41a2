//! Sources, priority, overrides, duplicates and warnings across directories.

use std::path::Path;

use pretty_assertions::assert_eq;
use subagent_catalog::{
    Catalog, CatalogConfig, Definition, Source, SourceDir, WarningKind, standard_dirs,
};
use subagent_core::agents::AgentDirectory;

use super::support::{agent, shown, write};

/// The directories of every source under `root`; `user` has two, like `~/.subagents/agents`
/// and `~/.claude/agents`.
fn dirs(root: &Path) -> Vec<SourceDir> {
    [
        (Source::Plugin, "plugin"),
        (Source::User, "user-a"),
        (Source::User, "user-b"),
        (Source::Project, "project"),
        (Source::Flag, "flag"),
        (Source::Policy, "policy"),
    ]
    .into_iter()
    .map(|(source, dir)| SourceDir::new(source, root.join(dir)))
    .collect()
}

/// Each effective agent: name, source, origin (with `<root>`), overridden sources.
fn listing(catalog: &Catalog, root: &Path) -> Vec<(String, Source, String, Vec<Source>)> {
    catalog
        .entries()
        .iter()
        .map(|entry| {
            let d = &entry.definition;
            (
                d.name.clone(),
                d.source,
                d.origin
                    .to_string()
                    .replace(&root.display().to_string(), "<root>"),
                entry.overridden.iter().map(|o| o.source).collect(),
            )
        })
        .collect()
}

type Row = (&'static str, Source, &'static str, Vec<Source>);

fn builtin_rows() -> Vec<Row> {
    vec![
        ("general-purpose", Source::Builtin, "builtin", vec![]),
        ("explore", Source::Builtin, "builtin", vec![]),
        ("plan", Source::Builtin, "builtin", vec![]),
    ]
}

/// The built-ins, then the agent `x` from `source` at `path`, over the definitions of `overridden`.
fn builtins_and_x(source: Source, path: &'static str, overridden: Vec<Source>) -> Vec<Row> {
    [builtin_rows(), vec![("x", source, path, overridden)]].concat()
}

#[test]
fn priority_override_duplicates_and_warnings() {
    struct Case {
        what: &'static str,
        files: Vec<(&'static str, String)>,
        listing: Vec<Row>,
        warnings: Vec<&'static str>,
    }
    let invalid = "---\nname: x\nmaxTurns: -1\n---\n".to_owned();
    let cases = vec![
        Case {
            what: "only built-ins",
            files: vec![],
            listing: builtin_rows(),
            warnings: vec![],
        },
        Case {
            what: "project overrides user",
            files: vec![
                ("user-a/x.md", agent("x", "user's")),
                ("project/x.md", agent("x", "project's")),
            ],
            listing: builtins_and_x(Source::Project, "<root>/project/x.md", vec![Source::User]),
            warnings: vec![],
        },
        Case {
            what: "policy beats every other source",
            files: vec![
                ("plugin/x.md", agent("x", "p")),
                ("user-b/x.md", agent("x", "u")),
                ("project/x.md", agent("x", "pr")),
                ("flag/x.md", agent("x", "f")),
                ("policy/x.md", agent("x", "po")),
            ],
            listing: builtins_and_x(
                Source::Policy,
                "<root>/policy/x.md",
                vec![Source::Flag, Source::Project, Source::User, Source::Plugin],
            ),
            warnings: vec![],
        },
        Case {
            what: "a file overrides a built-in and keeps its place in the listing",
            files: vec![("user-a/explore.md", agent("explore", "mine"))],
            listing: vec![
                ("general-purpose", Source::Builtin, "builtin", vec![]),
                (
                    "explore",
                    Source::User,
                    "<root>/user-a/explore.md",
                    vec![Source::Builtin],
                ),
                ("plan", Source::Builtin, "builtin", vec![]),
            ],
            warnings: vec![],
        },
        Case {
            what: "the name field, not the file name, is the identity",
            files: vec![
                ("user-a/x.md", agent("x", "u")),
                ("flag/other-file.md", agent("x", "f")),
            ],
            listing: builtins_and_x(
                Source::Flag,
                "<root>/flag/other-file.md",
                vec![Source::User],
            ),
            warnings: vec![],
        },
        Case {
            what: "an invalid higher definition leaves the lower one in effect",
            files: vec![("user-a/x.md", agent("x", "u")), ("project/x.md", invalid)],
            listing: builtins_and_x(Source::User, "<root>/user-a/x.md", vec![]),
            warnings: vec![
                "<root>/project/x.md:3:11: `maxTurns`: expected a whole number from 1 to \
                 4294967295, found -1",
            ],
        },
        Case {
            what: "two definitions in one source (two directories) are reported; first wins",
            files: vec![
                ("user-a/x.md", agent("x", "a")),
                ("user-b/x.md", agent("x", "b")),
            ],
            listing: builtins_and_x(Source::User, "<root>/user-a/x.md", vec![]),
            warnings: vec![
                "<root>/user-b/x.md:2:1: agent `x` is defined twice in the user source: \
                 <root>/user-a/x.md and <root>/user-b/x.md; using <root>/user-a/x.md",
            ],
        },
        Case {
            what: "two definitions in one directory (one nested) are reported",
            files: vec![
                ("project/b.md", agent("x", "b")),
                ("project/a/x.md", agent("x", "a")),
            ],
            listing: builtins_and_x(Source::Project, "<root>/project/a/x.md", vec![]),
            warnings: vec![
                "<root>/project/b.md:2:1: agent `x` is defined twice in the project source: \
                 <root>/project/a/x.md and <root>/project/b.md; using <root>/project/a/x.md",
            ],
        },
        Case {
            what: "broken, unknown-field and non-definition files among good ones",
            files: vec![
                ("project/a.md", agent("a", "fine")),
                (
                    "project/b.md",
                    "---\nname: b\ndescription: [\n---\n".to_owned(),
                ),
                (
                    "project/c.md",
                    "---\nname: c\ndescription: d\ncolour: red\n---\n".to_owned(),
                ),
                ("project/README.md", "# My agents\n".to_owned()),
                ("project/notes.txt", "not markdown".to_owned()),
                ("project/.hidden.md", "ignored".to_owned()),
                (
                    "project/d.md",
                    "---\nname: d\n---\nno description".to_owned(),
                ),
            ],
            listing: [
                builtin_rows(),
                vec![
                    ("a", Source::Project, "<root>/project/a.md", vec![]),
                    ("c", Source::Project, "<root>/project/c.md", vec![]),
                    ("d", Source::Project, "<root>/project/d.md", vec![]),
                ],
            ]
            .concat(),
            warnings: vec![
                "<root>/project/README.md:1: no frontmatter: a definition starts with a `---` \
                 line, then YAML fields, then another `---` line",
                "<root>/project/b.md:3:14: invalid frontmatter: unclosed bracket '['",
                "<root>/project/c.md:4:1: unknown field `colour` ignored (did you mean `color`?)",
                "<root>/project/d.md:1: agent `d` has no `description`: the model is not told \
                 when to use it",
            ],
        },
    ];
    for case in cases {
        let root = tempfile::tempdir().unwrap();
        for dir in dirs(root.path()) {
            std::fs::create_dir_all(dir.path).unwrap();
        }
        for (path, text) in &case.files {
            write(root.path(), path, text);
        }
        let catalog = Catalog::load(CatalogConfig::new().dirs(dirs(root.path())));
        let expected: Vec<(String, Source, String, Vec<Source>)> = case
            .listing
            .into_iter()
            .map(|(n, s, o, v)| (n.to_owned(), s, o.to_owned(), v))
            .collect();
        assert_eq!(listing(&catalog, root.path()), expected, "{}", case.what);
        assert_eq!(
            shown(&catalog.warnings(), root.path()),
            case.warnings,
            "{}",
            case.what
        );
    }
}

#[test]
fn listing_order_is_builtins_then_names() {
    let root = tempfile::tempdir().unwrap();
    for name in ["zeta", "alpha", "Beta", "plan"] {
        write(root.path(), &format!("p/{name}.md"), &agent(name, "d"));
    }
    let catalog = Catalog::load(CatalogConfig::new().dir(Source::Project, root.path().join("p")));
    assert_eq!(
        catalog.names(),
        vec![
            "general-purpose",
            "explore",
            "plan",
            "Beta",
            "alpha",
            "zeta"
        ]
    );
    let agents: Vec<String> = catalog.agents().into_iter().map(|a| a.name).collect();
    assert_eq!(agents, catalog.names());
}

#[test]
fn lookup_is_exact_then_case_insensitive_when_unambiguous() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "p/Reviewer.md", &agent("Reviewer", "d"));
    write(root.path(), "p/tester.md", &agent("tester", "d"));
    write(root.path(), "p/Tester2.md", &agent("TESTER", "d"));
    let catalog = Catalog::load(CatalogConfig::new().dir(Source::Project, root.path().join("p")));
    assert_eq!(catalog.get("Explore").unwrap().name, "explore");
    assert_eq!(catalog.get("reviewer").unwrap().name, "Reviewer");
    assert_eq!(catalog.get("tester").unwrap().name, "tester");
    assert_eq!(catalog.get("TESTER").unwrap().name, "TESTER");
    assert_eq!(catalog.get("Tester"), None, "ambiguous");
    assert_eq!(catalog.get("nobody"), None);
}

#[test]
fn missing_directories_are_silent_except_a_flag_one() {
    let root = tempfile::tempdir().unwrap();
    let config = CatalogConfig::new()
        .dirs(standard_dirs(
            Some(&root.path().join("home")),
            Some(root.path()),
        ))
        .dir(Source::Flag, root.path().join("nope"));
    let catalog = Catalog::load(config);
    assert_eq!(
        shown(&catalog.warnings(), root.path()),
        vec!["<root>/nope: agents directory given on the command line does not exist"]
    );
    assert_eq!(catalog.warnings()[0].kind, WarningKind::Unreadable);
}

#[test]
fn standard_dirs_read_ours_before_claude_codes() {
    let home = Path::new("/home/u");
    let project = Path::new("/work/p");
    let expected = vec![
        SourceDir::new(Source::User, "/home/u/.subagents/agents"),
        SourceDir::new(Source::User, "/home/u/.claude/agents"),
        SourceDir::new(Source::Project, "/work/p/.subagents/agents"),
        SourceDir::new(Source::Project, "/work/p/.claude/agents"),
    ];
    assert_eq!(standard_dirs(Some(home), Some(project)), expected);
    assert_eq!(standard_dirs(None, Some(project)), expected[2..].to_vec());

    // Loaded: a project `.claude` agent overrides the user's, ours wins within a source.
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let project = root.path().join("project");
    write(&home, ".claude/agents/x.md", &agent("x", "user claude"));
    write(
        &project,
        ".claude/agents/x.md",
        &agent("x", "project claude"),
    );
    write(
        &project,
        ".subagents/agents/x.md",
        &agent("x", "project ours"),
    );
    let catalog = Catalog::load(
        CatalogConfig::new()
            .builtins(None)
            .dirs(standard_dirs(Some(&home), Some(&project))),
    );
    let x = catalog.definition("x").unwrap();
    assert_eq!(x.description, "project ours");
    assert_eq!(catalog.warnings().len(), 1);
    assert_eq!(catalog.warnings()[0].kind, WarningKind::Duplicate);
}

#[test]
fn a_single_file_and_inline_definitions_are_sources_too() {
    let root = tempfile::tempdir().unwrap();
    let file = write(root.path(), "one-off.markdown", &agent("one-off", "d"));
    let inline =
        Definition::new("preset-agent", "From a preset", "Do it.").with_source(Source::Plugin);
    let overridden =
        Definition::new("explore", "Preset explore", "Look.").with_source(Source::Plugin);
    let catalog = Catalog::load(
        CatalogConfig::new()
            .dir(Source::Flag, &file)
            .definition(inline)
            .definition(overridden),
    );
    assert_eq!(
        listing(&catalog, root.path()),
        vec![
            (
                "general-purpose".into(),
                Source::Builtin,
                "builtin".into(),
                vec![]
            ),
            (
                "explore".into(),
                Source::Plugin,
                "inline".into(),
                vec![Source::Builtin]
            ),
            ("plan".into(), Source::Builtin, "builtin".into(), vec![]),
            (
                "one-off".into(),
                Source::Flag,
                "<root>/one-off.markdown".into(),
                vec![]
            ),
            (
                "preset-agent".into(),
                Source::Plugin,
                "inline".into(),
                vec![]
            ),
        ]
    );
    assert_eq!(catalog.warnings(), vec![]);
}

#[test]
fn warnings_and_entries_serialize_for_json_listings() {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "p/x.md",
        "---\nname: x\ndescription: d\nfoo: 1\n---\n",
    );
    let catalog = Catalog::load(
        CatalogConfig::new()
            .builtins(None)
            .dir(Source::Project, root.path().join("p")),
    );
    let warning = serde_json::to_value(&catalog.warnings()[0]).unwrap();
    assert_eq!(
        warning,
        serde_json::json!({
            "kind": "unknown_field",
            "path": root.path().join("p/x.md"),
            "line": 4,
            "column": 1,
            "message": "unknown field `foo` ignored",
        })
    );
    let entry = serde_json::to_value(&catalog.entries()[0]).unwrap();
    assert_eq!(entry["definition"]["source"], "project");
    assert_eq!(
        entry["definition"]["origin"],
        serde_json::json!({"type": "file", "path": root.path().join("p/x.md")})
    );
}

#[test]
fn symlinked_directories_are_followed_once_and_broken_links_reported() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("agents");
    write(&dir, "a.md", &agent("a", "d"));
    write(root.path(), "shared/b.md", &agent("b", "d"));
    std::os::unix::fs::symlink(root.path().join("shared"), dir.join("shared")).unwrap();
    std::os::unix::fs::symlink(&dir, dir.join("loop")).unwrap();
    std::os::unix::fs::symlink(root.path().join("gone.md"), dir.join("dangling.md")).unwrap();
    let catalog = Catalog::load(
        CatalogConfig::new()
            .builtins(None)
            .dir(Source::Project, &dir),
    );
    assert_eq!(catalog.names(), vec!["a", "b"]);
    let warnings = shown(&catalog.warnings(), root.path());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("<root>/agents/dangling.md: "),
        "{warnings:?}"
    );
    assert_eq!(catalog.warnings()[0].kind, WarningKind::Unreadable);
}

/// A cloned project can hold anything under `.claude/agents`: a symlink to `/dev/zero` (size 0,
/// endless), a FIFO nobody writes to, a file over the limit. Each is a warning naming the file
/// and why; nothing blocks or grows, and the other definitions load.
#[test]
fn special_and_oversized_files_are_warnings_and_the_rest_loads() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("agents");
    write(&dir, "a.md", &agent("a", "d"));
    std::fs::write(dir.join("big.md"), vec![b'a'; 2 * 1024 * 1024]).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("f.md"))
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", dir.join("z.md")).unwrap();
    let config = CatalogConfig::new()
        .builtins(None)
        .dir(Source::Project, &dir);
    // Loaded on another thread: a load that blocks on the FIFO fails the test, not hangs it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(Catalog::load(config));
    });
    let catalog = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("loading the catalog blocked"));
    assert_eq!(catalog.names(), vec!["a"]);
    assert_eq!(
        shown(&catalog.warnings(), root.path()),
        vec![
            "<root>/agents/big.md: larger than the limit of 1048576 bytes; refused (a definition may have at most 1048576 bytes)",
            "<root>/agents/f.md: a FIFO (named pipe), not a regular file; refused without reading it",
            "<root>/agents/z.md: a character device, not a regular file; refused without reading it",
        ]
    );
    assert!(
        catalog
            .warnings()
            .iter()
            .all(|w| w.kind == WarningKind::Unreadable)
    );
}

/// A definition that did not load is found by the name it would have had: its `name:` line,
/// else its file stem; so "unknown agent type" can say why.
#[test]
fn definitions_that_did_not_load_are_found_by_their_intended_name() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("agents");
    write(
        &dir,
        "reviewer.md",
        "---\nname: reviewer\ndescription: [unclosed\n---\nbody\n",
    );
    write(
        &dir,
        "file-stem.md",
        "---\ndescription: d\nmaxTurns: many\n---\n",
    );
    write(
        &dir,
        "named.md",
        "---\nname: 'Other Name'\ntools: {a: 1}\n---\n",
    );
    write(&dir, "no-frontmatter.md", "just text\n");
    write(&dir, "fine.md", &agent("fine", "d"));
    let catalog = Catalog::load(CatalogConfig::new().dir(Source::Project, &dir));
    let failed = |name: &str| shown(&catalog.failed_definitions(name), root.path());
    assert_eq!(failed("reviewer").len(), 1, "{:?}", catalog.warnings());
    assert!(
        failed("reviewer")[0].starts_with("<root>/agents/reviewer.md:3:"),
        "{:?}",
        failed("reviewer")
    );
    assert_eq!(
        failed("file-stem"),
        vec![
            "<root>/agents/file-stem.md:3:11: `maxTurns`: expected a whole number from 1 to \
             4294967295, found \"many\""
        ]
    );
    assert_eq!(failed("other name").len(), 1, "case is ignored, as in get");
    assert_eq!(failed("named"), Vec::<String>::new(), "the name: line wins");
    assert_eq!(failed("no-frontmatter").len(), 1);
    assert_eq!(failed("fine"), Vec::<String>::new());
    assert_eq!(failed("absent"), Vec::<String>::new());
    // A reload keeps them.
    catalog.reload();
    assert_eq!(failed("reviewer").len(), 1);
}
