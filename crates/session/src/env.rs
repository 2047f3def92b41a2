//! The process environment as every crate of the workspace reads it: the real environment, plus
//! the variables a host moved out of its own environment block.
//!
//! `/proc/<pid>/environ` shows the block a process was started with, to the process's own user
//! (and to root) — so to any command a model runs, which is a descendant. `unsetenv` does not
//! change that block, and `std::env::set_var` is `unsafe`; so `subagent` starts itself again
//! without its secrets in the block (`subagent_process::withdraw`) and hands their values over
//! through a pipe. They are kept here, in one process-wide store — the one global of the
//! workspace, because the environment it stands in for is one — and [`var`] reads them, so a
//! secret is read the same way whether it was moved or not. Children get them back through
//! [`vars_os`], the base of every child's environment, and their own scrub decides as before.
//!
//! Deliberately not here: which variables are secrets, the re-execution and the handover (all in
//! `subagent_process::withdraw`). A host that does not withdraw anything reads the real
//! environment through these functions unchanged.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::sync::{Mutex, PoisonError};

/// The private variable through which a host hands its withdrawn variables to its re-executed
/// image (`<fd>:<inode>:<generation>:<name>`). Never part of [`vars_os`]: no child inherits it.
pub const HANDOFF_VAR: &str = "__SUBAGENT_WITHDRAWN";

/// The withdrawn variables: name → value.
static KEPT: Mutex<BTreeMap<OsString, OsString>> = Mutex::new(BTreeMap::new());

fn kept_map() -> std::sync::MutexGuard<'static, BTreeMap<OsString, OsString>> {
    KEPT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Keeps `vars` as part of the environment (a name kept twice holds its last value). Called by
/// the host that withdrew them from its environment block, once, before any thread starts.
pub fn keep<I>(vars: I)
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    kept_map().extend(vars);
}

/// The withdrawn variables, sorted by name (what a re-execution hands over again).
pub fn kept() -> Vec<(OsString, OsString)> {
    kept_map()
        .iter()
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// Whether `name` is a withdrawn variable.
pub fn is_kept(name: &str) -> bool {
    kept_map().contains_key(OsStr::new(name))
}

/// The variable `name`: withdrawn, else from the real environment. The private
/// [`HANDOFF_VAR`] is never found.
pub fn var_os(name: &OsStr) -> Option<OsString> {
    if name == HANDOFF_VAR {
        return None;
    }
    if let Some(value) = kept_map().get(name) {
        return Some(value.clone());
    }
    std::env::var_os(name)
}

/// [`var_os`] as UTF-8, as `std::env::var(name).ok()`: `None` when unset or not UTF-8.
pub fn var(name: &str) -> Option<String> {
    var_os(OsStr::new(name)).and_then(|value| value.into_string().ok())
}

/// The whole environment: the real one with the withdrawn variables put back, without
/// [`HANDOFF_VAR`]; the base of a child's environment, before its scrub.
pub fn vars_os() -> Vec<(OsString, OsString)> {
    let kept = kept_map().clone();
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| name != HANDOFF_VAR && !kept.contains_key(name))
        .collect();
    vars.extend(kept);
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_variables_are_read_and_put_back_first() {
        // The test binary's own environment has `PATH`; nothing of these names.
        keep([
            (
                OsString::from("SESSION_ENV_TEST_KEY"),
                OsString::from("kept-value-1"),
            ),
            (OsString::from("PATH"), OsString::from("/kept/bin")),
        ]);
        assert_eq!(var("SESSION_ENV_TEST_KEY").as_deref(), Some("kept-value-1"));
        assert!(is_kept("SESSION_ENV_TEST_KEY"));
        assert!(!is_kept("SESSION_ENV_TEST_UNSET"));
        assert_eq!(var("SESSION_ENV_TEST_UNSET"), None);
        // A kept value wins over the real environment's, once.
        assert_eq!(var("PATH").as_deref(), Some("/kept/bin"));
        let all = vars_os();
        let paths: Vec<&OsString> = all
            .iter()
            .filter(|(name, _)| name == "PATH")
            .map(|(_, value)| value)
            .collect();
        assert_eq!(paths, [&OsString::from("/kept/bin")]);
        assert!(
            all.iter()
                .any(|(name, value)| name == "SESSION_ENV_TEST_KEY" && value == "kept-value-1")
        );
        assert!(
            kept()
                .iter()
                .any(|(name, _)| name == "SESSION_ENV_TEST_KEY")
        );
        assert_eq!(var(HANDOFF_VAR), None);
    }
}
