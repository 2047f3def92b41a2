//! Permission rules in Claude Code's syntax: parsing, and matching one tool call.
//!
//! `Tool` or `Tool(specifier)`. The tool is Claude Code's name or ours (`bash` = `Bash`). The
//! specifier depends on the tool: a command pattern for `Bash` (`*` wildcards, the legacy
//! `prefix:*`), a gitignore-style path for the file tools, `domain:host` for `WebFetch`, and a
//! `*` pattern over the call's `command` for any other tool (`Agent(Explore)`).

use std::fmt;
use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use serde::{Serialize, Serializer};

use crate::error::{Error, Result};
use crate::pattern::{command_matches, command_parts, normalize, operators_spelled, wildcard};
use crate::tools;

/// One tool call, as rules see it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolCall<'a> {
    /// The tool, our name or Claude Code's (`bash` or `Bash`).
    pub tool: &'a str,
    /// A `Bash` call's command line; for a tool without a path or a domain, the subject its
    /// rules' specifiers match (an `Agent` call's agent type).
    pub command: Option<&'a str>,
    /// A file tool's path: absolute and canonicalised by the caller (symlinks resolved). A
    /// relative path is taken relative to the context's `cwd`. Normalised lexically again here.
    pub path: Option<&'a Path>,
    /// A `WebFetch` call's host.
    pub domain: Option<&'a str>,
}

impl<'a> ToolCall<'a> {
    /// A call of `tool` with no subject.
    pub fn new(tool: &'a str) -> Self {
        Self {
            tool,
            ..Self::default()
        }
    }

    /// With a command line (or other subject).
    #[must_use]
    pub fn command(mut self, command: &'a str) -> Self {
        self.command = Some(command);
        self
    }

    /// With a path.
    #[must_use]
    pub fn path(mut self, path: &'a Path) -> Self {
        self.path = Some(path);
        self
    }

    /// With a host.
    #[must_use]
    pub fn domain(mut self, domain: &'a str) -> Self {
        self.domain = Some(domain);
        self
    }
}

/// The directories path rules resolve against. They should be canonical, as the call's path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchContext<'a> {
    /// The run's directory (the worktree for an isolated child): `x` and `./x` rules.
    pub cwd: &'a Path,
    /// The project root: `/x` rules.
    pub project_root: &'a Path,
    /// The user's home: `~/x` rules; `None`: they match nothing.
    pub home: Option<&'a Path>,
}

