//! The tidy rule that a crate's modules have a direction: no top-level module of a crate's
//! `src/` reaches itself again through the paths its code names.
//!
//! A module `a` depends on a module `b` of the same crate when its code names `crate::b…`,
//! `crate::{b…}`, `super::b…` from `a`'s top (or `super::super::b…` one module deeper), or an
//! item the crate root re-exports from `b` (`crate::Error` with `pub use error::Error` in
//! `lib.rs`). Submodules of `a` (its folder, its inline `mod`s, its tests) count as `a`. When
//! modules reach each other in a ring, none of them can be read, tested or moved alone, and the
//! ring grows: the fix is to move the item one of them takes from the other down, so that data
//! and types sit below the code that uses them.
//!
//! What is read: each package's `src/` (the library's or the binary's modules; `src/bin/` holds
//! other crates and is skipped), as text: comments, strings and character literals are blanked
//! first, so a doc link or a message naming `crate::x` is no dependency. Deliberately not read:
//! `use` of the crate by its own name, `#[path]` attributes, and macros' expansions. A cycle kept
//! on purpose is in [`CYCLES_ALLOWED`] with its reason; an entry no cycle needs any more is a
//! violation too, so the list stays short.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{Package, Violation, relative, rust_files};

pub(super) const RULE_CYCLES: &str = "a crate's modules have a direction: no module reaches itself through `crate::`/`super::` paths";

/// Cycles kept on purpose: the crate, the modules the cycle may span, and why. A cycle is
/// allowed when all its modules are in one entry of its crate.
///
/// Empty: every crate's modules have a direction. An entry is for a cycle kept on purpose,
/// with its reason; a module joining a listed cycle fails.
pub(super) const CYCLES_ALLOWED: &[(&str, &[&str], &str)] = &[];

/// The sources of one crate: its name, its `src/` (relative to the workspace) and every `.rs`
/// file under it, paths relative to `src/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct CrateSources {
    pub name: String,
    pub src: PathBuf,
    pub files: Vec<(PathBuf, String)>,
}

/// Every workspace package's `src/` with its files.
pub(super) fn crate_sources(root: &Path, packages: &[Package]) -> Result<Vec<CrateSources>> {
    let mut crates = Vec::new();
    for package in packages {
        let src = package.dir().join("src");
        let absolute = root.join(&src);
        if !absolute.is_dir() {
            continue;
        }
        let mut paths = Vec::new();
        rust_files(&absolute, &mut paths)?;
        paths.sort();
        let mut files = Vec::new();
        for path in paths {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            files.push((relative(&absolute, &path), text));
        }
        crates.push(CrateSources {
            name: package.name.clone(),
            src,
            files,
        });
    }
    Ok(crates)
}

/// The rule over every crate, with [`CYCLES_ALLOWED`].
pub(super) fn check_cycles(crates: &[CrateSources]) -> Vec<Violation> {
    crates
        .iter()
        .flat_map(|sources| check_crate(sources, CYCLES_ALLOWED))
        .collect()
}

/// A token of Rust source, as far as paths need: comments, strings and literals are gone.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    Sep,
    Open,
    Close,
    Comma,
    Semi,
    Other,
}

