//! The configured secrets: the variables a configuration names as holding keys, and their values.
//! A child's environment withholds them (`subagent_process`), output redacts them, and a provider
//! factory receives them in its build context (`subagent_core::BuildContext::secrets`).

use std::borrow::Cow;
use std::ffi::OsStr;
use std::sync::Arc;

/// The shortest secret value matched by value: a variable holding it under another name is
/// withheld, and output showing it is redacted. A shorter value (a placeholder like `dummy`)
/// would match ordinary text; such a secret is withheld by name only.
pub const MIN_SECRET_VALUE_LEN: usize = 8;

/// The configured secrets: the variables the configuration names as holding keys (a preset's
/// `api_key_env`, a provider's key variable) and the values they hold. A child spawned with
/// `subagent_process::ProcessSpec::withhold` inherits none of these variables, nor any other variable
/// holding one of their values, unless it is passed or set explicitly; [`Secrets::redact`]
/// replaces the values in text with `[REDACTED:NAME]`.
///
/// Cloning shares the set. `Debug` shows the names only, never a value.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Longest value first, so a value containing another is redacted whole.
    entries: Arc<[Secret]>,
}

#[derive(Clone)]
struct Secret {
    name: String,
    /// `None` when unset or shorter than [`MIN_SECRET_VALUE_LEN`].
    value: Option<String>,
    /// The value as it appears inside a JSON string, when that differs.
    json_value: Option<String>,
    marker: String,
}

impl Secrets {
    /// No secrets.
    pub fn new() -> Self {
        Self::default()
    }

    /// The variables `names` (repeats and empty names ignored), their values read through
    /// `lookup` (the process environment in a binary, a closure in tests).
    pub fn from_names<I, S>(names: I, lookup: impl Fn(&str) -> Option<String>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut seen: Vec<String> = Vec::new();
        let mut pairs = Vec::new();
        for name in names {
            let name = name.as_ref();
            if name.is_empty() || seen.iter().any(|s| s == name) {
                continue;
            }
            seen.push(name.to_owned());
            pairs.push((name.to_owned(), lookup(name)));
        }
        Self::build(pairs)
    }

    fn build(pairs: Vec<(String, Option<String>)>) -> Self {
        let mut entries: Vec<Secret> = pairs
            .into_iter()
            .map(|(name, value)| {
                let value = value.filter(|v| v.len() >= MIN_SECRET_VALUE_LEN);
                let json_value = value
                    .as_deref()
                    .map(json_escaped)
                    .filter(|escaped| Some(escaped) != value.as_ref());
                let marker = format!(
                    "[REDACTED:{}]",
                    name.chars()
                        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                        .collect::<String>()
                );
                Secret {
                    name,
                    value,
                    json_value,
                    marker,
                }
            })
            .collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.value.as_ref().map_or(0, String::len)));
        Self {
            entries: entries.into(),
        }
    }

    /// Both sets (a name in both is kept once, with this set's value).
    #[must_use]
    pub fn union(&self, other: &Self) -> Self {
        if other.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return other.clone();
        }
        let mut pairs: Vec<(String, Option<String>)> = Vec::new();
        for entry in self.entries.iter().chain(other.entries.iter()) {
            if !pairs.iter().any(|(name, _)| *name == entry.name) {
                pairs.push((entry.name.clone(), entry.value.clone()));
            }
        }
        Self::build(pairs)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The variables' names, longest value first.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_str())
    }

    /// Whether a variable `name=value` of ours is withheld: its name is a secret's (compared
    /// case-insensitively), or its value is a secret's value.
    pub fn withholds(&self, name: &OsStr, value: &OsStr) -> bool {
        self.entries.iter().any(|e| {
            name.to_str()
                .is_some_and(|name| name.eq_ignore_ascii_case(&e.name))
                || e.value
                    .as_deref()
                    .is_some_and(|v| v.as_bytes() == value.as_encoded_bytes())
        })
    }

    /// `text` with every secret value (also as escaped inside a JSON string) replaced by
    /// `[REDACTED:NAME]`. Borrowed when nothing was found.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut text = Cow::Borrowed(text);
        for entry in self.entries.iter() {
            for value in [&entry.value, &entry.json_value].into_iter().flatten() {
                if text.contains(value.as_str()) {
                    text = Cow::Owned(text.replace(value.as_str(), &entry.marker));
                }
            }
        }
        text
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Secrets")
            .field(&self.names().collect::<Vec<_>>())
            .finish()
    }
}

/// `value` as written inside a JSON string (quotes, backslashes and control characters
/// escaped the way serde_json writes them).
fn json_escaped(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> Secrets {
        let values = [
            ("ADV_MODEL_KEY", "adv-secret-value-0123456789"),
            ("SHORT_KEY", "dummy"),
            ("LONGER_KEY", "adv-secret-value-0123456789-and-more"),
            ("QUOTED_KEY", "with\"quote\\and-backslash"),
        ];
        Secrets::from_names(
            [
                "ADV_MODEL_KEY",
                "SHORT_KEY",
                "LONGER_KEY",
                "QUOTED_KEY",
                "UNSET_KEY",
                "ADV_MODEL_KEY",
                "",
            ],
            |name| {
                values
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            },
        )
    }

    #[test]
    fn redaction_replaces_values_longest_first_and_in_json_form() {
        let secrets = secrets();
        assert_eq!(
            secrets.redact(
                "k=adv-secret-value-0123456789, long=adv-secret-value-0123456789-and-more, dummy stays"
            ),
            "k=[REDACTED:ADV_MODEL_KEY], long=[REDACTED:LONGER_KEY], dummy stays"
        );
        assert_eq!(
            secrets.redact(r#"{"raw":"with\"quote\\and-backslash"} with"quote\and-backslash"#),
            r#"{"raw":"[REDACTED:QUOTED_KEY]"} [REDACTED:QUOTED_KEY]"#
        );
        assert!(matches!(
            secrets.redact("nothing here"),
            Cow::Borrowed("nothing here")
        ));
        assert_eq!(
            Secrets::new().redact("adv-secret-value-0123456789"),
            "adv-secret-value-0123456789"
        );
    }

    #[test]
    fn debug_shows_names_never_values() {
        let secrets = secrets();
        assert_eq!(
            format!("{secrets:?}"),
            r#"Secrets(["LONGER_KEY", "ADV_MODEL_KEY", "QUOTED_KEY", "SHORT_KEY", "UNSET_KEY"])"#
        );
        let other = Secrets::from_names(["OTHER_KEY", "ADV_MODEL_KEY"], |_| {
            Some("another-secret-value".to_owned())
        });
        let both = secrets.union(&other);
        assert_eq!(
            format!("{both:?}"),
            r#"Secrets(["LONGER_KEY", "ADV_MODEL_KEY", "QUOTED_KEY", "OTHER_KEY", "SHORT_KEY", "UNSET_KEY"])"#
        );
        // The first set's value wins for a name in both.
        assert_eq!(
            both.redact("adv-secret-value-0123456789 another-secret-value"),
            "[REDACTED:ADV_MODEL_KEY] [REDACTED:OTHER_KEY]"
        );
    }
}
