//! Reading one skill: a folder's `SKILL.md`, its `---` frontmatter (YAML, with locations) and
//! its body.
//!
//! Decisions, for whoever writes a skill:
//! - The skill's name is its folder's (`.claude/skills/deploy/SKILL.md` → `deploy`), as Claude
//!   Code lists it; a frontmatter `name` that differs is also accepted in a `Skill` call.
//! - `description` is what the model is shown; without one, the body's first non-blank line
//!   stands in (as Claude Code does), and with neither the skill loads with a
//!   `MissingDescription` warning.
//! - `allowed-tools` (a comma-separated string or a list) is kept as written: a skill that names
//!   any needs permission to be loaded (see docs/skills.md).
//! - `disable-model-invocation: true` keeps the skill from the model (not listed, not loaded).
//! - A file without frontmatter is a skill whose body is the whole file. YAML that does not
//!   parse, or a known field with a value of the wrong shape, makes the skill invalid (an
//!   `Invalid` warning at its line and column; Claude Code loads such a file anyway, reading
//!   what it can): a skill that says which tools it needs and is half read would be worse than
//!   none.
//! - Other fields Claude Code knows are accepted; those that change how a skill runs
//!   (`context`, `agent`, `model`, `hooks`) are `UnsupportedField` warnings, unknown ones
//!   `UnknownField` warnings.

use std::path::{Path, PathBuf};

use serde_json::Value;
use subagent_core::skills::SkillSummary;

use crate::location::Location;
use crate::parse::{
    check_name, edit_distance, frontmatter_fields, split_frontmatter, yaml_location,
};
use crate::source::Source;
use crate::tools::split_tool_list;
use crate::warning::{Warning, WarningKind};
use crate::{Error, Result};

/// The file a skill folder holds.
pub const SKILL_FILE: &str = "SKILL.md";

/// The frontmatter fields of a skill this catalog acts on.
const FIELDS: [&str; 4] = [
    "name",
    "description",
    "allowed-tools",
    "disable-model-invocation",
];

/// Fields Claude Code knows that change nothing here (shown to a person, or for packaging).
const QUIET_FIELDS: [&str; 6] = [
    "argument-hint",
    "user-invocable",
    "when_to_use",
    "license",
    "version",
    "metadata",
];

/// Fields Claude Code honours that no run here acts on, and what the skill does without them.
const UNSUPPORTED_FIELDS: [(&str, &str); 4] = [
    (
        "context",
        "the skill runs in the conversation that loads it",
    ),
    ("agent", "the skill runs in the conversation that loads it"),
    (
        "model",
        "the skill runs on the model of the run that loads it",
    ),
    ("hooks", "the skill's hooks do not run"),
];

/// One skill as its `SKILL.md` declares it, and the warnings the file gave.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedSkill {
    /// What the model is shown before using it.
    pub summary: SkillSummary,
    /// Kept from the model (`disable-model-invocation: true`).
    pub hidden: bool,
    /// Problems that did not stop it from loading.
    pub warnings: Vec<Warning>,
}

