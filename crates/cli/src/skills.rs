//! The skills runs are offered: the user's and the project's `SKILL.md` folders, read once per
//! command, and given to runs only when there is one the model may load.

use std::path::Path;
use std::sync::Arc;

use subagent_catalog::{Skills, standard_skill_dirs};
use subagent_core::Extensions;
use subagent_core::skills::SkillDirectory;

/// Loads the skills of `home` and the project in `cwd` and, when there is one to load, puts
/// them in `provided` (the build context's extensions), so in-process children get the `Skill`
/// tool.
pub(crate) fn provide(provided: &mut Extensions, home: Option<&str>, cwd: &Path) -> Arc<Skills> {
    let skills = Arc::new(load(home.map(Path::new), cwd));
    if let Some(directory) = directory(&skills) {
        provided.insert(subagent_runtime::Skills(directory));
    }
    skills
}

/// The skills: `SKILL.md` folders of the user's (`home`) and the project's (`cwd`)
/// `.claude/skills/` and `.subagents/skills/`.
pub(crate) fn load(home: Option<&Path>, cwd: &Path) -> Skills {
    Skills::load(standard_skill_dirs(home, Some(cwd)))
}

/// The skills as runs read them, when there is one the model may load (a run without any gets
/// no `Skill` tool, so its tool list is what it was before skills).
pub(crate) fn directory(skills: &Arc<Skills>) -> Option<Arc<dyn SkillDirectory>> {
    (!skills.skills().is_empty()).then(|| Arc::clone(skills) as Arc<dyn SkillDirectory>)
}
