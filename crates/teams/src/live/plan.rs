//! Plan approval, in Claude Code's vocabulary: a teammate started with `mode: "plan"` (or
//! `plan_mode_required: true`) runs in plan mode — read-only, enforced by its permission layer
//! through the runtime's [`ChildExtras::permission_ceiling`](subagent_runtime::ChildExtras) —
//! until the leader approves its plan. It submits the plan (`ExitPlanMode`, a
//! `plan_approval_request` through `SendMessage`, or, without the team tools, its answer at the
//! end of a turn); the leader answers with a `plan_approval_response`. Approval clears the hold
//! on disk, so the teammate's next run starts in the mode it would otherwise have (never looser
//! than the leader's); a rejection keeps it and hands the feedback to the teammate's next turn.
//!
//! A run is never loosened while it runs: a plan approved while the teammate's run in plan
//! mode goes on is delivered to the run its loop starts once that one ends.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use subagent_core::{Outcome, PermissionMode, StopReason};

use super::Teams;
use crate::delivery::plan_reason;
use crate::model::{LEADER, Member};
use crate::store::TeamDir;
use crate::{Error, Result};

/// How the leader starts a teammate: the delegation call's `mode` and `plan_mode_required`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TeammateMode {
    /// The loosest mode every run of the teammate gets (`mode` other than `plan`).
    pub(crate) ceiling: Option<PermissionMode>,
    /// Held in plan mode until the leader approves its plan (`mode: "plan"` or
    /// `plan_mode_required: true`).
    pub(crate) plan: bool,
}

impl TeammateMode {
    /// Reads `mode` (any spelling of a permission mode, Claude Code's camelCase included) and
    /// `plan_mode_required` from a delegation call's arguments, removing them.
    pub(crate) fn take(args: &mut Map<String, Value>) -> Result<Self> {
        let mode = match args.remove("mode") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(PermissionMode::parse(&text).ok_or_else(|| {
                Error::InvalidArguments(format!(
                    "unknown mode {text:?} (one of {})",
                    PermissionMode::valid_spellings()
                ))
            })?),
            Some(_) => {
                return Err(Error::InvalidArguments(
                    "\"mode\" must be a permission mode's name".into(),
                ));
            }
        };
        let required = match args.remove("plan_mode_required") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(required)) => required,
            Some(_) => {
                return Err(Error::InvalidArguments(
                    "\"plan_mode_required\" must be true or false".into(),
                ));
            }
        };
        Ok(Self {
            ceiling: mode.filter(|mode| *mode != PermissionMode::Plan),
            plan: required || mode == Some(PermissionMode::Plan),
        })
    }
}

/// Where a teammate's current run is with plan mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PlanRun {
    /// Not held: it runs in its own mode.
    Free,
    /// Held in plan mode, its plan not approved.
    Held,
    /// Held in plan mode, and its plan was approved since it started: its messages wait for its
    /// next run, which is not held.
    Approved,
}

impl PlanRun {
    pub(super) fn held_if(held: bool) -> Self {
        if held { Self::Held } else { Self::Free }
    }

    /// The state of the run a wake starts, `held` as the member was read from disk before: a
    /// plan approved since that read (`Approved` now, while the read said held) keeps its
    /// messages for the run after this one, which is not held.
    pub(super) fn next_run(self, held: bool) -> Self {
        match (held, self) {
            (false, _) => Self::Free,
            (true, Self::Approved) => Self::Approved,
            (true, _) => Self::Held,
        }
    }
}

/// The ceiling and the refusals' reason of a teammate's run: its own ceiling, tightened to
/// `plan` while it is `held`.
pub(super) fn hold(
    ceiling: Option<PermissionMode>,
    held: bool,
) -> (Option<PermissionMode>, Option<Arc<str>>) {
    if !held {
        return (ceiling, None);
    }
    let plan = PermissionMode::Plan;
    (
        Some(ceiling.map_or(plan, |ceiling| ceiling.intersect(plan))),
        Some(Arc::from(plan_reason())),
    )
}