/// A parsed permission rule. Displays (and serialises) as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    text: String,
    tool: String,
    spec: Option<Spec>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Spec {
    /// A Bash command pattern (`npm run test:*` already rewritten to `npm run test *`).
    Command(String),
    /// A gitignore-style path.
    Path(PathSpec),
    /// `WebFetch(domain:…)`, lowercased.
    Domain(String),
    /// Any other tool's specifier, matched against the call's `command`.
    Other(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Anchor {
    /// `//x`: the file system root.
    Root,
    /// `~/x`: the home.
    Home,
    /// `/x`: the project root.
    Project,
    /// `x`, `./x`: the run's directory.
    Cwd,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct PathSpec {
    anchor: Anchor,
    /// The pattern below the anchor, no trailing slash.
    rest: String,
    /// A pattern without a slash (`.env`, `*.log`) matches at any depth below the anchor.
    anywhere: bool,
}

fn invalid(text: &str, reason: impl Into<String>) -> Error {
    Error::Rule {
        at: String::new(),
        rule: text.to_owned(),
        reason: reason.into(),
    }
}

impl Rule {
    /// Parses `Tool` or `Tool(specifier)`.
    ///
    /// # Errors
    /// [`Error::Rule`] (`PERMISSION_RULE_INVALID`) for unbalanced parentheses, an empty or
    /// malformed tool name, an empty specifier, a `WebFetch` specifier without `domain:` and a
    /// path pattern that is not a valid glob.
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        if text.is_empty() {
            return Err(invalid(text, "empty rule"));
        }
        let (tool, spec) = match text.find('(') {
            None if text.contains(')') => {
                return Err(invalid(text, "unbalanced parentheses: `)` without `(`"));
            }
            None => (text, None),
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(invalid(
                        text,
                        "unbalanced parentheses: the rule must end with `)`",
                    ));
                };
                if !balanced(inner) {
                    return Err(invalid(text, "unbalanced parentheses inside the specifier"));
                }
                if inner.trim().is_empty() {
                    return Err(invalid(
                        text,
                        "empty specifier: write the bare tool name to match every call",
                    ));
                }
                (text[..open].trim(), Some(inner.trim()))
            }
        };
        if tool.is_empty() {
            return Err(invalid(text, "no tool name"));
        }
        if let Some(bad) = tool
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '.')))
        {
            return Err(invalid(
                text,
                format!("tool name {tool:?} has the character {bad:?}"),
            ));
        }
        let canonical = tools::canonical(tool).to_owned();
        let spec = match spec {
            None => None,
            Some(spec) => Some(Self::spec(text, &canonical, spec)?),
        };
        Ok(Self {
            text: text.to_owned(),
            tool: canonical,
            spec,
        })
    }

    fn spec(text: &str, tool: &str, spec: &str) -> Result<Spec> {
        if tool == "Bash" {
            let pattern = match spec.strip_suffix(":*") {
                Some(prefix) if prefix.trim().is_empty() => {
                    return Err(invalid(text, "empty command prefix before `:*`"));
                }
                Some(prefix) => format!("{} *", prefix.trim_end()),
                None => spec.to_owned(),
            };
            return Ok(Spec::Command(pattern));
        }
        if tools::takes_path(tool) {
            let path = path_spec(spec);
            GlobBuilder::new(&path.rest)
                .literal_separator(true)
                .build()
                .map_err(|e| invalid(text, format!("path pattern: {}", e.kind())))?;
            return Ok(Spec::Path(path));
        }
        if tool == "WebFetch" {
            return match spec.strip_prefix("domain:").map(str::trim) {
                Some(domain) if !domain.is_empty() && !domain.contains(['/', ' ']) => {
                    Ok(Spec::Domain(domain.to_ascii_lowercase()))
                }
                Some(_) => Err(invalid(
                    text,
                    "`domain:` needs a host name (`WebFetch(domain:example.com)`)",
                )),
                None => Err(invalid(
                    text,
                    "a WebFetch specifier is `domain:<host>` (`WebFetch(domain:example.com)`)",
                )),
            };
        }
        Ok(Spec::Other(spec.to_owned()))
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The tool it names, as Claude Code calls it (`bash(…)` gives `Bash`).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The rule in Claude Code's own spelling: its tool as Claude Code names it, its specifier
    /// as written (`bash(git diff:*)` gives `Bash(git diff:*)`), for handing to `claude`.
    pub fn claude_text(&self) -> String {
        match self.text.find('(') {
            Some(open) => format!("{}{}", self.tool, &self.text[open..]),
            None => self.tool.clone(),
        }
    }

    /// Whether the rule names a tool without a specifier (every call of the tool).
    pub fn is_bare(&self) -> bool {
        self.spec.is_none()
    }

    /// Whether the rule covers `call` exactly, as an allow rule must: the tool (or its family)
    /// matches and so does the specifier; a Bash command line that chains, substitutes or
    /// redirects beyond the pattern is not covered unless the pattern spells the operator.
    pub fn matches(&self, call: &ToolCall<'_>, ctx: &MatchContext<'_>) -> bool {
        self.tool_matches(call.tool)
            && match &self.spec {
                Some(Spec::Command(pattern)) => call.command.is_some_and(|command| {
                    command_matches(pattern, command) && operators_spelled(pattern, command)
                }),
                _ => self.spec_matches(call, ctx),
            }
    }

    /// Whether the rule catches `call`, as a deny or ask rule does: like [`Rule::matches`], but a
    /// Bash pattern also catches a command line any of whose simple commands it matches
    /// (`Bash(rm *)` catches `ls && rm -rf x`).
    pub fn catches(&self, call: &ToolCall<'_>, ctx: &MatchContext<'_>) -> bool {
        self.tool_matches(call.tool)
            && match &self.spec {
                Some(Spec::Command(pattern)) => call.command.is_some_and(|command| {
                    command_matches(pattern, command)
                        || command_parts(command)
                            .iter()
                            .any(|part| command_matches(pattern, part))
                }),
                _ => self.spec_matches(call, ctx),
            }
    }

    fn tool_matches(&self, call_tool: &str) -> bool {
        let call_tool = tools::canonical(call_tool);
        let rule = self.tool.as_str();
        if rule.contains('*') {
            return wildcard(rule, call_tool);
        }
        if let Some(rest) = rule.strip_prefix("mcp__")
            && !rest.contains("__")
        {
            // `mcp__server`: every tool of that server.
            return call_tool == rule
                || call_tool
                    .strip_prefix(rule)
                    .is_some_and(|tail| tail.starts_with("__"));
        }
        tools::covers(rule, call_tool)
    }

    fn spec_matches(&self, call: &ToolCall<'_>, ctx: &MatchContext<'_>) -> bool {
        match &self.spec {
            None => true,
            Some(Spec::Command(_)) => false,
            Some(Spec::Path(spec)) => call.path.is_some_and(|path| spec.matches(path, ctx)),
            Some(Spec::Domain(pattern)) => call
                .domain
                .is_some_and(|domain| wildcard(pattern, &domain.to_ascii_lowercase())),
            Some(Spec::Other(pattern)) => call
                .command
                .is_some_and(|subject| wildcard(pattern, subject.trim())),
        }
    }
}

