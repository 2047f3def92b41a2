//! Skills: `SKILL.md` folders of the user and the project, ranked as Claude Code ranks them,
//! listed with their descriptions, their bodies read only when loaded.

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use subagent_catalog::{Skills, WarningKind, standard_skill_dirs};
use subagent_core::ErrorCode;
use subagent_core::skills::SkillDirectory;

use super::support::{shown, write};

/// A home and a project below one temp dir.
fn layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let project = root.path().join("project");
    (root, home, project)
}

fn skill(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}")
}

#[test]
fn the_users_skill_wins_over_the_projects_and_the_users_are_listed_first() {
    let (root, home, project) = layout();
    write(
        &home,
        ".claude/skills/greet/SKILL.md",
        &skill("greet", "user greet", "USER\n"),
    );
    write(
        &home,
        ".claude/skills/zeta/SKILL.md",
        &skill("zeta", "z", "Z\n"),
    );
    write(
        &project,
        ".claude/skills/greet/SKILL.md",
        &skill("greet", "project greet", "P\n"),
    );
    write(
        &project,
        ".claude/skills/alpha/SKILL.md",
        &skill("alpha", "a", "A\n"),
    );
    // A twin in our own directory comes first within its source; the other is reported.
    write(
        &project,
        ".subagents/skills/alpha/SKILL.md",
        &skill("alpha", "ours", "O\n"),
    );
    let skills = Skills::load(standard_skill_dirs(Some(&home), Some(&project)));
    let listed: Vec<(String, String, String)> = skills
        .skills()
        .into_iter()
        .map(|s| (s.name, s.description, s.source))
        .collect();
    let row = |n: &str, d: &str, s: &str| (n.to_owned(), d.to_owned(), s.to_owned());
    assert_eq!(
        listed,
        vec![
            row("greet", "user greet", "user"),
            row("zeta", "z", "user"),
            row("alpha", "ours", "project"),
        ]
    );
    let greet = skills
        .entries()
        .into_iter()
        .find(|e| e.summary.name == "greet")
        .unwrap();
    assert_eq!(greet.overridden, vec![project.join(".claude/skills/greet")]);
    assert_eq!(
        shown(&skills.warnings(), root.path()),
        vec![format!(
            "<root>/project/.claude/skills/alpha/SKILL.md: skill `alpha` is defined twice in the project source: <root>/project/.subagents/skills/alpha and <root>/project/.claude/skills/alpha; using <root>/project/.subagents/skills/alpha"
        )]
    );
}

#[test]
fn a_skill_is_named_by_its_folder_and_answers_to_its_frontmatter_name() {
    let (_root, home, project) = layout();
    write(
        &project,
        ".claude/skills/dirname/SKILL.md",
        &skill("othername", "named otherwise", "OTHER\n"),
    );
    // No frontmatter: the body's first line is the description.
    write(
        &project,
        ".claude/skills/bare/SKILL.md",
        "\nFirst line here\nsecond\n",
    );
    let skills = Skills::load(standard_skill_dirs(Some(&home), Some(&project)));
    let listed: Vec<(String, Option<String>, String)> = skills
        .skills()
        .into_iter()
        .map(|s| (s.name, s.alias, s.description))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("bare".into(), None, "First line here".into()),
            (
                "dirname".into(),
                Some("othername".into()),
                "named otherwise".into()
            ),
        ]
    );
    assert_eq!(skills.load("othername").unwrap().body, "OTHER\n");
    assert_eq!(skills.load("dirname").unwrap().body, "OTHER\n");
    assert_eq!(
        skills.load("bare").unwrap().body,
        "\nFirst line here\nsecond\n"
    );
}

