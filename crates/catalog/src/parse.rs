//! Reading one definition file: the `---` frontmatter (YAML, with locations) and the body.
//!
//! Decisions, for whoever writes a definition:
//! - A file must start with a `---` line and close the frontmatter with another `---` line;
//!   anything else is not a definition (an `Invalid` warning at line 1).
//! - A field this catalog does not know is ignored with an `UnknownField` warning at its line
//!   (naming the closest known field when there is one): Claude Code grows fields, and a file
//!   written for a newer version should still load. A *known* field with a bad value
//!   (`maxTurns: many`, `permissionMode: yolo`) makes the whole file invalid instead, because
//!   running it without the restriction its author asked for would be worse than not running it.
//! - A missing `name` is the file stem (`reviewer.md` → `reviewer`), silently. A missing
//!   `description` loads with a `MissingDescription` warning.
//! - Field names are Claude Code's camelCase; the snake_case spellings (`max_turns`,
//!   `disallowed_tools`, …) are accepted too. A `null` value is the same as an absent field.

use std::path::Path;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_saphyr::{MessageFormatter, Spanned, UserMessageFormatter};
use subagent_core::memory::MemoryScope;
use subagent_core::{Effort, PermissionMode};

use crate::definition::{Definition, Isolation};
use crate::location::Location;
use crate::source::{Origin, Source};
use crate::tools::{dedup, split_tool_list};
use crate::warning::{Warning, WarningKind};
use crate::{Error, Result};

/// Files larger than this are refused (a definition is a prompt, not a data set); reading stops
/// after it, whatever size the file claims.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Longest accepted agent name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// A definition and the warnings its file produced (unknown fields, a missing description).
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The definition.
    pub definition: Definition,
    /// Problems that did not stop it from loading.
    pub warnings: Vec<Warning>,
}

/// The frontmatter fields, as Claude Code spells them (ours: `provider`, `persona`,
/// `maxTokensBudget`).
pub const KNOWN_FIELDS: [&str; 19] = [
    "name",
    "description",
    "tools",
    "disallowedTools",
    "model",
    "maxTurns",
    "permissionMode",
    "background",
    "isolation",
    "color",
    "initialPrompt",
    "skills",
    "mcpServers",
    "effort",
    "memory",
    "hooks",
    "provider",
    "persona",
    "maxTokensBudget",
];

/// Reads and parses one file.
pub fn load_file(path: &Path, source: Source) -> Result<Parsed> {
    parse_definition(path, &read_text(path)?, source)
}

/// Reads a definition file's text: a regular file of at most [`MAX_FILE_BYTES`], UTF-8.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let io = |message: String| Error::Io {
        path: path.to_owned(),
        message,
    };
    // Bounded by the bytes read and refusing FIFOs and devices (a cloned project may link
    // `.claude/agents/x.md` to `/dev/zero`).
    let bytes = subagent_session::read_user_file(path, MAX_FILE_BYTES).map_err(|e| {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            io(format!(
                "{e} (a definition may have at most {MAX_FILE_BYTES} bytes)"
            ))
        } else {
            io(e.to_string())
        }
    })?;
    String::from_utf8(bytes).map_err(|_| io("not UTF-8 text".into()))
}

/// The name a definition's text declares on a `name:` line of its frontmatter (quotes
/// removed), read line by line so that it is found in a file whose YAML does not parse.
pub(crate) fn declared_name(text: &str) -> Option<String> {
    let (yaml, _) = split_frontmatter(text)?;
    yaml.lines().find_map(|line| {
        let value = line.strip_prefix("name:")?.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value)
            .trim();
        (!value.is_empty()).then(|| value.to_owned())
    })
}

