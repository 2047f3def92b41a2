//! Skills in a run, in the shape Claude Code gives them to its model (docs/skills.md): the
//! listing in the first message, a skill's body as a text beside the `Skill` call's result, and
//! an agent type's preloaded skills in its first message.

use std::sync::Arc;

use subagent_core::skills::{LoadedSkill, SkillDirectory, SkillSummary};
use subagent_session::ContentBlock;

/// The `Skill` tool's name (Claude Code's).
pub const SKILL_TOOL: &str = "Skill";

/// Where the skills of runs come from, handed to providers in `BuildContext::extensions` (the
/// CLI puts the catalog's there); spawn gives its children the `Skill` tool on it.
#[derive(Clone)]
pub struct Skills(pub Arc<dyn SkillDirectory>);

impl std::fmt::Debug for Skills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Skills")
            .field(&self.0.skills().len())
            .finish()
    }
}

pub use subagent_core::skills::PreloadSkills;

/// A run's skills: where they come from and which go into its first message.
#[derive(Clone)]
pub struct RunSkills {
    /// Where they come from.
    pub directory: Arc<dyn SkillDirectory>,
    /// The names whose bodies open the run (an agent type's `skills:`). Names no skill has
    /// are left out, as Claude Code leaves them out.
    pub preload: Vec<String>,
}

impl std::fmt::Debug for RunSkills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunSkills")
            .field("preload", &self.preload)
            .finish_non_exhaustive()
    }
}

impl RunSkills {
    /// What a fresh conversation's first message gets after its prompt: each preloaded skill
    /// (the command tags and its body), then, when the run has the `Skill` tool, the listing.
    pub fn opening(&self, listed: bool) -> Vec<ContentBlock> {
        let mut blocks = Vec::new();
        for name in &self.preload {
            match self.directory.load(name) {
                Ok(skill) => {
                    let name = &skill.summary.name;
                    blocks.push(ContentBlock::text(format!(
                        "<command-message>{name}</command-message>\n<command-name>{name}</command-name>\n<skill-format>true</skill-format>"
                    )));
                    blocks.push(ContentBlock::text(skill_text(&skill, None)));
                }
                Err(error) => tracing::warn!("preloaded skill {name:?} left out: {error}"),
            }
        }
        if listed {
            let skills = self.directory.skills();
            if !skills.is_empty() {
                blocks.push(ContentBlock::text(listing(&skills)));
            }
        }
        blocks
    }
}

/// The listing the model reads to choose a skill, one `- name: description` line each, as
/// Claude Code writes it (ours in a `<system-reminder>` of the first message).
pub fn listing(skills: &[SkillSummary]) -> String {
    let mut text = String::from(
        "<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n",
    );
    for skill in skills {
        text.push_str("- ");
        text.push_str(&skill.name);
        text.push_str(": ");
        text.push_str(&skill.description);
        text.push('\n');
    }
    text.push_str("</system-reminder>");
    text
}

/// A loaded skill as the model reads it: `Base directory for this skill: <dir>`, the body, the
/// folder's other files (ours: Claude Code names only the folder), then the call's `args`, as
/// the pinned `claude` does: `$ARGUMENTS` in the body is the whole of them, `$ARGUMENTS[N]` and
/// `$N` the Nth (from 0, quotes grouping words), each empty without them; a body with none of
/// these gets `ARGUMENTS: …` appended instead.
pub fn skill_text(skill: &LoadedSkill, args: Option<&str>) -> String {
    let args = args.unwrap_or_default();
    let (body, placed) = substitute(&skill.body, args);
    let mut text = format!(
        "Base directory for this skill: {}\n\n{body}",
        skill.summary.dir.display()
    );
    if !skill.files.is_empty() {
        text.push_str(
            "\n\nOther files in this skill's folder (paths relative to it; read them when the \
             instructions point at them):",
        );
        for file in &skill.files {
            text.push_str("\n- ");
            text.push_str(&file.display().to_string());
        }
    }
    if !placed && !args.trim().is_empty() {
        text.push_str("\n\nARGUMENTS: ");
        text.push_str(args);
    }
    text
}

