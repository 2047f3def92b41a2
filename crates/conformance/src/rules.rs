//! `permission_rules`: the parent's deny rules hold in the child.

use subagent_core::{Capability, PermissionRules};

use crate::bench::fresh;
use crate::failure::ensure;
use crate::scenarios::{DENIED_FILE, WRITE_DENIED, WRITTEN};
use crate::{Adapter, Failure, Verdict, bench::Bench};

/// Claude Code's names of every tool that writes a file: denying them all denies writing,
/// whatever the child's own tools are called.
const WRITE_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// A request whose rules deny writing (Claude Code's write tools and the one the adapter's
/// child writes with) keeps the child from writing the file it writes without
/// them (the control is [`crate::Check::PermissionCeiling`]'s open write). A provider whose
/// children cannot write has nothing to deny.
pub(crate) async fn permission_rules(adapter: &dyn Adapter) -> Result<Verdict, Failure> {
    if !adapter
        .factory()
        .capabilities()
        .supports(Capability::PermissionRules)
    {
        return Ok(Verdict::NotDeclared);
    }
    let bench = Bench::new(adapter, "permission_rules").await?;
    let denied = adapter.workdir().join(DENIED_FILE);
    fresh(&denied)?;
    let Some(request) = bench.writing(&format!("{WRITE_DENIED}: write"), DENIED_FILE) else {
        return Ok(Verdict::Passed);
    };
    // Claude Code's write tools, and the tool the child writes with (a shell, say) by name.
    let mut deny = WRITE_TOOLS.map(str::to_owned).to_vec();
    if bench.model_free().is_none()
        && let Some(call) = adapter.write_call(DENIED_FILE, WRITTEN)
        && !deny.contains(&call.name)
    {
        deny.push(call.name);
    }
    let rules = PermissionRules {
        deny: deny.clone(),
        ..PermissionRules::default()
    };
    let ended = bench.run(request.permission_rules(rules).build()).await?;
    ensure!(
        !denied.exists(),
        "conformance permission_rules: declares permission_rules but does not honour it: {} \
         was written though the request's rules deny {deny:?}; the run: {:?}",
        denied.display(),
        ended.outcome
    );
    Ok(Verdict::Passed)
}
