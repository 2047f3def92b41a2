//! `docs/scenarios.md` holds: its scenario files parse, and its walk-through runs as it says.

use pretty_assertions::assert_eq;
use subagent_test_support::Scenarios;

use super::support::{fenced_blocks, root, stderr, stdout, subagent};

fn page() -> String {
    std::fs::read_to_string(root().join("docs/scenarios.md")).unwrap()
}

/// The fenced blocks of the page whose info string is `info`, without their fences.
fn blocks(text: &str, info: &str) -> Vec<String> {
    fenced_blocks(text, |this| this == info)
}

#[test]
fn every_scenario_on_the_page_parses() {
    let scenarios = blocks(&page(), "yaml scenario");
    assert_eq!(scenarios.len(), 2);
    for text in &scenarios {
        if let Err(error) = Scenarios::from_yaml(text) {
            panic!("{error}:\n{text}");
        }
    }
}

#[test]
fn the_walk_through_runs_as_the_page_says() {
    let page = page();
    let command = "subagent run --offline --preset preset.yaml \"What do the notes say?\"";
    let answer = "A subagent read them: remember the milk.";
    let child_line = "[general-purpose …] tool read_file {\"path\":\"notes.txt\"}";
    for said in [command, answer, child_line] {
        assert!(page.contains(said), "the page no longer says {said}");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("scenarios.yaml"),
        &blocks(&page, "yaml scenario")[0],
    )
    .unwrap();
    let presets = blocks(&page, "yaml preset");
    assert_eq!(presets.len(), 1);
    std::fs::write(dir.path().join("preset.yaml"), &presets[0]).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the milk\n").unwrap();
    let output = subagent(dir.path())
        .args([
            "run",
            "--offline",
            "--preset",
            "preset.yaml",
            "What do the notes say?",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), format!("{answer}\n"));
    let err = stderr(&output);
    let (tag, call) = child_line.split_once(" …] ").unwrap();
    assert!(
        err.lines()
            .any(|line| line.starts_with(&format!("{tag} ")) && line.ends_with(call)),
        "{err}"
    );
}
