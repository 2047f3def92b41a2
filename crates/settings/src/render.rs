//! The human form `subagent settings` prints: each value followed by its source.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::effective::EffectiveSettings;
use crate::scope::Scope;

impl EffectiveSettings {
    /// The effective settings as `subagent settings` prints them: sections permissions, hooks,
    /// env, trust, warnings (when any) and files read; each value followed by its scope and file
    /// (`allow  Bash(npm run test:*)   project .claude/settings.json`).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut rows: Vec<(String, String, String)> = Vec::new();
        let perms = &self.permissions;
        if let Some(mode) = &perms.default_mode {
            rows.push((
                "mode".into(),
                mode.value.to_string(),
                self.source(mode.scope, &mode.file),
            ));
        }
        for (label, rules) in [
            ("deny", &perms.deny),
            ("ask", &perms.ask),
            ("allow", &perms.allow),
        ] {
            for rule in rules {
                rows.push((
                    label.into(),
                    rule.value.to_string(),
                    self.source(rule.scope, &rule.file),
                ));
            }
        }
        for dir in &perms.additional_directories {
            rows.push((
                "directory".into(),
                dir.value.clone(),
                self.source(dir.scope, &dir.file),
            ));
        }
        for ignored in &self.ignored {
            let key = ignored.key.trim_start_matches("permissions.");
            rows.push((
                "ignored".into(),
                format!("{key} {}", ignored.value),
                format!(
                    "{} ({})",
                    self.source(ignored.scope, &ignored.file),
                    ignored.reason
                ),
            ));
        }
        section(&mut out, "permissions", &rows, "no rules; the mode decides");

        rows.clear();
        for (event, groups) in &self.hooks.events {
            for group in groups {
                let matcher = group
                    .matcher
                    .as_deref()
                    .filter(|m| !m.is_empty())
                    .unwrap_or("*");
                for hook in &group.hooks {
                    rows.push((
                        format!("{event} {matcher}"),
                        format!("{} (timeout {}s)", hook.command, hook.timeout.as_secs_f64()),
                        self.source(hook.source, &hook.file),
                    ));
                }
            }
        }
        section(&mut out, "hooks", &rows, "none");

        rows.clear();
        for (name, value) in &self.env {
            rows.push((
                name.clone(),
                value.value.clone(),
                self.source(value.scope, &value.file),
            ));
        }
        section(&mut out, "env", &rows, "none");

        out.push_str("trust\n");
        let project = self.locations.project.display();
        match (&self.trust.by, self.trust.trusted) {
            (Some(by), true) => {
                let _ = writeln!(out, "  {project} is trusted by {by}");
            }
            _ => {
                let _ = writeln!(
                    out,
                    "  {project} is not trusted: its allow rules do not count (`subagent trust` records trust)"
                );
            }
        }

        if !self.warnings.is_empty() {
            out.push_str("warnings\n");
            for warning in &self.warnings {
                let _ = writeln!(out, "  {warning}");
            }
        }

        rows.clear();
        for file in &self.files {
            rows.push((
                file.scope.to_string(),
                self.locations.show(&file.path),
                if file.found { "read" } else { "absent" }.to_owned(),
            ));
        }
        for key in &self.unknown_keys {
            rows.push((
                "unknown key".into(),
                key.value.clone(),
                format!("{} (kept, ignored)", self.source(key.scope, &key.file)),
            ));
        }
        section(&mut out, "files read", &rows, "none");
        out
    }

    fn source(&self, scope: Scope, file: &Option<PathBuf>) -> String {
        match file {
            Some(file) => format!("{scope} {}", self.locations.show(file)),
            None => scope.to_string(),
        }
    }
}

/// A titled section of aligned rows.
fn section(out: &mut String, title: &str, rows: &[(String, String, String)], empty: &str) {
    out.push_str(title);
    out.push('\n');
    if rows.is_empty() {
        let _ = writeln!(out, "  ({empty})");
        return;
    }
    let first = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let second = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    for (a, b, c) in rows {
        let _ = writeln!(out, "  {a:<first$}  {b:<second$}   {c}");
    }
}