/// Parses the text of a definition file. `path` names the file in errors and warnings and gives
/// the default name (its stem); nothing is read from it.
pub fn parse_definition(path: &Path, text: &str, source: Source) -> Result<Parsed> {
    let invalid = |location: Location, message: String| Error::Invalid {
        path: path.to_owned(),
        location,
        message,
    };
    let (yaml, body) = split_frontmatter(text).ok_or_else(|| {
        invalid(
            Location::line(1),
            "no frontmatter: a definition starts with a `---` line, then YAML fields, then \
             another `---` line"
                .into(),
        )
    })?;
    let fields =
        frontmatter_fields(yaml).map_err(|(location, message)| invalid(location, message))?;

    let mut definition = Definition {
        prompt: body.trim().to_owned(),
        source,
        origin: Origin::File(path.to_owned()),
        ..Definition::default()
    };
    let mut warnings = Vec::new();
    let mut name_location = Location::line(1);
    let mut seen: Vec<&'static str> = Vec::new();
    for (key, value) in &fields {
        let key_location = yaml_location(key.referenced);
        let Some(field) = canonical_field(&key.value) else {
            let hint = closest_field(&key.value)
                .map(|known| format!(" (did you mean `{known}`?)"))
                .unwrap_or_default();
            warnings.push(Warning::new(
                WarningKind::UnknownField,
                path,
                key_location,
                format!("unknown field `{}` ignored{hint}", key.value),
            ));
            continue;
        };
        if seen.contains(&field) {
            return Err(invalid(
                key_location,
                format!("field `{field}` is given twice (as `{}`)", key.value),
            ));
        }
        seen.push(field);
        let field_value = FieldValue {
            field,
            value: &value.value,
            location: yaml_location(value.referenced),
        };
        apply(&mut definition, &field_value)
            .map_err(|message| invalid(field_value.location, format!("`{field}`: {message}")))?;
        if field == "name" {
            name_location = field_value.location;
        }
        if let Some(message) = unsupported(&definition, field) {
            warnings.push(Warning::new(
                WarningKind::UnsupportedField,
                path,
                key_location,
                message,
            ));
        }
        definition.locations.push((field, key_location));
    }

    if definition.name.is_empty() {
        definition.name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    check_name(&definition.name).map_err(|message| invalid(name_location, message))?;
    if definition.description.trim().is_empty() {
        warnings.push(Warning::new(
            WarningKind::MissingDescription,
            path,
            Location::line(1),
            format!(
                "agent `{}` has no `description`: the model is not told when to use it",
                definition.name
            ),
        ));
    }
    Ok(Parsed {
        definition,
        warnings,
    })
}

/// Splits `---\nyaml\n---\nbody` into the YAML and the body. `None` when the text does not
/// start with a `---` line or the frontmatter is never closed.
pub(crate) fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    for line in lines {
        if line.trim_end() == "---" {
            return Some((&text[yaml_start..offset], &text[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// A location in the frontmatter's YAML as a location in the file (the YAML starts on line 2).
pub(crate) fn yaml_location(location: serde_saphyr::Location) -> Location {
    let line = u32::try_from(location.line()).ok().filter(|&l| l > 0);
    let column = u32::try_from(location.column()).ok().filter(|&c| c > 0);
    Location {
        line: line.map(|l| l.saturating_add(1)),
        column: line.and(column),
    }
}

/// The known field a key spells (camelCase or snake_case).
pub(crate) fn canonical_field(key: &str) -> Option<&'static str> {
    let normalized: String = key.chars().filter(|c| *c != '_').collect();
    KNOWN_FIELDS.iter().copied().find(|known| {
        *known == key || (key.contains('_') && known.eq_ignore_ascii_case(&normalized))
    })
}

/// The known field closest to a misspelled key, if it is close enough to be a typo.
pub(crate) fn closest_field(key: &str) -> Option<&'static str> {
    let key = key.to_ascii_lowercase().replace(['_', '-'], "");
    KNOWN_FIELDS
        .iter()
        .map(|known| (edit_distance(&key, &known.to_ascii_lowercase()), *known))
        .filter(|(distance, known)| *distance <= 2.max(known.len() / 5))
        .min()
        .map(|(_, known)| known)
}

/// The edit distance between two strings, in characters: insertions, deletions, substitutions
/// and swaps of two neighbours (`raed` → `read` is one edit), each counting one.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut before: Vec<usize> = Vec::new();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 0..a.len() {
        let mut current = vec![i + 1];
        for j in 0..b.len() {
            let substitution = previous[j] + usize::from(a[i] != b[j]);
            let mut best = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                best = best.min(before[j - 1] + 1);
            }
            current.push(best);
        }
        before = std::mem::replace(&mut previous, current);
    }
    previous[b.len()]
}

/// Agent names: letters, digits, `-`, `_`, `.` and `:` (plugins use `plugin:agent`), at most
/// [`MAX_NAME_CHARS`]; the model writes them in `subagent_type`.
pub(crate) fn check_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty() {
        return Err("the agent name is empty".into());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "agent name `{name}` is longer than {MAX_NAME_CHARS} characters"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':')))
    {
        return Err(format!(
            "agent name `{name}` contains {bad:?}; use letters, digits, `-`, `_`, `.` or `:`"
        ));
    }
    Ok(())
}

