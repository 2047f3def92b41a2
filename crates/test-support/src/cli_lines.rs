//! Inputs for testing a parser of a product CLI's JSON lines: the recorded transcripts a crate
//! keeps as fixtures ([`transcript_lines`]), and proptest strategies for the lines such a CLI
//! could print ([`Vocabulary`]).

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value};

/// Every line of every file in `dir`, with its file's name (without extension), in file-name
/// order.
pub fn transcript_lines(dir: &Path) -> std::io::Result<Vec<(String, String)>> {
    let mut files = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<std::io::Result<Vec<_>>>()?;
    files.sort();
    let mut lines = Vec::new();
    for path in files {
        let name = path.file_stem().unwrap_or_default().to_string_lossy();
        let text = std::fs::read_to_string(&path)?;
        lines.extend(
            text.lines()
                .map(|line| (name.clone().into_owned(), line.to_owned())),
        );
    }
    Ok(lines)
}

/// The words a CLI's events are made of, for generating lines that look like its own (so that
/// generated events reach the parser's known paths) and lines it never printed.
#[derive(Clone, Copy, Debug)]
pub struct Vocabulary {
    /// The event types the parser reads.
    pub types: &'static [&'static str],
    /// Field names (a regex): the ones the parser reads, then `|.{0,6}` for any others.
    pub fields: &'static str,
    /// String values (a regex), likewise.
    pub strings: &'static str,
    /// The fields that tag a value's kind (`type`, `subtype`): always strings, as the CLIs
    /// write them.
    pub tags: &'static [&'static str],
}

impl Vocabulary {
    /// Any JSON value, its objects' fields named from the vocabulary.
    pub fn json(self) -> BoxedStrategy<Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            self.strings.prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                self.object(inner),
            ]
        })
        .boxed()
    }

    /// An event line: `(its type, the line)`, the type one the parser reads or any string, the
    /// other fields from the vocabulary with any values.
    pub fn event(self) -> BoxedStrategy<(String, String)> {
        let types = prop_oneof![
            prop::sample::select(self.types).prop_map(str::to_owned),
            ".{0,12}",
        ];
        (types, self.object(self.json()))
            .prop_map(|(kind, mut object)| {
                if let Value::Object(fields) = &mut object {
                    fields.insert("type".to_owned(), Value::from(kind.as_str()));
                }
                (kind, object.to_string())
            })
            .boxed()
    }

    fn object(self, values: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Value> {
        prop::collection::btree_map(self.fields, values, 0..8)
            .prop_map(move |fields| {
                let object: Map<String, Value> = (fields.into_iter())
                    .map(|(name, value)| match value {
                        Value::String(_) => (name, value),
                        other if self.tags.contains(&name.as_str()) => {
                            (name, Value::from(other.to_string()))
                        }
                        other => (name, other),
                    })
                    .collect();
                Value::Object(object)
            })
            .boxed()
    }
}