#[test]
fn the_body_is_read_when_loaded_with_the_folders_other_files() {
    let (_root, home, project) = layout();
    let file = write(
        &project,
        ".claude/skills/greet/SKILL.md",
        "---\nname: greet\ndescription: Greets.\nallowed-tools: Bash(touch:*), Read\n---\n# Greeting\n\nSay hi.\n",
    );
    write(
        &project,
        ".claude/skills/greet/scripts/hello.sh",
        "echo hi\n",
    );
    write(&project, ".claude/skills/greet/REFERENCE.md", "ref\n");
    write(&project, ".claude/skills/greet/.hidden", "no\n");
    let skills = Skills::load(standard_skill_dirs(Some(&home), Some(&project)));
    let listed = skills.skills();
    assert_eq!(listed[0].allowed_tools, vec!["Bash(touch:*)", "Read"]);
    // Listing read the frontmatter; the body is read again when the skill is used.
    std::fs::write(
        &file,
        "---\nname: greet\ndescription: Greets.\n---\n# Greeting\n\nSay hello.\n",
    )
    .unwrap();
    let loaded = skills.load("greet").unwrap();
    assert_eq!(loaded.body, "# Greeting\n\nSay hello.\n");
    assert_eq!(
        loaded.files,
        vec![
            PathBuf::from("REFERENCE.md"),
            PathBuf::from("scripts/hello.sh")
        ]
    );
    assert_eq!(loaded.summary.dir, project.join(".claude/skills/greet"));
}

#[test]
fn a_skill_that_does_not_parse_is_a_warning_at_its_place_and_a_code_when_called() {
    let (root, home, project) = layout();
    write(
        &project,
        ".claude/skills/broken/SKILL.md",
        "---\nname: broken\ndescription: [unclosed\n---\nBAD\n",
    );
    write(
        &project,
        ".claude/skills/typo/SKILL.md",
        "---\ndescription: d\nallowed_tools: Read\ncontext: fork\n---\nT\n",
    );
    write(
        &project,
        ".claude/skills/hidden/SKILL.md",
        "---\ndescription: d\ndisable-model-invocation: true\n---\nH\n",
    );
    let skills = Skills::load(standard_skill_dirs(Some(&home), Some(&project)));
    let warnings = skills.warnings();
    let kinds: Vec<WarningKind> = warnings.iter().map(|w| w.kind).collect();
    assert_eq!(
        kinds,
        vec![
            WarningKind::Invalid,
            WarningKind::UnknownField,
            WarningKind::UnsupportedField
        ]
    );
    let shown = shown(&warnings, root.path());
    assert!(
        shown[0]
            .starts_with("<root>/project/.claude/skills/broken/SKILL.md:3:14: invalid frontmatter"),
        "{shown:?}"
    );
    assert_eq!(
        shown[1..],
        [
            "<root>/project/.claude/skills/typo/SKILL.md:3:1: unknown field `allowed_tools` ignored (did you mean `allowed-tools`?)".to_owned(),
            "<root>/project/.claude/skills/typo/SKILL.md:4:1: `context` is not supported: the skill runs in the conversation that loads it".to_owned(),
        ]
    );
    // A hidden skill is not the model's; a broken one says why it is not there.
    let names: Vec<String> = skills.skills().into_iter().map(|s| s.name).collect();
    assert_eq!(names, vec!["typo"]);
    let error = skills.load("broken").unwrap_err();
    assert_eq!(error.code(), ErrorCode::UnknownSkill);
    assert!(error.to_string().contains("SKILL.md:3:14"), "{error}");
    let error = skills.load("hidden").unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown skill \"hidden\" (available: \"typo\")"
    );
}

#[test]
fn a_home_that_is_the_project_counts_its_skills_once() {
    let (_root, home, _project) = layout();
    write(
        &home,
        ".claude/skills/greet/SKILL.md",
        &skill("greet", "g", "G\n"),
    );
    let skills = Skills::load(standard_skill_dirs(Some(&home), Some(&home)));
    let entries = skills.entries();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].summary.source, "user");
    assert!(entries[0].overridden.is_empty());
    assert_eq!(skills.warnings(), vec![]);
}
