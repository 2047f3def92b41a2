//! Effective config: request > definition > persona > parent; modes and filters intersect.

use pretty_assertions::assert_eq;
use subagent_catalog::{
    Definition, Effective, Isolation, Layers, Settings, intersect_filters, resolve,
};
use subagent_core::{Effort, PermissionMode, ToolFilter};

fn s() -> Settings {
    Settings::default()
}

fn effective(f: impl FnOnce(&mut Effective)) -> Effective {
    let mut e = Effective::default();
    f(&mut e);
    e
}

/// A case of the permission-mode layers alone: the mode of the request, the definition, the
/// persona and the parent (`None`: unset), and the mode that holds.
fn modes(
    what: &'static str,
    [request, definition, persona, parent]: [Option<PermissionMode>; 4],
    holds: PermissionMode,
) -> (&'static str, Layers, Effective) {
    let set = |mode: Option<PermissionMode>| mode.map_or_else(s, |mode| s().permission_mode(mode));
    let layers = Layers {
        request: set(request),
        definition: set(definition),
        persona: set(persona),
        parent: set(parent),
    };
    (what, layers, effective(|e| e.permission_mode = Some(holds)))
}

#[test]
fn layers_resolve_by_priority_and_intersection() {
    use PermissionMode::*;
    let cases: Vec<(&str, Layers, Effective)> = vec![
        ("nothing set", Layers::default(), Effective::default()),
        (
            "the parent's model is inherited",
            Layers {
                parent: s().model("parent-m"),
                ..Layers::default()
            },
            effective(|e| e.model = Some("parent-m".into())),
        ),
        (
            "persona beats parent",
            Layers {
                persona: s().model("persona-m"),
                parent: s().model("parent-m"),
                ..Layers::default()
            },
            effective(|e| e.model = Some("persona-m".into())),
        ),
        (
            "definition beats persona",
            Layers {
                definition: s().model("def-m").effort(Effort::Low),
                persona: s().model("persona-m").effort(Effort::High),
                ..Layers::default()
            },
            effective(|e| {
                e.model = Some("def-m".into());
                e.effort = Some(Effort::Low);
            }),
        ),
        (
            "an explicit request beats everything",
            Layers {
                request: s().model("req-m").max_turns(30),
                definition: s().model("def-m").max_turns(8),
                persona: s().model("persona-m"),
                parent: s().model("parent-m"),
            },
            effective(|e| {
                e.model = Some("req-m".into());
                e.max_turns = Some(30);
            }),
        ),
        (
            "`inherit` in a layer falls through",
            Layers {
                request: s().model("inherit"),
                definition: s().model("INHERIT"),
                parent: s().model("parent-m"),
                ..Layers::default()
            },
            effective(|e| e.model = Some("parent-m".into())),
        ),
        (
            "the parent's turn limit and isolation are its own",
            Layers {
                parent: s().max_turns(3).isolation("worktree").background(true),
                ..Layers::default()
            },
            Effective::default(),
        ),
        (
            "isolation: request > definition > persona",
            Layers {
                definition: s().isolation(Isolation::Remote.as_str()),
                persona: s().isolation("worktree"),
                ..Layers::default()
            },
            effective(|e| e.isolation = Some("remote".into())),
        ),
        modes(
            "read-only definition ∩ bypass request = read-only",
            [Some(Bypass), Some(Plan), None, None],
            Plan,
        ),
        modes(
            "read-only parent ∩ accept-edits definition = read-only",
            [None, Some(AcceptEdits), None, Some(Plan)],
            Plan,
        ),
        modes(
            "a request cannot loosen the parent",
            [Some(Bypass), None, None, Some(Default)],
            Default,
        ),
        modes(
            "one mode alone is kept",
            [None, None, Some(AcceptEdits), None],
            AcceptEdits,
        ),
        (
            "tool filters intersect: allowed by all, denied by any",
            Layers {
                request: s().tool_filter(ToolFilter::allow(["read_file", "bash"])),
                definition: s().tool_filter(ToolFilter {
                    allow: Some(vec!["read_*".into(), "ls".into()]),
                    deny: vec!["read_secret".into()],
                }),
                parent: s().tool_filter(ToolFilter::deny(["ls"])),
                ..Layers::default()
            },
            effective(|e| {
                e.tool_filter = Some(ToolFilter {
                    allow: Some(vec!["read_file".into()]),
                    deny: vec!["read_secret".into(), "ls".into()],
                });
            }),
        ),
        (
            "background when the definition says so, whatever the request",
            Layers {
                request: s().background(false),
                definition: s().background(true),
                ..Layers::default()
            },
            effective(|e| e.background = true),
        ),
    ];
    for (what, layers, expected) in cases {
        assert_eq!(resolve(&layers), expected, "{what}");
    }
}

#[test]
fn filter_intersection_never_widens() {
    let cases: Vec<(ToolFilter, ToolFilter, Option<Vec<&str>>)> = vec![
        (
            ToolFilter::allow(["*"]),
            ToolFilter::allow(["read_file"]),
            Some(vec!["read_file"]),
        ),
        (
            ToolFilter::allow(["read_file"]),
            ToolFilter::allow(["*"]),
            Some(vec!["read_file"]),
        ),
        (
            ToolFilter::allow(["read_*"]),
            ToolFilter::allow(["*"]),
            Some(vec!["read_*"]),
        ),
        (
            ToolFilter::allow(["read_*"]),
            ToolFilter::allow(["*_file"]),
            Some(vec![]),
        ),
        (
            ToolFilter::allow(["a", "b"]),
            ToolFilter::allow(["b", "c"]),
            Some(vec!["b"]),
        ),
        (
            ToolFilter::allow(["a"]),
            ToolFilter::deny(["b"]),
            Some(vec!["a"]),
        ),
        (ToolFilter::deny(["a"]), ToolFilter::deny(["b"]), None),
    ];
    for (a, b, allow) in cases {
        let both = intersect_filters(&a, &b);
        let expected = allow.map(|list| list.into_iter().map(String::from).collect::<Vec<_>>());
        assert_eq!(both.allow, expected, "{a:?} ∩ {b:?}");
        for tool in ["read_file", "write_file", "a", "b", "c", "ls"] {
            if both.permits(tool) {
                assert!(
                    a.permits(tool) && b.permits(tool),
                    "{tool} widened by {a:?} ∩ {b:?}"
                );
            }
        }
    }
}

#[test]
fn settings_from_a_definition() {
    let mut definition = Definition::new("x", "d", "p");
    definition.model = Some("m".into());
    definition.tools = Some(vec!["Read".into()]);
    definition.permission_mode = Some(PermissionMode::DontAsk);
    definition.max_turns = Some(4);
    definition.isolation = Some(Isolation::Worktree);
    definition.effort = Some(subagent_core::Effort::High);
    definition.background = true;
    let settings = definition.settings();
    assert_eq!(
        settings,
        s().model("m")
            .effort(Effort::High)
            .tool_filter(ToolFilter::allow(["Read", "read_file"]))
            .permission_mode(PermissionMode::DontAsk)
            .max_turns(4)
            .isolation("worktree")
            .background(true)
    );
    assert_eq!(
        Definition::new("y", "d", "p").settings(),
        Settings::default()
    );
}