/// `body` with its argument placeholders replaced, and whether it had any.
fn substitute(body: &str, args: &str) -> (String, bool) {
    const WHOLE: &str = "$ARGUMENTS";
    let words = split_args(args);
    let word = |index: &str| -> &str {
        index
            .parse::<usize>()
            .ok()
            .and_then(|i| words.get(i))
            .map_or("", String::as_str)
    };
    let mut out = String::with_capacity(body.len());
    let mut placed = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let digits = |text: &str| text.chars().take_while(char::is_ascii_digit).count();
        if let Some(after) = tail.strip_prefix(WHOLE) {
            let indexed = after
                .strip_prefix('[')
                .map(|inner| (inner, digits(inner)))
                .filter(|(inner, n)| *n > 0 && inner[*n..].starts_with(']'));
            match indexed {
                Some((inner, n)) => {
                    out.push_str(word(&inner[..n]));
                    rest = &inner[n + 1..];
                }
                None => {
                    out.push_str(args);
                    rest = after;
                }
            }
            placed = true;
        } else if digits(&tail[1..]) > 0 {
            let n = digits(&tail[1..]);
            out.push_str(word(&tail[1..=n]));
            rest = &tail[1 + n..];
            placed = true;
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    (out, placed)
}

/// Arguments as words: split on whitespace, `"…"` and `'…'` grouping words (quotes dropped).
fn split_args(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                started = true;
            }
            None if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            None => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use pretty_assertions::assert_eq;
    use subagent_core::skills::{LoadedSkill, SkillSummary};

    use super::*;

    fn skill(body: &str, files: &[&str]) -> LoadedSkill {
        LoadedSkill {
            summary: SkillSummary {
                name: "greet".into(),
                description: "Greets.".into(),
                dir: PathBuf::from("/p/.claude/skills/greet"),
                ..SkillSummary::default()
            },
            body: body.into(),
            files: files.iter().map(PathBuf::from).collect(),
        }
    }

    #[test]
    fn a_skill_reads_as_claude_code_writes_it() {
        assert_eq!(
            skill_text(&skill("Say hi.\n", &[]), None),
            "Base directory for this skill: /p/.claude/skills/greet\n\nSay hi.\n"
        );
        assert_eq!(
            skill_text(&skill("Say hi.\n", &[]), Some("Ann")),
            "Base directory for this skill: /p/.claude/skills/greet\n\nSay hi.\n\n\nARGUMENTS: Ann"
        );
        // Placeholders in the body take them instead (what the pinned claude does), empty
        // without arguments; blank arguments are none.
        let argy = "Greet $ARGUMENTS now. First: $0. Also $ARGUMENTS[1]. Cost: $5.\n";
        assert_eq!(
            skill_text(&skill(argy, &[]), Some("Ann Bob")),
            "Base directory for this skill: /p/.claude/skills/greet\n\nGreet Ann Bob now. First: Ann. Also Bob. Cost: .\n"
        );
        assert_eq!(
            skill_text(&skill(argy, &[]), Some("\"Ann Lee\" Bob")),
            "Base directory for this skill: /p/.claude/skills/greet\n\nGreet \"Ann Lee\" Bob now. First: Ann Lee. Also Bob. Cost: .\n"
        );
        assert_eq!(
            skill_text(&skill(argy, &[]), None),
            "Base directory for this skill: /p/.claude/skills/greet\n\nGreet  now. First: . Also . Cost: .\n"
        );
        assert_eq!(
            skill_text(&skill("A $ sign, $X and $ARGUMENTS[x].", &[]), None),
            "Base directory for this skill: /p/.claude/skills/greet\n\nA $ sign, $X and [x]."
        );
        assert_eq!(
            skill_text(&skill("Say hi.\n", &[]), Some("  ")),
            "Base directory for this skill: /p/.claude/skills/greet\n\nSay hi.\n"
        );
        assert_eq!(
            skill_text(&skill("Say hi.", &["a.md", "scripts/b.sh"]), Some("x")),
            "Base directory for this skill: /p/.claude/skills/greet\n\nSay hi.\n\nOther files in this skill's folder (paths relative to it; read them when the instructions point at them):\n- a.md\n- scripts/b.sh\n\nARGUMENTS: x"
        );
    }

    #[test]
    fn the_listing_is_one_line_a_skill() {
        let summary = |name: &str, description: &str| SkillSummary {
            name: name.into(),
            description: description.into(),
            ..SkillSummary::default()
        };
        assert_eq!(
            listing(&[summary("tidy", "Tidies."), summary("greet", "Greets.")]),
            "<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n- tidy: Tidies.\n- greet: Greets.\n</system-reminder>"
        );
    }
}
