//! Tool filters: `{allow, deny}` with `*` wildcards.

use serde::{Deserialize, Serialize};

/// Which tools a child may see. A tool passes when `allow` is absent or one of its patterns
/// matches, and no `deny` pattern matches. Patterns are tool names with `*` wildcards.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolFilter {
    /// Only these tools (absent = every tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Never these tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// A filter allowing only these patterns.
    pub fn allow<I, S>(patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            allow: Some(patterns.into_iter().map(Into::into).collect()),
            deny: Vec::new(),
        }
    }

    /// A filter denying these patterns.
    pub fn deny<I, S>(patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            allow: None,
            deny: patterns.into_iter().map(Into::into).collect(),
        }
    }

    /// Whether the tool passes the filter.
    pub fn permits(&self, tool: &str) -> bool {
        let allowed = self
            .allow
            .as_ref()
            .is_none_or(|allow| allow.iter().any(|p| wildcard_match(p, tool)));
        allowed && !self.deny.iter().any(|p| wildcard_match(p, tool))
    }

    /// Both filters at once: allowed by both, denied by either.
    #[must_use]
    pub fn intersect(&self, other: &Self) -> Self {
        let allow = match (&self.allow, &other.allow) {
            (None, None) => None,
            (Some(a), None) | (None, Some(a)) => Some(a.clone()),
            // Keep each pattern that is covered by a pattern of the other list (`q` matches `p`
            // read as text). Two overlapping patterns neither of which covers the other
            // (`read_*` and `*_file`) are dropped: the result may be narrower than the exact
            // intersection, never wider.
            (Some(a), Some(b)) => {
                let mut allow: Vec<String> = a
                    .iter()
                    .filter(|p| b.iter().any(|q| wildcard_match(q, p)))
                    .cloned()
                    .collect();
                for p in b {
                    if a.iter().any(|q| wildcard_match(q, p)) && !allow.contains(p) {
                        allow.push(p.clone());
                    }
                }
                Some(allow)
            }
        };
        let mut deny = self.deny.clone();
        deny.extend(
            other
                .deny
                .iter()
                .filter(|d| !self.deny.contains(d))
                .cloned(),
        );
        Self { allow, deny }
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters (possibly empty)
/// and every other character for itself.
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] != '*' && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, t));
            p += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        for (pattern, text, expected) in [
            ("*", "", true),
            ("*", "bash", true),
            ("bash", "bash", true),
            ("bash", "bas", false),
            ("read_*", "read_file", true),
            ("read_*", "write_file", false),
            ("*_file", "edit_file", true),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXbYY", false),
            ("mcp__*__get", "mcp__x__get", true),
        ] {
            assert_eq!(
                wildcard_match(pattern, text),
                expected,
                "{pattern} ~ {text}"
            );
        }
    }

    #[test]
    fn allow_then_deny() {
        let filter = ToolFilter {
            allow: Some(vec!["read_*".into(), "ls".into()]),
            deny: vec!["read_secret*".into()],
        };
        assert!(filter.permits("read_file"));
        assert!(filter.permits("ls"));
        assert!(!filter.permits("bash"));
        assert!(!filter.permits("read_secrets"));
        assert!(ToolFilter::default().permits("anything"));
    }

    #[test]
    fn intersection_never_widens() {
        let all = ToolFilter::allow(["*"]);
        let read = ToolFilter::allow(["read_file"]);
        assert_eq!(
            all.intersect(&read).allow,
            Some(vec!["read_file".to_owned()])
        );
        assert_eq!(
            read.intersect(&all).allow,
            Some(vec!["read_file".to_owned()])
        );
        let a = ToolFilter::allow(["read_*", "ls"]);
        let b = ToolFilter {
            allow: Some(vec!["read_file".into(), "bash".into()]),
            deny: vec!["ls".into()],
        };
        let both = a.intersect(&b);
        for tool in ["read_file", "read_secret", "ls", "bash", "write_file"] {
            assert!(
                !both.permits(tool) || (a.permits(tool) && b.permits(tool)),
                "{tool} widened"
            );
        }
        assert!(both.permits("read_file"));
    }
}
