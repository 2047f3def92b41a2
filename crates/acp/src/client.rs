//! What the client side of the connection decides on its own: the answer to
//! `session/request_permission` (the row's policy under the run's permission mode) and the
//! files the agent may read and write (`fs/read_text_file`, `fs/write_text_file`), confined to
//! the run's roots with the in-process file tools' own [`Roots`].

use std::path::Path;

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, ToolKind,
};
use subagent_core::PermissionMode;
use subagent_runtime::Roots;
use subagent_runtime::tools::MAX_READ_BYTES;

use crate::config::PermissionPolicy;

/// Whether the run's permission mode lets a tool call of `kind` through at all.
pub fn mode_allows(mode: PermissionMode, kind: ToolKind) -> bool {
    let reads = matches!(kind, ToolKind::Read | ToolKind::Search | ToolKind::Think);
    let edits = matches!(kind, ToolKind::Edit | ToolKind::Delete | ToolKind::Move);
    match mode {
        PermissionMode::Default | PermissionMode::Bypass => true,
        PermissionMode::AcceptEdits => reads || edits,
        _ => reads,
    }
}

/// The answer to a permission request: allowed once only when the policy allows and the run's
/// mode allows the call's kind (an unknown kind counts as `other`), else rejected; an option of
/// the chosen sort missing, the next one (`allow_always`, `reject_always`), and with no reject
/// option at all, `cancelled`.
pub fn answer(
    policy: PermissionPolicy,
    mode: PermissionMode,
    request: &RequestPermissionRequest,
) -> RequestPermissionResponse {
    let kind = request.tool_call.fields.kind.unwrap_or(ToolKind::Other);
    choose(
        policy == PermissionPolicy::Allow && mode_allows(mode, kind),
        request,
    )
}

/// The response that allows (once, else always) or rejects (once, else always) `request`;
/// `cancelled` when it offers no option of that sort.
pub(crate) fn choose(allow: bool, request: &RequestPermissionRequest) -> RequestPermissionResponse {
    let wanted: &[PermissionOptionKind] = if allow {
        &[
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
        ]
    } else {
        &[
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]
    };
    let chosen = wanted.iter().find_map(|wanted| {
        request
            .options
            .iter()
            .find(|option| option.kind == *wanted)
            .map(|option| option.option_id.clone())
    });
    RequestPermissionResponse::new(match chosen {
        Some(id) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
        None => RequestPermissionOutcome::Cancelled,
    })
}

/// The agent's file access: inside the run's roots only, writes only when the run's mode is not
/// read-only.
#[derive(Clone, Debug)]
pub struct Files {
    roots: Roots,
    writable: bool,
}

impl Files {
    /// File access confined to `roots`; `writable` unless the run is read-only.
    pub fn new(roots: Roots, mode: PermissionMode) -> Self {
        Self {
            roots,
            writable: !matches!(mode, PermissionMode::Plan | PermissionMode::DontAsk),
        }
    }

    fn resolve(&self, path: &Path) -> Result<std::path::PathBuf, String> {
        let given = path
            .to_str()
            .ok_or_else(|| format!("the path {} is not valid UTF-8", path.display()))?;
        self.roots.resolve(given).map_err(|error| error.to_string())
    }

    /// `fs/read_text_file`: the file's text, from 1-based `line` on, at most `limit` lines.
    pub fn read(
        &self,
        path: &Path,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, String> {
        let resolved = self.resolve(path)?;
        let bytes = subagent_session::read_user_file(&resolved, MAX_READ_BYTES)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("{} is not UTF-8 text", path.display()))?;
        if line.is_none() && limit.is_none() {
            return Ok(text);
        }
        let skip = line.map_or(0, |line| line.saturating_sub(1)) as usize;
        let take = limit.map_or(usize::MAX, |limit| limit as usize);
        Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
    }

    /// `fs/write_text_file`: writes the file (and its missing parent directories inside the
    /// roots); refused outright when the run is read-only.
    pub fn write(&self, path: &Path, content: &str) -> Result<(), String> {
        if !self.writable {
            return Err(format!(
                "writing {} is refused: the run is read-only (permission mode plan)",
                path.display()
            ));
        }
        let resolved = self.resolve(path)?;
        if let Some(parent) = resolved.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
        }
        std::fs::write(&resolved, content)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn request(kind: &str) -> RequestPermissionRequest {
        serde_json::from_value(json!({
            "sessionId": "s",
            "toolCall": {"toolCallId": "t", "kind": kind, "title": "x"},
            "options": [
                {"optionId": "always", "name": "Always", "kind": "allow_always"},
                {"optionId": "once", "name": "Once", "kind": "allow_once"},
                {"optionId": "no", "name": "No", "kind": "reject_once"},
            ]
        }))
        .unwrap()
    }

    fn chosen(response: &RequestPermissionResponse) -> Option<String> {
        match &response.outcome {
            RequestPermissionOutcome::Selected(selected) => Some(selected.option_id.0.to_string()),
            _ => None,
        }
    }

    #[test]
    fn permission_answers_follow_policy_and_mode() {
        use PermissionMode::*;
        use PermissionPolicy::*;
        let cases = [
            (Reject, Bypass, "execute", "no"),
            (Allow, Default, "execute", "once"),
            (Allow, Bypass, "other", "once"),
            (Allow, AcceptEdits, "edit", "once"),
            (Allow, AcceptEdits, "execute", "no"),
            (Allow, Plan, "read", "once"),
            (Allow, Plan, "edit", "no"),
            (Allow, Plan, "execute", "no"),
            (Allow, DontAsk, "delete", "no"),
        ];
        for (policy, mode, kind, expected) in cases {
            let response = answer(policy, mode, &request(kind));
            assert_eq!(
                chosen(&response).as_deref(),
                Some(expected),
                "{policy:?} {mode:?} {kind}"
            );
        }
        let mut no_reject = request("execute");
        no_reject
            .options
            .retain(|o| o.kind != PermissionOptionKind::RejectOnce);
        assert_eq!(chosen(&answer(Reject, Default, &no_reject)), None);
    }

    #[test]
    fn files_stay_inside_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let files = Files::new(Roots::new(dir.path()).unwrap(), PermissionMode::Default);
        let inside = dir.path().join("sub/a.txt");
        files.write(&inside, "one\ntwo\nthree\n").unwrap();
        assert_eq!(
            files.read(&inside, None, None).unwrap(),
            "one\ntwo\nthree\n"
        );
        assert_eq!(files.read(&inside, Some(2), Some(1)).unwrap(), "two\n");
        for bad in [
            outside.path().join("x.txt"),
            dir.path().join("out/x.txt"),
            dir.path().join("sub/../../x.txt"),
        ] {
            let err = files.write(&bad, "no").unwrap_err();
            assert!(
                err.contains("not allowed") || err.contains("root") || err.contains("symlink"),
                "{err}"
            );
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        assert!(files.read(Path::new("/etc/hostname"), None, None).is_err());

        let read_only = Files::new(Roots::new(dir.path()).unwrap(), PermissionMode::Plan);
        let err = read_only
            .write(&dir.path().join("b.txt"), "no")
            .unwrap_err();
        assert!(err.contains("read-only"), "{err}");
        assert!(!dir.path().join("b.txt").exists());
        assert_eq!(read_only.read(&inside, Some(3), None).unwrap(), "three\n");
    }
}
