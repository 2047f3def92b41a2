//! The task list's rules, on the list as data (the store applies them under its lock).
//!
//! A task is claimed by giving it an owner (or moving it to `in_progress`, which makes the
//! caller its owner). A task owned by one member cannot be claimed by another
//! (`TASK_ALREADY_CLAIMED`; its owner or the leader may hand it on or release it with an empty
//! owner), and a task with a blocker that is not completed cannot be claimed (`TASK_BLOCKED`).
//! `blockedBy` and `blocks` are kept as two sides of one relation, without cycles.

use serde_json::{Map, Value};

use crate::model::{LEADER, Task, TaskList, TaskStatus};
use crate::{Error, Result};

/// What a `TaskUpdate` changes (every field optional, as in Claude Code).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskChanges {
    /// New subject.
    pub subject: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// New present-continuous form.
    pub active_form: Option<String>,
    /// New status; `None` inside `Some` = `deleted` (the task is removed).
    pub status: Option<Option<TaskStatus>>,
    /// New owner; an empty string releases the task.
    pub owner: Option<String>,
    /// Tasks this one blocks, added.
    pub add_blocks: Vec<String>,
    /// Tasks that block this one, added.
    pub add_blocked_by: Vec<String>,
    /// Metadata keys merged in (a `null` value deletes its key).
    pub metadata: Option<Map<String, Value>>,
}

impl TaskList {
    /// Adds a pending, unowned task and returns it.
    pub fn create(
        &mut self,
        subject: String,
        description: String,
        active_form: Option<String>,
        metadata: Map<String, Value>,
    ) -> Task {
        self.next_id = self.next_id.max(1);
        let task = Task {
            id: self.next_id.to_string(),
            subject,
            description,
            active_form,
            status: TaskStatus::Pending,
            owner: None,
            blocks: Vec::new(),
            blocked_by: Vec::new(),
            metadata,
        };
        self.next_id += 1;
        self.tasks.push(task.clone());
        task
    }

    /// The task `id`.
    pub fn get(&self, id: &str) -> Result<&Task> {
        self.tasks
            .iter()
            .find(|t| t.id == id)
            .ok_or_else(|| Error::TaskNotFound(id.to_owned()))
    }

    fn index(&self, id: &str) -> Result<usize> {
        self.tasks
            .iter()
            .position(|t| t.id == id)
            .ok_or_else(|| Error::TaskNotFound(id.to_owned()))
    }

    /// The blockers of `task` that are not completed yet.
    pub fn open_blockers(&self, task: &Task) -> Vec<String> {
        task.blocked_by
            .iter()
            .filter(|id| {
                self.tasks
                    .iter()
                    .any(|t| &t.id == *id && t.status != TaskStatus::Completed)
            })
            .cloned()
            .collect()
    }

    /// `actor` claims `id`: it becomes the owner and the task `in_progress`.
    pub fn claim(&mut self, id: &str, actor: &str) -> Result<Task> {
        let changes = TaskChanges {
            owner: Some(actor.to_owned()),
            status: Some(Some(TaskStatus::InProgress)),
            ..TaskChanges::default()
        };
        self.update(id, changes, actor)?
            .ok_or_else(|| Error::TaskNotFound(id.to_owned()))
    }

