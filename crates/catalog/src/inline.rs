//! Definitions given on the command line as JSON, the way Claude Code's `--agents` flag takes
//! them: an object whose keys are agent names and whose values hold the frontmatter's fields
//! (`description`, `tools`, `model`, …) plus `prompt`, the body.
//!
//! The same decisions as for a file (see the `parse` module): a field this catalog does not know
//! is a warning and ignored, a known field with a bad value refuses the whole option, the
//! snake_case spellings are accepted, `null` is an absent field. A `name` field, when given,
//! must be the key.

use serde_json::{Map, Value};

use crate::definition::Definition;
use crate::location::Location;
use crate::parse::{
    FieldValue, Parsed, apply, canonical_field, check_name, closest_field, unsupported,
};
use crate::source::{Origin, Source};
use crate::warning::{Warning, WarningKind};
use crate::{Error, Result};

/// The largest value of the option read, in bytes (as a definition file's limit).
pub const MAX_INLINE_BYTES: usize = 1024 * 1024;

/// Parses the value of `option` (`--agents`): `{"name": {"description": …, "prompt": …}, …}`.
/// Each definition is in `source` with origin [`Origin::CommandLine`]; warnings name the option
/// and the agent.
pub fn parse_agents_json(option: &str, text: &str, source: Source) -> Result<Vec<Parsed>> {
    let invalid = |message: String| Error::CommandLine {
        option: option.to_owned(),
        message,
    };
    if text.len() > MAX_INLINE_BYTES {
        return Err(invalid(format!(
            "the value is larger than {MAX_INLINE_BYTES} bytes"
        )));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| invalid(format!("not JSON: {e} (expected {EXAMPLE})")))?;
    let Value::Object(agents) = value else {
        return Err(invalid(format!(
            "expected a JSON object of agent names, e.g. {EXAMPLE}"
        )));
    };
    agents
        .iter()
        .map(|(name, fields)| parse_one(option, name, fields, source))
        .collect()
}

const EXAMPLE: &str =
    r#"'{"reviewer": {"description": "Reviews code", "prompt": "You review code."}}'"#;

fn parse_one(option: &str, name: &str, fields: &Value, source: Source) -> Result<Parsed> {
    let invalid = |message: String| Error::CommandLine {
        option: option.to_owned(),
        message: format!("agent `{name}`: {message}"),
    };
    check_name(name).map_err(invalid)?;
    let empty = Map::new();
    let fields = match fields {
        Value::Object(fields) => fields,
        Value::Null => &empty,
        _ => {
            return Err(invalid(
                "expected an object of fields (description, prompt, tools, model, …)".into(),
            ));
        }
    };
    let mut definition = Definition {
        name: name.to_owned(),
        source,
        origin: Origin::CommandLine(option.to_owned()),
        ..Definition::default()
    };
    let mut warnings = Vec::new();
    let warn = |kind: WarningKind, message: String| {
        Warning::new(
            kind,
            option,
            Location::NONE,
            format!("agent `{name}`: {message}"),
        )
    };
    for (key, value) in fields {
        if key == "prompt" {
            if !value.is_null() {
                let Value::String(prompt) = value else {
                    return Err(invalid("`prompt`: expected text".into()));
                };
                definition.prompt = prompt.trim().to_owned();
            }
            continue;
        }
        let Some(field) = canonical_field(key) else {
            let hint = closest_field(key)
                .map(|known| format!(" (did you mean `{known}`?)"))
                .unwrap_or_default();
            warnings.push(warn(
                WarningKind::UnknownField,
                format!("unknown field `{key}` ignored{hint}"),
            ));
            continue;
        };
        if field == "name" {
            if value.as_str().is_some_and(|given| given != name) {
                return Err(invalid(format!(
                    "`name` is {value}, but the agent's name is its key"
                )));
            }
            continue;
        }
        let field_value = FieldValue {
            field,
            value,
            location: Location::NONE,
        };
        apply(&mut definition, &field_value)
            .map_err(|message| invalid(format!("`{field}`: {message}")))?;
        if let Some(message) = unsupported(&definition, field) {
            warnings.push(warn(WarningKind::UnsupportedField, message));
        }
    }
    if definition.description.trim().is_empty() {
        warnings.push(warn(
            WarningKind::MissingDescription,
            "no `description`: the model is not told when to use it".into(),
        ));
    }
    Ok(Parsed {
        definition,
        warnings,
    })
}