pub(crate) struct FieldValue<'a> {
    pub(crate) field: &'static str,
    pub(crate) value: &'a Value,
    pub(crate) location: Location,
}

/// Sets one field of the definition; `Err` says what is wrong with the value.
pub(crate) fn apply(
    definition: &mut Definition,
    field: &FieldValue<'_>,
) -> std::result::Result<(), String> {
    let value = field.value;
    if value.is_null() {
        return Ok(());
    }
    match field.field {
        "name" => definition.name = text(value)?.trim().to_owned(),
        "description" => definition.description = text(value)?.trim().to_owned(),
        "tools" => definition.tools = Some(list(value)?),
        "disallowedTools" => definition.disallowed_tools = list(value)?,
        "skills" => definition.skills = list(value)?,
        "model" => {
            let model = text(value)?.trim().to_owned();
            definition.model =
                (!model.is_empty() && !model.eq_ignore_ascii_case("inherit")).then_some(model);
        }
        "maxTurns" => definition.max_turns = Some(positive(value)?),
        "maxTokensBudget" => definition.max_tokens_budget = Some(positive_u64(value)?),
        "permissionMode" => {
            let mode = text(value)?;
            definition.permission_mode =
                Some(PermissionMode::parse(mode.trim()).ok_or_else(|| {
                    format!(
                        "unknown permission mode {mode:?}; expected one of {}",
                        PermissionMode::valid_spellings()
                    )
                })?);
        }
        "background" => definition.background = boolean(value)?,
        "isolation" => {
            let isolation = text(value)?;
            definition.isolation = match isolation.trim() {
                "" | "none" => None,
                other => Some(Isolation::parse(other).ok_or_else(|| {
                    format!("unknown isolation {isolation:?}; expected worktree or remote")
                })?),
            };
        }
        "provider" => definition.provider = non_blank(text(value)?),
        "persona" => definition.persona = non_blank(text(value)?),
        "effort" => {
            let effort = text(value)?;
            definition.effort = match non_blank(effort.clone()) {
                None => None,
                Some(name) => Some(Effort::parse(&name).ok_or_else(|| {
                    format!(
                        "unknown effort {effort:?}; expected one of {}",
                        Effort::valid()
                    )
                })?),
            };
        }
        "color" => definition.color = non_blank(text(value)?),
        "initialPrompt" => definition.initial_prompt = non_blank(text(value)?),
        "memory" => {
            let scope = text(value)?;
            definition.memory = match non_blank(scope.clone()) {
                None => None,
                Some(name) => Some(MemoryScope::parse(name.trim()).ok_or_else(|| {
                    format!("unknown memory scope {scope:?}; expected user, project or local")
                })?),
            };
        }
        "mcpServers" => {
            definition.mcp_servers = subagent_core::mcp::AgentMcpServer::list(value)?;
        }
        "hooks" => definition.hooks = Some(value.clone()),
        _ => {}
    }
    Ok(())
}

/// What a field Claude Code honours, and this catalog reads but no provider acts on, means for
/// the agent: `None` when the field is not one of those, or asks for nothing (blank, empty).
pub(crate) fn unsupported(definition: &Definition, field: &str) -> Option<String> {
    let asks = |value: &Option<Value>| {
        value.as_ref().is_some_and(|value| match value {
            Value::Null => false,
            Value::Object(map) => !map.is_empty(),
            Value::Array(items) => !items.is_empty(),
            Value::String(text) => !text.trim().is_empty(),
            _ => true,
        })
    };
    let consequence = match field {
        "initialPrompt" if definition.initial_prompt.is_some() => {
            "the task given to the agent is its first message"
        }
        "hooks" if asks(&definition.hooks) => {
            return Some(
                "`hooks` run only where the agent runs in process (spawn): on a claude-code, \
                 codex, acp, a2a or nats provider it runs without them"
                    .to_owned(),
            );
        }
        "isolation" if definition.isolation == Some(Isolation::Remote) => {
            return Some(
                "`isolation: remote` is not supported (only `worktree` is): starting this agent \
                 is refused"
                    .to_owned(),
            );
        }
        _ => return None,
    };
    Some(format!("`{field}` is not supported: {consequence}"))
}

fn non_blank(text: String) -> Option<String> {
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// A scalar as text (numbers and booleans are written back as they read).
fn text(value: &Value) -> std::result::Result<String, String> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) => Ok(number.to_string()),
        Value::Bool(flag) => Ok(flag.to_string()),
        other => Err(format!("expected text, found {}", kind(other))),
    }
}

