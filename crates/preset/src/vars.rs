//! `${VAR}` references in string values.
//!
//! Grammar: `${NAME}` (NAME = `[A-Za-z_][A-Za-z0-9_]*`) is the variable's value and an error when
//! it is unset; `${NAME:-default}` is the value, or `default` when unset or empty; `$${` is a
//! literal `${`. Every other `$` is itself. The value of a variable is never expanded again.
//! Variables come from a lookup the caller passes: this module never reads the process
//! environment.

use crate::Env;

/// How a reference failed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum VarError {
    /// `${NAME}` with NAME unset.
    Unset(String),
    /// `${` not followed by a well-formed reference; the text from `${` on (bounded).
    Malformed(String),
}

/// The longest excerpt of a malformed reference quoted in an error.
const EXCERPT_CHARS: usize = 40;

/// Whether `text` needs [`expand`] at all.
pub(crate) fn has_reference(text: &str) -> bool {
    text.contains("${")
}

/// Expands every reference in `text`.
pub(crate) fn expand(
    text: &str,
    env: &(dyn Fn(&str) -> Option<String> + '_),
) -> Result<String, VarError> {
    if !has_reference(text) {
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let tail = &rest[dollar..];
        if let Some(after) = tail.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
        } else if let Some(body) = tail.strip_prefix("${") {
            let malformed = || VarError::Malformed(tail.chars().take(EXCERPT_CHARS).collect());
            let close = body.find('}').ok_or_else(malformed)?;
            let inner = &body[..close];
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            if !valid_name(name) {
                return Err(malformed());
            }
            match (env(name), default) {
                (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => return Err(VarError::Unset(name.to_owned())),
            }
            rest = &body[close + 1..];
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// [`expand`], also saying which variables `text` references (each once, in order; with or
/// without a default, set or not).
pub(crate) fn expand_noting(text: &str, env: &Env) -> Result<(String, Vec<String>), VarError> {
    let seen = std::cell::RefCell::new(Vec::<String>::new());
    let noting = |name: &str| {
        let mut seen = seen.borrow_mut();
        if !seen.iter().any(|known| known == name) {
            seen.push(name.to_owned());
        }
        env(name)
    };
    let expanded = expand(text, &noting)?;
    Ok((expanded, seen.into_inner()))
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            "DOLLAR" => Some("${HOME}".into()),
            _ => None,
        }
    }

    #[test]
    fn references_are_noted_once_each() {
        assert_eq!(
            expand_noting("${HOME}:${NOPE:-d}:$${LITERAL}:${HOME}", &env),
            Ok((
                "/home/u:d:${LITERAL}:/home/u".into(),
                vec!["HOME".into(), "NOPE".into()]
            ))
        );
        assert_eq!(expand_noting("plain", &env), Ok(("plain".into(), vec![])));
    }

    #[test]
    fn grammar() {
        let ok = |text: &str| expand(text, &env);
        assert_eq!(ok("plain"), Ok("plain".into()));
        assert_eq!(ok("${HOME}/x"), Ok("/home/u/x".into()));
        assert_eq!(ok("a${HOME}b${HOME}"), Ok("a/home/ub/home/u".into()));
        assert_eq!(ok("$${HOME}"), Ok("${HOME}".into()));
        assert_eq!(ok("$$${HOME}"), Ok("$${HOME}".into()));
        assert_eq!(ok("cost $5 and $HOME"), Ok("cost $5 and $HOME".into()));
        assert_eq!(ok("${NOPE:-d}"), Ok("d".into()));
        assert_eq!(ok("${EMPTY:-d}"), Ok("d".into()));
        assert_eq!(ok("${EMPTY}"), Ok(String::new()));
        assert_eq!(ok("${NOPE:-}"), Ok(String::new()));
        assert_eq!(
            ok("${DOLLAR}"),
            Ok("${HOME}".into()),
            "values are not expanded again"
        );
        assert_eq!(ok("${NOPE}"), Err(VarError::Unset("NOPE".into())));
        assert_eq!(ok("${1X}"), Err(VarError::Malformed("${1X}".into())));
        assert_eq!(ok("${}"), Err(VarError::Malformed("${}".into())));
        assert_eq!(ok("x ${HOME"), Err(VarError::Malformed("${HOME".into())));
        assert_eq!(ok("${A B}"), Err(VarError::Malformed("${A B}".into())));
        assert_eq!(
            ok("${HOME:default}"),
            Err(VarError::Malformed("${HOME:default}".into()))
        );
    }
}