/// Parses the text of `<dir>/SKILL.md` (`path`) of a skill folder `dir` in `source`.
pub fn parse_skill(path: &Path, text: &str, source: Source) -> Result<ParsedSkill> {
    let invalid = |location: Location, message: String| Error::Invalid {
        path: path.to_owned(),
        location,
        message,
    };
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    check_name(&name)
        .map_err(|message| invalid(Location::NONE, format!("skill folder: {message}")))?;
    let (yaml, body) = split_frontmatter(text).unwrap_or(("", text));
    let fields =
        frontmatter_fields(yaml).map_err(|(location, message)| invalid(location, message))?;
    let mut summary = SkillSummary {
        name,
        dir,
        source: source.as_str().to_owned(),
        ..SkillSummary::default()
    };
    let mut hidden = false;
    let mut warnings = Vec::new();
    for (key, value) in &fields {
        let key_location = yaml_location(key.referenced);
        let location = yaml_location(value.referenced);
        let value = &value.value;
        let field = key.value.as_str();
        let bad = |message: String| invalid(location, format!("`{field}`: {message}"));
        match field {
            "name" => {
                let alias = scalar(value).map_err(bad)?.trim().to_owned();
                if !alias.is_empty() && alias != summary.name {
                    summary.alias = Some(alias);
                }
            }
            "description" => summary.description = scalar(value).map_err(bad)?.trim().to_owned(),
            "allowed-tools" => summary.allowed_tools = tool_list(value).map_err(bad)?,
            "disable-model-invocation" => hidden = boolean(value).map_err(bad)?,
            _ if QUIET_FIELDS.contains(&field) => {}
            _ => {
                let message = match UNSUPPORTED_FIELDS.iter().find(|(f, _)| *f == field) {
                    Some((_, without)) => (
                        WarningKind::UnsupportedField,
                        format!("`{field}` is not supported: {without}"),
                    ),
                    None => (WarningKind::UnknownField, unknown(field)),
                };
                warnings.push(Warning::new(message.0, path, key_location, message.1));
            }
        }
    }
    if summary.description.is_empty() {
        summary.description = body
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or_default()
            .to_owned();
    }
    if summary.description.is_empty() {
        warnings.push(Warning::new(
            WarningKind::MissingDescription,
            path,
            Location::line(1),
            format!(
                "skill `{}` has no `description` and no body: the model is not told when to use it",
                summary.name
            ),
        ));
    }
    Ok(ParsedSkill {
        summary,
        hidden,
        warnings,
    })
}

/// The body of a `SKILL.md`: everything after the frontmatter, as written (the whole file when
/// it has none).
pub fn skill_body(text: &str) -> &str {
    split_frontmatter(text).map_or(text, |(_, body)| body)
}

/// The files of a skill folder other than its `SKILL.md`, relative to it, in path order;
/// hidden entries skipped, at most `limit` of them, and the walk stops there (a folder is
/// instructions and a few scripts, not a tree to walk without end).
pub fn skill_files(dir: &Path, limit: usize) -> Vec<PathBuf> {
    let mut files = Vec::new();
    walk_files(dir, dir, 0, limit, &mut files);
    files
}

fn walk_files(root: &Path, folder: &Path, depth: usize, limit: usize, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .map(|entry| entry.path())
        .collect();
    paths.sort();
    for path in paths {
        if files.len() >= limit {
            return;
        }
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() && depth + 1 < crate::MAX_DIR_DEPTH => {
                walk_files(root, &path, depth + 1, limit, files);
            }
            Ok(meta) if meta.is_file() => {
                if let Ok(relative) = path.strip_prefix(root)
                    && relative != Path::new(SKILL_FILE)
                {
                    files.push(relative.to_path_buf());
                }
            }
            _ => {}
        }
    }
}

fn unknown(field: &str) -> String {
    let closest = FIELDS
        .iter()
        .chain(QUIET_FIELDS.iter())
        .chain(UNSUPPORTED_FIELDS.iter().map(|(f, _)| f))
        .map(|known| (edit_distance(field, known), *known))
        .filter(|(distance, known)| *distance <= 2.max(known.len() / 5))
        .min()
        .map(|(_, known)| format!(" (did you mean `{known}`?)"))
        .unwrap_or_default();
    format!("unknown field `{field}` ignored{closest}")
}

fn scalar(value: &Value) -> std::result::Result<String, String> {
    match value {
        Value::Null => Ok(String::new()),
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) => Ok(number.to_string()),
        Value::Bool(flag) => Ok(flag.to_string()),
        _ => Err("expected text".to_owned()),
    }
}

fn boolean(value: &Value) -> std::result::Result<bool, String> {
    match value {
        Value::Null => Ok(false),
        Value::Bool(flag) => Ok(*flag),
        Value::String(text) if text.trim().eq_ignore_ascii_case("true") => Ok(true),
        Value::String(text) if text.trim().eq_ignore_ascii_case("false") => Ok(false),
        _ => Err("expected true or false".to_owned()),
    }
}

/// A comma-separated string (`Bash(git:*), Read`) or a list of tool names and rules.
fn tool_list(value: &Value) -> std::result::Result<Vec<String>, String> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::String(text) => Ok(split_tool_list(text)),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(name) => Ok(name.trim().to_owned()),
                _ => Err("expected a list of tool names".to_owned()),
            })
            .filter(|name| name.as_ref().map_or(true, |name| !name.is_empty()))
            .collect(),
        _ => Err("expected a list or a comma-separated string".to_owned()),
    }
}