/// Whether `member`'s turn that ended with `outcome` submits its answer as its plan: it is held,
/// has no plan awaiting an answer, and completed with an answer.
pub(super) fn submits_answer(member: &Member, outcome: &Outcome) -> bool {
    member.plan_mode_required
        && member.plan_request.is_none()
        && outcome.status == StopReason::Completed
        && !outcome.text.trim().is_empty()
}

impl Teams {
    /// Records `name`'s `plan` as awaiting the leader's answer under a new request id; returns
    /// the message to the leader (its text and control). `INVALID_ARGUMENTS` when `name` is not
    /// held in plan mode.
    fn record_plan(&self, team: &TeamDir, name: &str, plan: &str) -> Result<(String, Value)> {
        let id = {
            let mut state = self.state();
            state.plan_requests += 1;
            format!("plan-{}@{name}", state.plan_requests)
        };
        team.update_config(|config| {
            let known = config.names();
            let member = config
                .member_mut(name)
                .ok_or_else(|| Error::unknown_teammate(name, team.name(), known))?;
            if !member.plan_mode_required {
                return Err(Error::InvalidArguments(
                    "you are not in plan mode: no plan approval is needed, go ahead".into(),
                ));
            }
            member.plan_request = Some(id.clone());
            Ok(())
        })?;
        let control = json!({
            "type": "plan_approval_request",
            "request_id": id,
            "from": name,
            "plan": plan,
        });
        let text = format!(
            "{name} asks you to approve its plan (request_id {id}):\n\n{plan}\n\nAnswer with SendMessage to {name}, message {{\"type\":\"plan_approval_response\",\"request_id\":\"{id}\",\"approve\":true or false,\"feedback\":\"…\"}}: approving lets {name} leave plan mode and make the changes; rejecting keeps it read-only and hands it your feedback."
        );
        Ok((text, control))
    }

    /// `name` submits `plan` to the leader (`ExitPlanMode`, or a `plan_approval_request`
    /// through `SendMessage`); returns what its tool answers.
    pub(crate) fn submit_plan(
        self: &Arc<Self>,
        team: &TeamDir,
        name: &str,
        plan: &str,
    ) -> Result<String> {
        if plan.trim().is_empty() {
            return Err(Error::InvalidArguments(
                "\"plan\" must not be empty: write the plan you ask team-lead to approve".into(),
            ));
        }
        let (text, control) = self.record_plan(team, name, plan)?;
        let id = control["request_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        self.send(
            team,
            name,
            LEADER,
            &text,
            Some("plan approval request"),
            Some(&control),
        )?;
        Ok(format!(
            "Your plan was sent to {LEADER} for approval (request_id {id}). End your turn now: the answer arrives as a message. Until {LEADER} approves, you stay in plan mode (read-only)."
        ))
    }

    /// A held teammate's turn answer as its plan (a product teammate has no `ExitPlanMode`):
    /// the message to the leader, or `None` when it cannot be recorded.
    pub(super) fn answer_as_plan(
        &self,
        team: &TeamDir,
        name: &str,
        answer: &str,
    ) -> Option<(String, Value)> {
        match self.record_plan(team, name, answer) {
            Ok(message) => Some(message),
            Err(error) => {
                tracing::warn!(%error, member = %name, "recording a teammate's plan");
                None
            }
        }
    }