    /// Applies `changes` to `id` on behalf of `actor`; `None` when the task was deleted. Nothing
    /// changes when any rule refuses.
    pub fn update(&mut self, id: &str, changes: TaskChanges, actor: &str) -> Result<Option<Task>> {
        let index = self.index(id)?;
        if changes.status == Some(None) {
            self.tasks.remove(index);
            for task in &mut self.tasks {
                task.blocks.retain(|b| b != id);
                task.blocked_by.retain(|b| b != id);
            }
            return Ok(None);
        }
        // Relations first, on a copy: a refusal leaves the list as it was.
        let mut list = self.clone();
        for blocker in &changes.add_blocked_by {
            list.relate(blocker, id)?;
        }
        for blocked in &changes.add_blocks {
            list.relate(id, blocked)?;
        }
        let current = list.get(id)?.clone();
        let new_owner = match (&changes.owner, changes.status) {
            (Some(owner), _) => Some(owner.clone()).filter(|o| !o.is_empty()),
            (None, Some(Some(TaskStatus::InProgress))) if current.owner.is_none() => {
                Some(actor.to_owned())
            }
            (None, _) => current.owner.clone(),
        };
        let claims = new_owner.is_some() && new_owner != current.owner;
        // Taking (or releasing) a task someone else holds: only its owner or the leader may.
        if changes.owner.is_some()
            && let Some(owner) = &current.owner
            && new_owner.as_ref() != Some(owner)
            && actor != owner
            && actor != LEADER
        {
            return Err(Error::TaskAlreadyClaimed {
                id: id.to_owned(),
                owner: owner.clone(),
            });
        }
        let starting = changes.status == Some(Some(TaskStatus::InProgress))
            && current.status != TaskStatus::InProgress;
        if claims || starting {
            let open = list.open_blockers(&current);
            if !open.is_empty() {
                return Err(Error::TaskBlocked {
                    id: id.to_owned(),
                    blockers: open,
                });
            }
        }
        let index = list.index(id)?;
        let task = &mut list.tasks[index];
        task.owner = new_owner;
        if let Some(subject) = changes.subject {
            task.subject = subject;
        }
        if let Some(description) = changes.description {
            task.description = description;
        }
        if let Some(active_form) = changes.active_form {
            task.active_form = Some(active_form);
        }
        if let Some(Some(status)) = changes.status {
            task.status = status;
        }
        if let Some(metadata) = changes.metadata {
            for (key, value) in metadata {
                if value.is_null() {
                    task.metadata.remove(&key);
                } else {
                    task.metadata.insert(key, value);
                }
            }
        }
        let task = task.clone();
        *self = list;
        Ok(Some(task))
    }

    /// `blocker` blocks `blocked` (both sides recorded); refused for a missing task, a task
    /// blocking itself, or a cycle.
    fn relate(&mut self, blocker: &str, blocked: &str) -> Result<()> {
        self.index(blocker)?;
        self.index(blocked)?;
        if blocker == blocked || self.reaches(blocked, blocker) {
            return Err(Error::InvalidArguments(format!(
                "task {blocker} cannot block task {blocked}: that would make a cycle"
            )));
        }
        let b = self.index(blocker)?;
        if !self.tasks[b].blocks.iter().any(|x| x == blocked) {
            self.tasks[b].blocks.push(blocked.to_owned());
        }
        let d = self.index(blocked)?;
        if !self.tasks[d].blocked_by.iter().any(|x| x == blocker) {
            self.tasks[d].blocked_by.push(blocker.to_owned());
        }
        Ok(())
    }

    /// Whether `to` is reachable from `from` by following `blocks`.
    fn reaches(&self, from: &str, to: &str) -> bool {
        let mut seen = vec![from.to_owned()];
        let mut next = vec![from.to_owned()];
        while let Some(id) = next.pop() {
            if id == to {
                return true;
            }
            if let Ok(task) = self.get(&id) {
                for b in &task.blocks {
                    if !seen.contains(b) {
                        seen.push(b.clone());
                        next.push(b.clone());
                    }
                }
            }
        }
        false
    }