/// A YAML list of names or a comma-separated string.
fn list(value: &Value) -> std::result::Result<Vec<String>, String> {
    match value {
        Value::String(text) => Ok(split_tool_list(text)),
        Value::Array(items) => {
            let names = items
                .iter()
                .map(|item| match item {
                    Value::String(_) | Value::Number(_) | Value::Bool(_) => text(item),
                    other => Err(format!(
                        "expected a list of names, found {} in the list",
                        kind(other)
                    )),
                })
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Ok(dedup(
                names
                    .iter()
                    .map(|name| name.trim())
                    .filter(|name| !name.is_empty()),
            ))
        }
        other => Err(format!(
            "expected a list or a comma-separated string, found {}",
            kind(other)
        )),
    }
}

fn positive(value: &Value) -> std::result::Result<u32, String> {
    let number = match value {
        Value::Number(number) => number.as_u64(),
        Value::String(text) => text.trim().parse::<u64>().ok(),
        _ => None,
    };
    match number.map(u32::try_from) {
        Some(Ok(n)) if n > 0 => Ok(n),
        _ => Err(format!(
            "expected a whole number from 1 to {}, found {}",
            u32::MAX,
            shown(value)
        )),
    }
}

fn positive_u64(value: &Value) -> std::result::Result<u64, String> {
    let number = match value {
        Value::Number(number) => number.as_u64(),
        Value::String(text) => text.trim().parse::<u64>().ok(),
        _ => None,
    };
    match number {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "expected a whole number of tokens, 1 or more, found {}",
            shown(value)
        )),
    }
}

fn boolean(value: &Value) -> std::result::Result<bool, String> {
    match value {
        Value::Bool(flag) => Ok(*flag),
        Value::String(text) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Ok(true),
            "false" | "no" | "off" => Ok(false),
            _ => Err(format!("expected true or false, found {text:?}")),
        },
        other => Err(format!("expected true or false, found {}", shown(other))),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn shown(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Object(_) => kind(value).to_owned(),
        other => other.to_string(),
    }
}

/// The frontmatter's top-level entries in file order, keys and values with their locations.
/// One frontmatter field: its key and its value, each with where it is written.
pub(crate) type Field = (Spanned<String>, Spanned<Value>);

/// The fields of a frontmatter's YAML, in order (none when it is blank); YAML that does not
/// parse is where it fails and why.
pub(crate) fn frontmatter_fields(
    yaml: &str,
) -> std::result::Result<Vec<Field>, (Location, String)> {
    if yaml.trim().is_empty() {
        return Ok(Vec::new());
    }
    serde_saphyr::from_str::<Fields>(yaml)
        .map(|fields| fields.0)
        .map_err(|e| {
            let location = e.location().map_or(Location::NONE, yaml_location);
            let message = UserMessageFormatter.format_message(&e).into_owned();
            (location, format!("invalid frontmatter: {message}"))
        })
}

pub(crate) struct Fields(pub(crate) Vec<Field>);

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct FieldsVisitor;

        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a mapping of fields (`name: …`)")
            }

            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Fields, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Fields(entries))
            }
        }

        deserializer.deserialize_map(FieldsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_split() {
        assert_eq!(
            split_frontmatter("---\na: 1\n---\nbody\n"),
            Some(("a: 1\n", "body\n"))
        );
        assert_eq!(
            split_frontmatter("---\r\na: 1\r\n---\r\nbody"),
            Some(("a: 1\r\n", "body"))
        );
        assert_eq!(split_frontmatter("\u{feff}---\n---"), Some(("", "")));
        assert_eq!(split_frontmatter("# title\n---\n"), None);
        assert_eq!(split_frontmatter("---\na: 1\n"), None);
    }

    #[test]
    fn typo_suggestions() {
        assert_eq!(closest_field("tool"), Some("tools"));
        assert_eq!(closest_field("disallowedTool"), Some("disallowedTools"));
        assert_eq!(closest_field("max-turns"), Some("maxTurns"));
        assert_eq!(edit_distance("raed", "read"), 1, "a swap is one edit");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("ca", "abc"), 3);
        assert_eq!(closest_field("temperature"), None);
        assert_eq!(canonical_field("max_turns"), Some("maxTurns"));
        assert_eq!(canonical_field("maxturns"), None);
    }
}
