//! Reading YAML: budgets against hostile input, errors with positions, and an index of key
//! paths by position (which also checks every `${VAR}` reference where it is written).

use serde_saphyr::granit_parser::{ErrorKind, Event, Parser, Scanner, StrInput};
use serde_saphyr::{Budget, MessageFormatter};

use crate::format::Document;
use crate::vars::{self, VarError};
use crate::{Env, Position};

/// Parser options: strict booleans, duplicate keys refused, and budgets small enough that a
/// preset (at most [`crate::MAX_PRESET_BYTES`]) cannot make the parser do much work.
fn options() -> serde_saphyr::Options {
    let mut budget = Budget::default();
    budget.max_events = 200_000;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    budget.max_nodes = 100_000;
    budget.max_depth = 64;
    budget.max_documents = 1;
    budget.max_total_scalar_bytes = 4 * crate::MAX_PRESET_BYTES;
    budget.max_recorded_anchor_events = 100_000;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = 10_000;
    options.alias_limits.max_replay_stack_depth = 16;
    options.alias_limits.max_alias_expansions_per_anchor = 1_000;
    options.with_snippet = false;
    options.strict_booleans = true;
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    options
}

/// A deserialization failure, before it is given a file and key.
pub(crate) struct YamlFailure {
    pub position: Position,
    pub message: String,
    pub budget: bool,
}

/// Deserializes the document.
pub(crate) fn document(text: &str) -> Result<Document, YamlFailure> {
    serde_saphyr::from_str_with_options(text, options()).map_err(|error| {
        let original = original(&error);
        let position = error
            .location()
            .map(|location| {
                Position::new(
                    u32::try_from(location.line()).unwrap_or(u32::MAX),
                    u32::try_from(location.column()).unwrap_or(u32::MAX),
                )
            })
            .unwrap_or_default();
        let budget = matches!(
            original,
            serde_saphyr::Error::Budget { .. }
                | serde_saphyr::Error::AliasReplayLimitExceeded { .. }
                | serde_saphyr::Error::AliasExpansionLimitExceeded { .. }
                | serde_saphyr::Error::AliasReplayStackDepthExceeded { .. }
                | serde_saphyr::Error::AliasReplayCounterOverflow { .. }
        );
        let mut message = serde_saphyr::DefaultMessageFormatter
            .format_message(original)
            .into_owned();
        // Advice meant for the developer using the parser, not for the preset's author.
        if let Some(cut) = message.find(", set DuplicateKeyPolicy") {
            message.truncate(cut);
        }
        let (position, message) = if budget {
            (position, message)
        } else {
            in_flow(text, position, message)
        };
        YamlFailure {
            position,
            message,
            budget,
        }
    })
}

/// A syntax error inside a `{…}` or `[…]`, said where it goes wrong: an unquoted `${…}` (whose
/// braces YAML reads as its own) at the reference, with the quoted spelling that works; a
/// collection opened on an earlier line and not closed where the parser expected, at its
/// opening (the parser only notices lines later). Other errors are left as they are.
fn in_flow(text: &str, position: Position, message: String) -> (Position, String) {
    if let Some(reference) = unquoted_reference(text, position) {
        return (
            Position::new(position.line, position.column.saturating_sub(1)),
            format!(
                "inside a `{{…}}` or `[…]`, a `${{…}}` reference must be quoted: write \"{reference}\" (the parser: {message})"
            ),
        );
    }
    match unclosed_flow(text, position) {
        Some((opening, open)) if opening.line < position.line => {
            let close = if open == '[' { ']' } else { '}' };
            (
                opening,
                format!(
                    "this `{open}` is not closed: add the missing `{close}` (or a missing `,` between its entries); the parser stopped at {position}: {message}"
                ),
            )
        }
        _ => (position, message),
    }
}

/// The line `line` (1-based) of `text`.
fn line_of(text: &str, line: u32) -> Option<&str> {
    text.lines()
        .nth(usize::try_from(line).ok()?.checked_sub(1)?)
}

/// The `${…}` reference whose `{` is at `position`, when the parser stopped there.
fn unquoted_reference(text: &str, position: Position) -> Option<String> {
    let line = line_of(text, position.line)?;
    let column = usize::try_from(position.column).ok()?;
    let before: String = line.chars().take(column.checked_sub(1)?).collect();
    let rest: String = line.chars().skip(column - 1).collect();
    if !before.ends_with('$') || !rest.starts_with('{') {
        return None;
    }
    let end = rest.find('}')?;
    Some(format!("${}", &rest[..=end]))
}