fn balanced(text: &str) -> bool {
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            _ => {}
        }
    }
    depth == 0
}

fn path_spec(spec: &str) -> PathSpec {
    let (anchor, rest, anywhere) = if let Some(rest) = spec.strip_prefix("//") {
        (Anchor::Root, rest, false)
    } else if spec == "~" {
        (Anchor::Home, "", false)
    } else if let Some(rest) = spec.strip_prefix("~/") {
        (Anchor::Home, rest, false)
    } else if let Some(rest) = spec.strip_prefix('/') {
        (Anchor::Project, rest, false)
    } else if let Some(rest) = spec.strip_prefix("./") {
        (Anchor::Cwd, rest, false)
    } else {
        let anywhere = !spec.trim_end_matches('/').contains('/');
        (Anchor::Cwd, spec, anywhere)
    };
    let rest = rest.trim_end_matches('/');
    PathSpec {
        anchor,
        rest: if rest.is_empty() { "**" } else { rest }.to_owned(),
        anywhere,
    }
}

impl PathSpec {
    /// Whether `path` (or a directory above it, as in gitignore) matches.
    fn matches(&self, path: &Path, ctx: &MatchContext<'_>) -> bool {
        let base = match self.anchor {
            Anchor::Root => PathBuf::from("/"),
            Anchor::Home => match ctx.home {
                Some(home) => home.to_path_buf(),
                None => return false,
            },
            Anchor::Project => ctx.project_root.to_path_buf(),
            Anchor::Cwd => ctx.cwd.to_path_buf(),
        };
        let mut base = normalize(&base);
        // `..` at the front of the pattern climbs from the base; elsewhere it is applied
        // lexically like in a path.
        let mut rest = normalize(Path::new(&self.rest));
        while let Ok(up) = rest.strip_prefix("..") {
            base.pop();
            rest = up.to_path_buf();
        }
        let mut pattern = globset::escape(&base.to_string_lossy());
        if !pattern.ends_with('/') {
            pattern.push('/');
        }
        if self.anywhere {
            pattern.push_str("**/");
        }
        let rest = rest.to_string_lossy();
        pattern.push_str(if rest.is_empty() { "**" } else { &rest });
        let Ok(glob) = GlobBuilder::new(&pattern).literal_separator(true).build() else {
            return false;
        };
        let matcher = glob.compile_matcher();
        let path = normalize(&ctx.cwd.join(path));
        path.ancestors()
            .any(|candidate| matcher.is_match(candidate))
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl std::str::FromStr for Rule {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        Self::parse(text)
    }
}
