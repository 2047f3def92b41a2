//! The worked examples of the docs, run as written: every ```` ```console ```` block of README.md
//! and docs/*.md is a session at a shell. `$ ` starts a command (run by `bash` in a fresh project
//! of the document's own, stderr merged into stdout, `subagent` on `PATH`, no API key, a private
//! `HOME`); the lines after it are what it prints, where a line `...` stands for any number of
//! lines, `[..]` in a line for any text, and a last line `[exit status: N]` for the exit code
//! (else 0). The commands of one document run in order in one project, so an example can show
//! what one command leaves for the next.

use std::path::PathBuf;

use super::support::{Project, root};

/// One command of a block and what it prints.
#[derive(Debug)]
struct Example {
    /// Where it is (`docs/cli.md:42`).
    place: String,
    command: String,
    expected: Vec<String>,
    exit: i32,
}

/// The examples of the markdown `text`, in order.
fn examples(file: &str, text: &str) -> Vec<Example> {
    let mut found: Vec<Example> = Vec::new();
    let mut inside = false;
    for (number, line) in text.lines().enumerate() {
        if let Some(info) = line.strip_prefix("```") {
            inside = !inside && info.trim() == "console";
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            found.push(Example {
                place: format!("{file}:{}", number + 1),
                command: command.to_owned(),
                expected: Vec::new(),
                exit: 0,
            });
        } else if let Some(example) = found.last_mut() {
            match line
                .strip_prefix("[exit status: ")
                .and_then(|rest| rest.strip_suffix(']'))
            {
                Some(code) => example.exit = code.parse().unwrap(),
                None => example.expected.push(line.to_owned()),
            }
        } else {
            panic!("{file}:{}: a console block starts with `$ `", number + 1);
        }
    }
    found
}

/// Whether `line` matches the `pattern` line (`[..]` is any text).
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("[..]");
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether `lines` match `patterns` (`...` is any number of lines).
fn matches(patterns: &[String], lines: &[&str]) -> bool {
    match patterns.split_first() {
        None => lines.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=lines.len()).any(|skip| matches(rest, &lines[skip..]))
        }
        Some((first, rest)) => lines
            .split_first()
            .is_some_and(|(line, more)| line_matches(first, line) && matches(rest, more)),
    }
}

/// Every document with console blocks: README.md and docs/*.md.
fn documents() -> Vec<(String, String)> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect()
}

#[test]
fn every_console_example_of_the_docs_runs_as_written() {
    let mut ran = Vec::new();
    let mut failures = Vec::new();
    for (file, text) in documents() {
        let examples = examples(&file, &text);
        if examples.is_empty() {
            continue;
        }
        let project = Project::new();
        for example in examples {
            let done = project.shell(&project.path, &format!("{} 2>&1", example.command), &[]);
            let code = done.status.code().unwrap_or(-1);
            let output = String::from_utf8_lossy(&done.stdout);
            let lines: Vec<&str> = output.lines().collect();
            if code != example.exit || !matches(&example.expected, &lines) {
                failures.push(format!(
                    "{}: `{}` exited {code} (expected {}) and printed:\n{output}\nexpected:\n{}\n",
                    example.place,
                    example.command,
                    example.exit,
                    example.expected.join("\n")
                ));
            }
            ran.push(example.place);
        }
    }
    assert!(
        ran.iter().any(|place| place.starts_with("docs/cli.md")),
        "docs/cli.md has worked examples: {ran:?}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_matcher_reads_wildcards_as_the_module_says() {
    let lines = |text: &str| text.lines().map(str::to_owned).collect::<Vec<_>>();
    assert!(matches(
        &lines("a [..] c\n...\nend"),
        &["a b c", "x", "y", "end"]
    ));
    assert!(matches(&lines("a [..] c\n...\nend"), &["a  c", "end"]));
    assert!(!matches(&lines("a [..] c\nend"), &["a b c", "x", "end"]));
    assert!(!matches(&lines("a"), &["a", "b"]));
    assert!(matches(&lines("[..]"), &["anything"]));
    assert!(!matches(&lines("x[..]"), &["anything"]));
    let found = examples(
        "f.md",
        "text\n```console\n$ one\nout\n[exit status: 2]\n$ two\n```\n```sh\n$ not\n```\n",
    );
    assert_eq!(
        found
            .iter()
            .map(|e| (
                e.place.as_str(),
                e.command.as_str(),
                e.expected.len(),
                e.exit
            ))
            .collect::<Vec<_>>(),
        [("f.md:3", "one", 1, 2), ("f.md:6", "two", 0, 0)]
    );
}