/// The byte offset of `position` in `text`.
fn offset(text: &str, position: Position) -> Option<usize> {
    let line = usize::try_from(position.line).ok()?.checked_sub(1)?;
    let column = usize::try_from(position.column).ok()?.checked_sub(1)?;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let within: usize = text
        .get(start..)?
        .chars()
        .take(column)
        .map(char::len_utf8)
        .sum();
    Some(start + within)
}

/// The innermost `{…}` or `[…]` still open where the parser failed (`failed`): where it opens,
/// and its bracket. The scanner names it when the text stops there (the parser, which reads
/// ahead, only notices later).
fn unclosed_flow(text: &str, failed: Position) -> Option<(Position, char)> {
    let prefix = text.get(..offset(text, failed)?)?;
    let error = Scanner::new(StrInput::new(prefix)).find_map(Result::err)?;
    match error.kind() {
        ErrorKind::UnclosedFlowCollection { open } => {
            let marker = error.marker();
            Some((
                Position::new(
                    u32::try_from(marker.line()).unwrap_or(u32::MAX),
                    u32::try_from(marker.col() + 1).unwrap_or(u32::MAX),
                ),
                *open,
            ))
        }
        _ => None,
    }
}

fn original(mut error: &serde_saphyr::Error) -> &serde_saphyr::Error {
    loop {
        match error {
            serde_saphyr::Error::WithSnippet { error: inner, .. }
            | serde_saphyr::Error::AliasError { error: inner, .. } => error = inner,
            other => return other,
        }
    }
}

/// Key paths by the position where their node starts, in document order.
#[derive(Debug, Default)]
pub(crate) struct Index {
    nodes: Vec<(Position, String)>,
}

impl Index {
    /// The key path of the innermost node starting at or before `position`.
    pub(crate) fn key_at(&self, position: Position) -> String {
        let end = self.nodes.partition_point(|(at, _)| *at <= position);
        end.checked_sub(1)
            .and_then(|i| self.nodes.get(i))
            .map(|(_, key)| key.clone())
            .unwrap_or_default()
    }

    /// Where the node with this key path starts (its key, for a mapping value).
    pub(crate) fn position_of(&self, key: &str) -> Option<Position> {
        self.nodes
            .iter()
            .find(|(_, path)| path == key)
            .map(|(at, _)| *at)
    }
}

/// A `${VAR}` reference that failed, where it is written.
pub(crate) struct VarFailure {
    pub position: Position,
    pub key: String,
    pub error: VarError,
}

enum Frame {
    Mapping { path: String, key: Option<String> },
    Sequence { path: String, next: usize },
}

fn child(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// Walks the events of `text` (already accepted by [`document`], so within budget) and records
/// the key path of every node. With `env`, every `${…}` in a value scalar is checked and the
/// first failure returned.
pub(crate) fn index(text: &str, env: Option<&Env>) -> Result<Index, VarFailure> {
    let mut index = Index::default();
    let mut stack: Vec<Frame> = Vec::new();
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else { break };
        let position = Position::new(
            u32::try_from(span.start.line()).unwrap_or(u32::MAX),
            u32::try_from(span.start.col() + 1).unwrap_or(u32::MAX),
        );
        let (is_node, scalar, opens_mapping, opens_sequence) = match &event {
            Event::Scalar(value, ..) => (true, Some(value.as_ref()), false, false),
            Event::Alias(_) => (true, None, false, false),
            Event::MappingStart(..) => (true, None, true, false),
            Event::SequenceStart(..) => (true, None, false, true),
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                continue;
            }
            _ => continue,
        };
        if !is_node {
            continue;
        }
        let mut is_key = false;
        let path = match stack.last_mut() {
            None => String::new(),
            Some(Frame::Sequence { path, next }) => {
                let item = format!("{path}[{next}]");
                *next += 1;
                item
            }
            Some(Frame::Mapping { path, key }) => match key.take() {
                // A value: the key path was recorded at the key.
                Some(name) => child(path, &name),
                None => {
                    is_key = true;
                    let name = scalar.unwrap_or("?").to_owned();
                    let full = child(path, &name);
                    *key = Some(name);
                    full
                }
            },
        };
        if let (Some(env), Some(value), false) = (env, scalar, is_key)
            && vars::has_reference(value)
            && let Err(error) = vars::expand(value, env)
        {
            return Err(VarFailure {
                position,
                key: path,
                error,
            });
        }
        if !is_key || index.nodes.last().is_none_or(|(_, last)| *last != path) {
            index.nodes.push((position, path.clone()));
        }
        if opens_mapping {
            stack.push(Frame::Mapping { path, key: None });
        } else if opens_sequence {
            stack.push(Frame::Sequence { path, next: 0 });
        }
    }
    Ok(index)
}
