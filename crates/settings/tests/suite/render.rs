//! What `subagent settings` prints, human and JSON.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::World;

fn world() -> World {
    let world = World::new();
    world.write(
        &world.project.join(".claude/settings.json"),
        &json!({
            "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}]},
            "model": "opus"
        }),
    );
    world.write(
        &world.home.join(".claude/settings.json"),
        &json!({"permissions": {"defaultMode": "acceptEdits"}, "env": {"CI": "1"}}),
    );
    world
}

#[test]
fn the_human_form_names_each_source() {
    let world = world();
    world.claude_trusts(&world.project, true);
    let settings = world.load();
    let project = world.project.display().to_string();
    let managed = world.managed().display().to_string();
    let expected = format!(
        "permissions
  mode   acceptEdits            user ~/.claude/settings.json
  deny   Read(./.env)           project .claude/settings.json
  allow  Bash(npm run test:*)   project .claude/settings.json
hooks
  PreToolUse Bash  ./guard.sh (timeout 5s)   project .claude/settings.json
env
  CI  1   user ~/.claude/settings.json
trust
  {project} is trusted by ~/.claude.json projects[{project:?}].hasTrustDialogAccepted
files read
  managed        {managed}   absent
  project-local  .subagents/settings.local.json{pad}   absent
  project-local  .claude/settings.local.json{pad2}   absent
  project        .subagents/settings.json{pad3}   absent
  project        .claude/settings.json{pad4}   read
  user           ~/.subagents/settings.json{pad5}   absent
  user           ~/.claude/settings.json{pad6}   read
  unknown key    model{pad7}   project .claude/settings.json (kept, ignored)
",
        pad = pad(&managed, ".subagents/settings.local.json"),
        pad2 = pad(&managed, ".claude/settings.local.json"),
        pad3 = pad(&managed, ".subagents/settings.json"),
        pad4 = pad(&managed, ".claude/settings.json"),
        pad5 = pad(&managed, "~/.subagents/settings.json"),
        pad6 = pad(&managed, "~/.claude/settings.json"),
        pad7 = pad(&managed, "model"),
    );
    assert_eq!(settings.render(), expected);
}

/// The spaces that align `shown` under the (longer) managed path.
fn pad(managed: &str, shown: &str) -> String {
    " ".repeat(
        managed
            .chars()
            .count()
            .saturating_sub(shown.chars().count()),
    )
}

#[test]
fn an_untrusted_project_says_so() {
    let world = world();
    let rendered = world.load().render();
    let project = world.project.display().to_string();
    assert!(
        rendered.contains(&format!(
            "  {project} is not trusted: its allow rules do not count (`subagent trust` records trust)\n"
        )),
        "{rendered}"
    );
    assert!(
        rendered.contains("  ignored  allow Bash(npm run test:*)   project .claude/settings.json (this workspace has not been trusted)\n"),
        "{rendered}"
    );
    assert!(
        rendered
            .contains("warnings\n  Ignoring 1 permissions.allow entry from .claude/settings.json"),
        "{rendered}"
    );
}

#[test]
fn the_json_form_keeps_every_source() {
    let world = world();
    world.claude_trusts(&world.project, true);
    let value = serde_json::to_value(world.load()).unwrap();
    let file = world
        .project
        .join(".claude/settings.json")
        .display()
        .to_string();
    assert_eq!(
        value["permissions"]["allow"],
        json!([{"value": "Bash(npm run test:*)", "scope": "project", "file": file}])
    );
    assert_eq!(
        value["permissions"]["default_mode"]["value"],
        json!("acceptEdits")
    );
    assert_eq!(
        value["hooks"]["PreToolUse"],
        json!([{"matcher": "Bash", "hooks": [{"command": "./guard.sh", "timeout": 5.0, "source": "project", "file": file}]}])
    );
    assert_eq!(value["trust"]["trusted"], json!(true));
    assert_eq!(value["env"]["CI"]["scope"], json!("user"));
}