    /// The leader answers the plan `request_id` (`plan_approval_response`): approving lifts
    /// the hold for the teammate's next runs; either way the teammate gets the answer and the
    /// feedback as a message (it wakes). `UNKNOWN_PLAN_REQUEST` when no plan awaits under that
    /// id. Returns what the leader's tool answers.
    pub(crate) fn answer_plan(
        self: &Arc<Self>,
        team: &TeamDir,
        request_id: &str,
        approve: bool,
        feedback: Option<&str>,
        mut control: Map<String, Value>,
    ) -> Result<String> {
        let name = team.update_config(|config| {
            let member = config
                .members
                .iter_mut()
                .find(|m| m.plan_request.as_deref() == Some(request_id))
                .ok_or_else(|| Error::UnknownPlanRequest(request_id.to_owned()))?;
            member.plan_request = None;
            if approve {
                member.plan_mode_required = false;
            }
            Ok(member.name.clone())
        })?;
        if approve
            && let Some(live) = self.state().members.get_mut(&name)
            && live.plan == PlanRun::Held
        {
            live.plan = PlanRun::Approved;
        }
        control.insert("recipient".into(), json!(name));
        let feedback = feedback
            .filter(|f| !f.trim().is_empty())
            .map(|f| format!("\n\nFeedback from {LEADER}: {f}"))
            .unwrap_or_default();
        let text = if approve {
            format!(
                "{LEADER} approved your plan (request_id {request_id}). You have left plan mode: make the changes now.{feedback}"
            )
        } else {
            format!(
                "{LEADER} rejected your plan (request_id {request_id}). You are still in plan mode (read-only): revise the plan and submit it again with ExitPlanMode (without that tool, as your answer).{feedback}"
            )
        };
        self.send(
            team,
            LEADER,
            &name,
            &text,
            None,
            Some(&Value::Object(control)),
        )?;
        Ok(if approve {
            format!("Approved {name}'s plan: {name} leaves plan mode and starts on the changes.")
        } else {
            format!("Rejected {name}'s plan: {name} stays in plan mode and revises it.")
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn take(args: Value) -> Result<TeammateMode> {
        let Value::Object(mut args) = args else {
            panic!("an object")
        };
        let mode = TeammateMode::take(&mut args);
        assert!(!args.contains_key("mode") && !args.contains_key("plan_mode_required"));
        mode
    }

    #[test]
    fn mode_and_plan_mode_required_are_read_in_claude_codes_spellings() {
        let mode = |ceiling, plan| TeammateMode { ceiling, plan };
        assert_eq!(take(json!({})).unwrap(), mode(None, false));
        assert_eq!(take(json!({"mode": "plan"})).unwrap(), mode(None, true));
        assert_eq!(
            take(json!({"mode": "acceptEdits", "plan_mode_required": true})).unwrap(),
            mode(Some(PermissionMode::AcceptEdits), true)
        );
        assert_eq!(
            take(json!({"mode": "bypassPermissions"})).unwrap(),
            mode(Some(PermissionMode::Bypass), false)
        );
        assert!(
            take(json!({"mode": "yolo"}))
                .unwrap_err()
                .to_tool_text()
                .starts_with("INVALID_ARGUMENTS: unknown mode \"yolo\"")
        );
        assert!(take(json!({"plan_mode_required": "yes"})).is_err());
    }

    /// A plan approved between a wake's read of the member and the start of its run leaves
    /// that run held, its messages kept for the next one.
    #[test]
    fn an_approval_racing_a_wake_is_not_lost() {
        assert_eq!(PlanRun::Approved.next_run(true), PlanRun::Approved);
        assert_eq!(PlanRun::Held.next_run(true), PlanRun::Held);
        assert_eq!(PlanRun::Free.next_run(true), PlanRun::Held);
        assert_eq!(PlanRun::Approved.next_run(false), PlanRun::Free);
    }

    #[test]
    fn a_held_run_gets_plan_as_its_ceiling_and_the_reason() {
        let (ceiling, reason) = hold(Some(PermissionMode::Bypass), true);
        assert_eq!(ceiling, Some(PermissionMode::Plan));
        assert!(
            reason
                .unwrap()
                .starts_with("until team-lead approves your plan")
        );
        assert_eq!(
            hold(Some(PermissionMode::AcceptEdits), false),
            (Some(PermissionMode::AcceptEdits), None)
        );
    }
}