    /// The list as a model reads it: one line per task (id, status, owner, subject, blockers
    /// still open).
    pub fn render(&self) -> String {
        if self.tasks.is_empty() {
            return "No tasks.".to_owned();
        }
        self.tasks
            .iter()
            .map(|task| {
                let owner = task
                    .owner
                    .as_deref()
                    .map(|o| format!(" (owner: {o})"))
                    .unwrap_or_default();
                let open = self.open_blockers(task);
                let blocked = if open.is_empty() {
                    String::new()
                } else {
                    format!(" [blocked by {}]", open.join(", "))
                };
                format!(
                    "#{} [{}] {}{owner}{blocked}",
                    task.id,
                    task.status.as_str(),
                    task.subject
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn list(n: usize) -> TaskList {
        let mut list = TaskList::default();
        for i in 0..n {
            list.create(format!("task {i}"), String::new(), None, Map::new());
        }
        list
    }

    fn block(list: &mut TaskList, blocker: &str, blocked: &str) {
        let changes = TaskChanges {
            add_blocked_by: vec![blocker.to_owned()],
            ..TaskChanges::default()
        };
        list.update(blocked, changes, LEADER).unwrap();
    }

    #[test]
    fn ids_count_from_one() {
        let list = list(3);
        let ids: Vec<&str> = list.tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["1", "2", "3"]);
    }

    #[test]
    fn a_claimed_task_cannot_be_claimed_by_another() {
        let mut list = list(1);
        list.claim("1", "alice").unwrap();
        let error = list.claim("1", "bob").unwrap_err();
        assert_eq!(error.code(), crate::ErrorCode::TaskAlreadyClaimed);
        assert_eq!(
            error.to_string(),
            "task 1 is already claimed by alice; pick another task"
        );
        assert_eq!(list.get("1").unwrap().owner.as_deref(), Some("alice"));
        // Its owner claiming again is no change, and the leader may hand it on.
        list.claim("1", "alice").unwrap();
        let changes = TaskChanges {
            owner: Some("bob".into()),
            ..TaskChanges::default()
        };
        list.update("1", changes, LEADER).unwrap();
        assert_eq!(list.get("1").unwrap().owner.as_deref(), Some("bob"));
    }

    #[test]
    fn a_blocked_task_waits_for_its_blockers() {
        let mut list = list(3);
        block(&mut list, "1", "3");
        block(&mut list, "2", "3");
        assert_eq!(list.get("1").unwrap().blocks, ["3"]);
        assert_eq!(list.get("3").unwrap().blocked_by, ["1", "2"]);
        let error = list.claim("3", "carol").unwrap_err();
        assert_eq!(error.code(), crate::ErrorCode::TaskBlocked);
        assert_eq!(
            error.to_string(),
            "task 3 is blocked by task(s) 1, 2 that are not completed yet"
        );
        for id in ["1", "2"] {
            list.claim(id, "alice").unwrap();
            let done = TaskChanges {
                status: Some(Some(TaskStatus::Completed)),
                ..TaskChanges::default()
            };
            list.update(id, done, "alice").unwrap();
        }
        let task = list.claim("3", "carol").unwrap();
        assert_eq!(task.status, TaskStatus::InProgress);
        assert_eq!(task.owner.as_deref(), Some("carol"));
    }

    #[test]
    fn cycles_and_missing_tasks_are_refused_without_change() {
        let mut list = list(2);
        block(&mut list, "1", "2");
        let before = list.clone();
        let changes = TaskChanges {
            add_blocked_by: vec!["2".into()],
            ..TaskChanges::default()
        };
        let error = list.update("1", changes, LEADER).unwrap_err();
        assert_eq!(
            error.code(),
            crate::ErrorCode::Core(subagent_core::ErrorCode::InvalidArguments)
        );
        let changes = TaskChanges {
            add_blocked_by: vec!["9".into()],
            ..TaskChanges::default()
        };
        assert_eq!(
            list.update("1", changes, LEADER).unwrap_err().code(),
            crate::ErrorCode::TaskNotFound
        );
        assert_eq!(list, before);
    }

    #[test]
    fn in_progress_without_owner_makes_the_caller_its_owner_and_delete_unlinks() {
        let mut list = list(2);
        block(&mut list, "1", "2");
        let changes = TaskChanges {
            status: Some(Some(TaskStatus::InProgress)),
            ..TaskChanges::default()
        };
        let task = list.update("1", changes, "dave").unwrap().unwrap();
        assert_eq!(task.owner.as_deref(), Some("dave"));
        let delete = TaskChanges {
            status: Some(None),
            ..TaskChanges::default()
        };
        assert_eq!(list.update("1", delete, LEADER).unwrap(), None);
        assert!(list.get("2").unwrap().blocked_by.is_empty());
        assert_eq!(
            list.render(),
            "#2 [pending] task 1",
            "the deleted task is gone and no longer blocks"
        );
    }
}