/// The tokens of `text`, each with its 1-based line.
fn lex(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Skips to the end of a string whose opening quote is at `i`; raw strings pass `hashes`.
    let skip_string = |i: &mut usize, hashes: Option<usize>, line: &mut usize| {
        *i += 1;
        while *i < chars.len() {
            let c = chars[*i];
            if c == '\n' {
                *line += 1;
            }
            match hashes {
                None if c == '\\' => {
                    if at(*i + 1) == '\n' {
                        *line += 1;
                    }
                    *i += 2;
                    continue;
                }
                None if c == '"' => {
                    *i += 1;
                    return;
                }
                Some(n) if c == '"' && (1..=n).all(|k| at(*i + k) == '#') => {
                    *i += 1 + n;
                    return;
                }
                _ => {}
            }
            *i += 1;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            '/' if at(i + 1) == '/' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if at(i + 1) == '*' => {
                let mut depth = 0usize;
                while i < chars.len() {
                    if chars[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if chars[i] == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            '"' => skip_string(&mut i, None, &mut line),
            '\'' => {
                if at(i + 1) == '\\' {
                    i += 3;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if at(i + 2) == '\'' {
                    i += 3;
                } else {
                    // A lifetime or a label: its name follows as an identifier, which is harmless.
                    i += 1;
                }
            }
            ':' if at(i + 1) == ':' => {
                tokens.push((Token::Sep, line));
                i += 2;
            }
            '{' | '}' | ',' | ';' => {
                tokens.push((
                    match c {
                        '{' => Token::Open,
                        '}' => Token::Close,
                        ',' => Token::Comma,
                        _ => Token::Semi,
                    },
                    line,
                ));
                i += 1;
            }
            c if c.is_alphanumeric() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let raw_prefix = matches!(word.as_str(), "r" | "br" | "cr");
                let hashes = (i..).take_while(|&k| at(k) == '#').count();
                if raw_prefix && at(i + hashes) == '"' {
                    i += hashes;
                    skip_string(&mut i, Some(hashes), &mut line);
                } else if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                    skip_string(&mut i, None, &mut line);
                } else if word == "b" && at(i) == '\'' {
                    // A byte literal: the quote is handled as a character literal next.
                } else if c.is_ascii_digit() {
                    tokens.push((Token::Other, line));
                } else {
                    tokens.push((Token::Ident(word), line));
                }
            }
            c if c.is_whitespace() => i += 1,
            _ => {
                tokens.push((Token::Other, line));
                i += 1;
            }
        }
    }
    tokens
}

fn ident(tokens: &[(Token, usize)], i: usize) -> Option<&str> {
    match tokens.get(i) {
        Some((Token::Ident(word), _)) => Some(word),
        _ => None,
    }
}

fn is(tokens: &[(Token, usize)], i: usize, token: &Token) -> bool {
    tokens.get(i).is_some_and(|(t, _)| t == token)
}

/// The names a path starting at `tokens[i]` (just after `crate::`) leads to first: one name,
/// or each leading name of a `{…}` group.
fn leading_names(tokens: &[(Token, usize)], i: usize) -> Vec<&str> {
    if let Some(name) = ident(tokens, i) {
        return vec![name];
    }
    if !is(tokens, i, &Token::Open) {
        return Vec::new();
    }
    let mut names = Vec::new();
    let mut depth = 0usize;
    for (k, (token, _)) in tokens.iter().enumerate().skip(i) {
        match token {
            Token::Open => depth += 1,
            Token::Close => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            Token::Ident(name)
                if depth == 1
                    && matches!(tokens.get(k - 1), Some((Token::Open | Token::Comma, _))) =>
            {
                names.push(name.as_str());
            }
            _ => {}
        }
    }
    names
}

/// What a crate root (`lib.rs`, `main.rs`) re-exports from its modules: item name → module.
fn reexports(tokens: &[(Token, usize)], modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut i = 0;
    while i < tokens.len() {
        if ident(tokens, i) != Some("use") {
            i += 1;
            continue;
        }
        let mut start = i + 1;
        if matches!(ident(tokens, start), Some("crate" | "self"))
            && is(tokens, start + 1, &Token::Sep)
        {
            start += 2;
        }
        let end = (start..tokens.len())
            .find(|&k| is(tokens, k, &Token::Semi))
            .unwrap_or(tokens.len());
        if let Some(module) = ident(tokens, start).filter(|m| modules.contains(*m)) {
            for k in start + 1..end {
                let leaf = matches!(
                    tokens.get(k + 1),
                    Some((Token::Comma | Token::Close | Token::Semi, _))
                );
                if let Some(name) = ident(tokens, k).filter(|n| leaf && *n != "self") {
                    found.insert(name.to_owned(), module.to_owned());
                }
            }
        }
        i = end;
    }
    found
}

/// Where a module names another first: file (relative to the workspace) and line.
type Edges = BTreeMap<String, BTreeMap<String, (PathBuf, usize)>>;

/// The top-level module of a file under `src/` and how deep the file's own module sits
/// (`a.rs`, `a/mod.rs`: 1; `a/b.rs`: 2), or `None` for the crate root and `src/bin/`.
fn module_of(path: &Path) -> Option<(String, usize)> {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let first = parts.first()?;
    if parts.len() == 1 && (first == "lib.rs" || first == "main.rs") || first == "bin" {
        return None;
    }
    let module = first.strip_suffix(".rs").unwrap_or(first).to_owned();
    let depth = if parts.last().is_some_and(|p| p == "mod.rs") {
        parts.len() - 1
    } else {
        parts.len()
    };
    Some((module, depth))
}

/// The references between the top-level modules of one crate.
fn edges(sources: &CrateSources) -> (BTreeSet<String>, Edges) {
    let modules: BTreeSet<String> = sources
        .files
        .iter()
        .filter_map(|(path, _)| module_of(path).map(|(module, _)| module))
        .collect();
    let mut items = BTreeMap::new();
    for (path, text) in &sources.files {
        if path == Path::new("lib.rs") || path == Path::new("main.rs") {
            items.extend(reexports(&lex(text), &modules));
        }
    }
    let mut edges = Edges::new();
    for (path, text) in &sources.files {
        let Some((from, file_depth)) = module_of(path) else {
            continue;
        };
        let tokens = lex(text);
        // The brace depths at which inline `mod name {` blocks opened.
        let mut inline: Vec<usize> = Vec::new();
        let mut braces = 0usize;
        for (i, (token, line)) in tokens.iter().enumerate() {
            let after_sep = i > 0 && is(&tokens, i - 1, &Token::Sep);
            let next = match token {
                Token::Open => {
                    braces += 1;
                    if i >= 2
                        && ident(&tokens, i - 2) == Some("mod")
                        && ident(&tokens, i - 1).is_some()
                    {
                        inline.push(braces);
                    }
                    None
                }
                Token::Close => {
                    if inline.last() == Some(&braces) {
                        inline.pop();
                    }
                    braces = braces.saturating_sub(1);
                    None
                }
                Token::Ident(word)
                    if word == "crate" && !after_sep && is(&tokens, i + 1, &Token::Sep) =>
                {
                    Some(i + 2)
                }
                Token::Ident(word) if word == "super" && !after_sep => {
                    let mut k = i;
                    let mut ups = 0;
                    while ident(&tokens, k) == Some("super") && is(&tokens, k + 1, &Token::Sep) {
                        ups += 1;
                        k += 2;
                    }
                    (ups > 0 && ups >= file_depth + inline.len()).then_some(k)
                }
                _ => None,
            };
            let Some(next) = next else {
                continue;
            };
            for name in leading_names(&tokens, next) {
                let to = if modules.contains(name) {
                    name
                } else if let Some(module) = items.get(name) {
                    module.as_str()
                } else {
                    continue;
                };
                if to != from {
                    edges
                        .entry(from.clone())
                        .or_default()
                        .entry(to.to_owned())
                        .or_insert_with(|| (sources.src.join(path), *line));
                }
            }
        }
    }
    (modules, edges)
}

/// The modules `from` reaches (itself included).
fn reach(edges: &Edges, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::from([from.to_owned()]);
    let mut queue = VecDeque::from([from.to_owned()]);
    while let Some(module) = queue.pop_front() {
        for next in edges.get(&module).into_iter().flat_map(BTreeMap::keys) {
            if seen.insert(next.clone()) {
                queue.push_back(next.clone());
            }
        }
    }
    seen
}

/// The sets of modules that reach each other (strongly connected, two or more), sorted.
fn cycles(modules: &BTreeSet<String>, edges: &Edges) -> Vec<BTreeSet<String>> {
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        modules.iter().map(|m| (m, reach(edges, m))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for module in modules {
        if found.iter().any(|set| set.contains(module)) {
            continue;
        }
        let set: BTreeSet<String> = reaches[module]
            .iter()
            .filter(|other| reaches.get(other).is_some_and(|r| r.contains(module)))
            .cloned()
            .collect();
        if set.len() > 1 {
            found.push(set);
        }
    }
    found
}

/// The shortest way from `start` back to itself inside `set`, as modules (`start` at both ends).
fn shortest_cycle(edges: &Edges, set: &BTreeSet<String>, start: &str) -> Vec<String> {
    let mut before: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = VecDeque::from([start.to_owned()]);
    while let Some(module) = queue.pop_front() {
        for next in edges.get(&module).into_iter().flat_map(BTreeMap::keys) {
            if !set.contains(next) {
                continue;
            }
            if next == start {
                // Back at the start: walk the way here backwards (`start` has no entry).
                let mut path = vec![start.to_owned(), module.clone()];
                let mut at = module.clone();
                while let Some(previous) = before.get(&at) {
                    path.push(previous.clone());
                    at = previous.clone();
                }
                path.reverse();
                return path;
            }
            if !before.contains_key(next) && next != start {
                before.insert(next.clone(), module.clone());
                queue.push_back(next.clone());
            }
        }
    }
    Vec::new()
}

/// The rule over one crate with the allow-list `allowed`.
fn check_crate(sources: &CrateSources, allowed: &[(&str, &[&str], &str)]) -> Vec<Violation> {
    let (modules, edges) = edges(sources);
    let found = cycles(&modules, &edges);
    let name = sources.name.as_str();
    let mut violations = Vec::new();
    for set in &found {
        let is_allowed = allowed.iter().any(|(krate, members, _)| {
            *krate == name && set.iter().all(|m| members.contains(&m.as_str()))
        });
        if is_allowed {
            continue;
        }
        let start = set.first().map(String::as_str).unwrap_or_default();
        let ring = shortest_cycle(&edges, set, start);
        let steps: Vec<String> = ring
            .windows(2)
            .map(|pair| {
                let (file, line) = &edges[&pair[0]][&pair[1]];
                format!("{} → {} at {}:{line}", pair[0], pair[1], file.display())
            })
            .collect();
        let members: Vec<&str> = set.iter().map(String::as_str).collect();
        violations.push(Violation {
            what: format!(
                "{name}: modules {} reach each other ({})",
                members.join(", "),
                steps.join(", ")
            ),
            rule: RULE_CYCLES,
            fix: format!(
                "give them a direction: move what a lower module takes from a higher one down (data and types below the code that builds on them, e.g. into a module of their own), so that no path leads back; a cycle kept on purpose goes into CYCLES_ALLOWED in xtask/src/tidy/cycles.rs with its reason (src: {})",
                sources.src.display()
            ),
        });
    }
    for (krate, members, _) in allowed.iter().filter(|(krate, ..)| *krate == name) {
        let needed = found
            .iter()
            .any(|set| set.iter().all(|m| members.contains(&m.as_str())));
        if !needed {
            violations.push(Violation {
                what: format!(
                    "{krate}: CYCLES_ALLOWED lists modules {} that no cycle needs",
                    members.join(", ")
                ),
                rule: RULE_CYCLES,
                fix: "remove the entry from CYCLES_ALLOWED in xtask/src/tidy/cycles.rs (the list holds only cycles kept on purpose)".to_owned(),
            });
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn sources(files: &[(&str, &str)]) -> CrateSources {
        CrateSources {
            name: "subagent-x".to_owned(),
            src: PathBuf::from("crates/x/src"),
            files: files
                .iter()
                .map(|(path, text)| (PathBuf::from(path), (*text).to_owned()))
                .collect(),
        }
    }

    fn whats(violations: &[Violation]) -> Vec<String> {
        violations.iter().map(|v| v.what.clone()).collect()
    }

    /// `config` builds every client while the clients read `config`: the shape of the model
    /// crate before `build` moved out.
    const RING: &[(&str, &str)] = &[
        (
            "lib.rs",
            "mod chat;\nmod config;\nmod error;\npub use error::{Error, Result};\n",
        ),
        (
            "config.rs",
            "use crate::error::Result;\n\npub fn build() -> Result<()> {\n    crate::chat::ChatModel::new();\n    Ok(())\n}\n",
        ),
        ("chat.rs", "use crate::{config::Kind, Error};\n"),
        (
            "error.rs",
            "/// Returned by [`crate::config::build`].\npub enum Error {}\n",
        ),
    ];

    #[test]
    fn a_cycle_is_named_with_its_modules_references_and_fix() {
        let found = check_crate(&sources(RING), &[]);
        assert_eq!(
            whats(&found),
            [
                "subagent-x: modules chat, config reach each other (chat → config at crates/x/src/chat.rs:1, config → chat at crates/x/src/config.rs:4)"
            ]
        );
        assert_eq!(found[0].rule, RULE_CYCLES);
        assert!(found[0].fix.contains("CYCLES_ALLOWED"), "{}", found[0].fix);
        assert!(found[0].fix.starts_with("give them a direction: move"));
    }

    #[test]
    fn modules_with_a_direction_pass() {
        let mut files = RING.to_vec();
        // `build` moved out of config: config is data, build depends on config and the clients.
        files[1] = ("config.rs", "use crate::error::Result;\npub struct Kind;\n");
        files.push((
            "build.rs",
            "use crate::config::Kind;\npub fn build() { crate::chat::ChatModel::new(); }\n",
        ));
        assert_eq!(
            whats(&check_crate(&sources(&files), &[])),
            Vec::<String>::new()
        );
        let (_, edges) = edges(&sources(&files));
        let pairs: Vec<(&str, Vec<&str>)> = edges
            .iter()
            .map(|(from, to)| (from.as_str(), to.keys().map(String::as_str).collect()))
            .collect();
        // The re-exported `Error` leads to `error`; the doc link in error.rs is no reference.
        assert_eq!(
            pairs,
            [
                ("build", vec!["chat", "config"]),
                ("chat", vec!["config", "error"]),
                ("config", vec!["error"]),
            ]
        );
    }

    #[test]
    fn the_allow_list_is_honoured_and_kept_short() {
        let allowed: &[(&str, &[&str], &str)] =
            &[("subagent-x", &["chat", "config", "error"], "on purpose")];
        assert_eq!(
            whats(&check_crate(&sources(RING), allowed)),
            Vec::<String>::new()
        );
        // Another crate's entry does not cover this one.
        let other: &[(&str, &[&str], &str)] = &[("subagent-y", &["chat", "config"], "on purpose")];
        assert_eq!(check_crate(&sources(RING), other).len(), 1);
        // An entry that covers only part of the cycle does not allow it.
        let part: &[(&str, &[&str], &str)] = &[("subagent-x", &["chat"], "on purpose")];
        let found = whats(&check_crate(&sources(RING), part));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("subagent-x: modules chat, config reach each other"));
        // An entry no cycle needs is a violation.
        assert_eq!(
            found[1],
            "subagent-x: CYCLES_ALLOWED lists modules chat that no cycle needs"
        );
    }

    #[test]
    fn super_paths_submodules_and_literals_are_read_as_rust_does() {
        let files = [
            ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
            // A file of a's folder: `super::` is `a`, `super::super::` the crate root.
            ("a/inner.rs", "use super::Thing;\nuse super::super::b::B;\n"),
            // At b's top, `super::` is the crate root; inside its inline tests, `b` itself.
            (
                "b.rs",
                "use super::c::C;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::a;\n}\n",
            ),
            // Strings, raw strings, chars, lifetimes and comments name nothing.
            (
                "c.rs",
                "const S: &str = \"crate::a\";\nconst R: &str = r#\"crate::a \"x\"\"#;\nconst Q: char = '\"';\nfn f<'a>(x: &'a str) { /* crate::a /* nested */ */ }\n",
            ),
        ];
        let (modules, edges) = edges(&sources(&files));
        assert_eq!(
            modules,
            BTreeSet::from(["a".into(), "b".into(), "c".into()])
        );
        let pairs: Vec<(&str, Vec<&str>)> = edges
            .iter()
            .map(|(from, to)| (from.as_str(), to.keys().map(String::as_str).collect()))
            .collect();
        assert_eq!(pairs, [("a", vec!["b"]), ("b", vec!["c"])]);
    }
}
