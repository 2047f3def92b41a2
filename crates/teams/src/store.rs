//! Teams on disk: `<root>/<team>/config.json`, `inboxes/<member>.json`, `tasks.json`, and
//! `.lock`, an exclusive advisory lock every read-modify-write holds (a team's files are
//! shared by the leader's process and anything else that opens the team). Files are replaced
//! whole (written beside, then renamed), so a reader never sees half a file.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use subagent_core::time::now_ms;
use subagent_session::private;

use crate::model::{
    EVERYONE, Inbox, LEADER, Member, MemberStatus, Message, TaskList, TeamConfig, check_name,
};
use crate::{Error, Result};

const CONFIG: &str = "config.json";
const TASKS: &str = "tasks.json";
const INBOXES: &str = "inboxes";
const LOCK: &str = ".lock";

/// Where a project's teams live (the CLI gives `<state dir>/subagents/teams/<project>`).
#[derive(Clone, Debug)]
pub struct TeamStore {
    root: PathBuf,
}

impl TeamStore {
    /// Teams under `root` (made when the first team is).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The folder teams live in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Makes a team led by [`LEADER`]; `TEAM_EXISTS` when one of that name is on disk.
    pub fn create(&self, name: &str, description: &str) -> Result<TeamDir> {
        check_name("team_name", name)?;
        let dir = self.root.join(name);
        private::create_dir_all(&self.root).map_err(|e| Error::io(&self.root, e))?;
        // The folder is the claim on the name: of two creators, one makes it.
        match private::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(Error::TeamExists(name.to_owned()));
            }
            Err(e) => return Err(Error::io(&dir, e)),
        }
        let team = TeamDir {
            dir,
            name: name.to_owned(),
        };
        team.lock_file(|| {
            private::create_dir_all(&team.dir.join(INBOXES))
                .map_err(|e| Error::io(&team.dir.join(INBOXES), e))?;
            let config = TeamConfig {
                name: name.to_owned(),
                description: description.to_owned(),
                lead: LEADER.to_owned(),
                created_at: now_ms(),
                members: vec![Member {
                    name: LEADER.to_owned(),
                    agent_type: None,
                    provider: String::new(),
                    status: MemberStatus::Lead,
                    session_id: None,
                    cwd: None,
                    plan_mode_required: false,
                    plan_request: None,
                }],
            };
            write_json(&team.dir.join(CONFIG), &config)?;
            write_json(&team.dir.join(TASKS), &TaskList::default())
        })?;
        Ok(team)
    }

    /// The team `name` on disk; `TEAM_NOT_FOUND` when there is none.
    pub fn open(&self, name: &str) -> Result<TeamDir> {
        check_name("team_name", name)?;
        let dir = self.root.join(name);
        if !dir.join(CONFIG).is_file() {
            return Err(Error::TeamNotFound(name.to_owned()));
        }
        Ok(TeamDir {
            dir,
            name: name.to_owned(),
        })
    }

    /// Every team on disk, by name.
    pub fn list(&self) -> Result<Vec<TeamConfig>> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&self.root, e)),
        };
        let mut teams = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&self.root, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Ok(team) = self.open(&name) {
                teams.push(team.config()?);
            }
        }
        teams.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(teams)
    }

    /// Removes the team `name`; `TEAM_ACTIVE` while a member still runs or waits.
    pub fn delete(&self, name: &str) -> Result<()> {
        let team = self.open(name)?;
        team.locked(|| {
            let config: TeamConfig = read_json(&team.dir.join(CONFIG))?;
            let active: Vec<String> = config
                .members
                .iter()
                .filter(|m| m.status.is_active())
                .map(|m| m.name.clone())
                .collect();
            if !active.is_empty() {
                return Err(Error::TeamActive {
                    team: name.to_owned(),
                    active,
                });
            }
            // Everything but the lock, so a writer waiting on it finds no team afterwards.
            for item in [CONFIG, TASKS, INBOXES] {
                let path = team.dir.join(item);
                let removed = if path.is_dir() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
                match removed {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(Error::io(&path, e)),
                }
            }
            Ok(())
        })?;
        std::fs::remove_dir_all(&team.dir).map_err(|e| Error::io(&team.dir, e))
    }
}

/// One team's folder.
#[derive(Clone, Debug)]
pub struct TeamDir {
    dir: PathBuf,
    name: String,
}

impl TeamDir {
    /// The team's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The team's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs `f` holding the team's lock (blocking until it is free); `TEAM_NOT_FOUND` when the
    /// team was deleted meanwhile.
    fn locked<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.lock_file(|| {
            if !self.dir.join(CONFIG).is_file() {
                return Err(Error::TeamNotFound(self.name.clone()));
            }
            f()
        })
    }

    fn lock_file<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let path = self.dir.join(LOCK);
        let file = private::open_file(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::TeamNotFound(self.name.clone()),
            _ => Error::io(&path, e),
        })?;
        file.lock().map_err(|e| Error::io(&path, e))?;
        let result = f();
        drop(file);
        result
    }

    /// The team's members and leader.
    pub fn config(&self) -> Result<TeamConfig> {
        self.locked(|| read_json(&self.dir.join(CONFIG)))
    }

    /// Changes the configuration under the lock (written back only when `f` succeeds).
    pub fn update_config<T>(&self, f: impl FnOnce(&mut TeamConfig) -> Result<T>) -> Result<T> {
        self.locked(|| {
            let path = self.dir.join(CONFIG);
            let mut config: TeamConfig = read_json(&path)?;
            let value = f(&mut config)?;
            write_json(&path, &config)?;
            Ok(value)
        })
    }

    /// Adds `member`; `TEAMMATE_EXISTS` when an active member has its name (a stopped one is
    /// replaced, its unread messages kept).
    pub fn add_member(&self, member: Member) -> Result<()> {
        check_name("name", &member.name)?;
        self.update_config(|config| {
            match config.member_mut(&member.name) {
                Some(old) if old.status.is_active() || old.status == MemberStatus::Lead => {
                    return Err(Error::TeammateExists(member.name.clone()));
                }
                Some(old) => *old = member,
                None => config.members.push(member),
            }
            Ok(())
        })
    }

    /// Sets `name`'s status (and its session when given); returns the member as it is now.
    pub fn set_status(
        &self,
        name: &str,
        status: MemberStatus,
        session: Option<(String, Option<String>)>,
    ) -> Result<Member> {
        self.update_config(|config| {
            let known = config.names();
            let member = config
                .member_mut(name)
                .ok_or_else(|| Error::unknown_teammate(name, &self.name, known))?;
            if member.status != MemberStatus::Lead {
                member.status = status;
            }
            if let Some((id, cwd)) = session {
                member.session_id = Some(id);
                member.cwd = cwd;
            }
            Ok(member.clone())
        })
    }

    /// `from` sends `text` (or a control message) to `to`, a member or [`EVERYONE`] (every
    /// member but the sender that still takes messages). Returns the recipients. Refused for an
    /// unknown sender or recipient (`UNKNOWN_TEAMMATE`), and a recipient that stopped
    /// (`TEAMMATE_STOPPED`).
    pub fn send(
        &self,
        from: &str,
        to: &str,
        text: &str,
        summary: Option<&str>,
        control: Option<&Value>,
    ) -> Result<Vec<String>> {
        self.locked(|| {
            let config: TeamConfig = read_json(&self.dir.join(CONFIG))?;
            if config.member(from).is_none() {
                return Err(Error::unknown_teammate(from, &self.name, config.names()));
            }
            let recipients: Vec<String> = if to == EVERYONE || to == "all" {
                config
                    .members
                    .iter()
                    .filter(|m| m.name != from && m.status != MemberStatus::Stopped)
                    .map(|m| m.name.clone())
                    .collect()
            } else {
                let member = config
                    .member(to)
                    .ok_or_else(|| Error::unknown_teammate(to, &self.name, config.names()))?;
                if member.status == MemberStatus::Stopped {
                    return Err(Error::TeammateStopped(to.to_owned()));
                }
                vec![to.to_owned()]
            };
            for recipient in &recipients {
                let path = self.inbox_path(recipient);
                let mut inbox: Inbox = read_json_or_default(&path)?;
                inbox.next_id = inbox.next_id.max(1);
                inbox.messages.push(Message {
                    id: inbox.next_id,
                    from: from.to_owned(),
                    text: text.to_owned(),
                    summary: summary.map(str::to_owned),
                    control: control.cloned(),
                    timestamp: now_ms(),
                    read: false,
                });
                inbox.next_id += 1;
                write_json(&path, &inbox)?;
            }
            Ok(recipients)
        })
    }

    fn inbox_path(&self, name: &str) -> PathBuf {
        self.dir.join(INBOXES).join(format!("{name}.json"))
    }

    /// Every message of `name`'s inbox, read or not, oldest first (what a viewer shows).
    pub fn messages(&self, name: &str) -> Result<Vec<Message>> {
        check_name("name", name)?;
        self.locked(|| {
            let inbox: Inbox = read_json_or_default(&self.inbox_path(name))?;
            Ok(inbox.messages)
        })
    }

    /// `name`'s unread messages, oldest first (still unread afterwards).
    pub fn unread(&self, name: &str) -> Result<Vec<Message>> {
        check_name("name", name)?;
        self.locked(|| {
            let inbox: Inbox = read_json_or_default(&self.inbox_path(name))?;
            Ok(inbox.messages.into_iter().filter(|m| !m.read).collect())
        })
    }

    /// Marks the messages `ids` of `name`'s inbox read (after they were handed to a turn).
    pub fn mark_read(&self, name: &str, ids: &[u64]) -> Result<()> {
        check_name("name", name)?;
        self.locked(|| {
            let path = self.inbox_path(name);
            let mut inbox: Inbox = read_json_or_default(&path)?;
            for message in &mut inbox.messages {
                if ids.contains(&message.id) {
                    message.read = true;
                }
            }
            write_json(&path, &inbox)
        })
    }

    /// `name`'s unread messages, marked read in the same locked step: what a turn that takes
    /// them at once (an in-process run's next message) uses, so two takers never both get one.
    pub fn take_unread(&self, name: &str) -> Result<Vec<Message>> {
        check_name("name", name)?;
        self.locked(|| {
            let path = self.inbox_path(name);
            let mut inbox: Inbox = read_json_or_default(&path)?;
            let mut taken = Vec::new();
            for message in &mut inbox.messages {
                if !message.read {
                    message.read = true;
                    taken.push(message.clone());
                }
            }
            if !taken.is_empty() {
                write_json(&path, &inbox)?;
            }
            Ok(taken)
        })
    }

    /// The task list.
    pub fn task_list(&self) -> Result<TaskList> {
        self.locked(|| read_json_or_default(&self.dir.join(TASKS)))
    }

    /// Changes the task list under the lock (written back only when `f` succeeds).
    pub fn tasks<T>(&self, f: impl FnOnce(&mut TaskList) -> Result<T>) -> Result<T> {
        self.locked(|| {
            let path = self.dir.join(TASKS);
            let mut list: TaskList = read_json_or_default(&path)?;
            let value = f(&mut list)?;
            write_json(&path, &list)?;
            Ok(value)
        })
    }
}

/// The most bytes a team's state file may hold to be read (a task list of thousands of tasks
/// fits many times over; a planted `/dev/zero` or FIFO is refused by the reader itself).
const MAX_STATE_FILE: u64 = 16 << 20;

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes =
        subagent_session::read_user_file(path, MAX_STATE_FILE).map_err(|e| Error::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

fn read_json_or_default<T: DeserializeOwned + Default>(path: &Path) -> Result<T> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        _ => read_json(path),
    }
}

/// Writes `value` beside `path` and renames it over, so readers see the old or the new file.
fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_vec_pretty(value).map_err(|e| Error::Corrupt {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    private::write(&tmp, &text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn team() -> (tempfile::TempDir, TeamStore, TeamDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = TeamStore::new(dir.path().join("teams"));
        let team = store.create("alpha", "test team").unwrap();
        for name in ["alice", "bob"] {
            team.add_member(Member {
                name: name.into(),
                agent_type: None,
                provider: "spawn".into(),
                status: MemberStatus::Idle,
                session_id: None,
                cwd: None,
                plan_mode_required: false,
                plan_request: None,
            })
            .unwrap();
        }
        (dir, store, team)
    }

    #[test]
    fn a_team_is_found_again_by_a_new_store() {
        let (dir, store, _team) = team();
        assert_eq!(
            store.create("alpha", "").unwrap_err().code(),
            crate::ErrorCode::TeamExists
        );
        let again = TeamStore::new(dir.path().join("teams"));
        let teams = again.list().unwrap();
        assert_eq!(teams.len(), 1);
        assert_eq!(teams[0].names(), ["team-lead", "alice", "bob"]);
        assert_eq!(
            again.open("beta").unwrap_err().to_string(),
            "no team named \"beta\" (TeamCreate makes one)"
        );
    }

    /// A team's files hold what teammates told each other: private to the user (0700/0600)
    /// whatever the umask, as sessions are.
    #[test]
    fn a_teams_files_are_private_to_the_user() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, _store, team) = team();
        team.send("alice", "*", "hi all", None, None).unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let mut stack = vec![dir.path().join("teams")];
        let mut files = 0;
        while let Some(at) = stack.pop() {
            assert_eq!(mode(&at), 0o700, "{}", at.display());
            for entry in std::fs::read_dir(&at).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    assert_eq!(mode(&path), 0o600, "{}", path.display());
                    files += 1;
                }
            }
        }
        // The config, its lock, and the inboxes written.
        assert!(files >= 3, "{files}");
    }

    /// A team's file replaced by a FIFO or a symlink to `/dev/zero` (planted in the state
    /// directory) is refused at once: read with `std::fs::read`, the FIFO hung and the device
    /// grew without bound.
    #[test]
    fn a_planted_fifo_or_device_is_refused_without_blocking() {
        let (dir, _store, team) = team();
        let tasks = dir.path().join("teams/alpha").join(TASKS);
        std::fs::remove_file(&tasks).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&tasks)
            .status()
            .unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(team.task_list().map(|_| ()).map_err(|e| e.to_string()));
        });
        let result = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("reading a FIFO blocked");
        assert!(result.unwrap_err().contains("not a regular file"));
        std::fs::remove_file(&tasks).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &tasks).unwrap();
        let again = TeamStore::new(dir.path().join("teams"))
            .open("alpha")
            .unwrap();
        assert!(
            again
                .task_list()
                .unwrap_err()
                .to_string()
                .contains("not a regular file")
        );
    }

    #[test]
    fn messages_to_one_or_everyone_are_read_once() {
        let (_dir, _store, team) = team();
        assert_eq!(
            team.send("alice", "*", "hi all", None, None).unwrap(),
            ["team-lead", "bob"]
        );
        team.send("team-lead", "bob", "task 1 is yours", Some("assign"), None)
            .unwrap();
        let unread = team.unread("bob").unwrap();
        assert_eq!(unread.len(), 2);
        team.mark_read("bob", &[unread[0].id]).unwrap();
        let taken = team.take_unread("bob").unwrap();
        assert_eq!(taken.len(), 1);
        assert_eq!(
            taken[0].to_prompt(),
            "<teammate-message teammate_id=\"team-lead\" summary=\"assign\">\ntask 1 is yours\n</teammate-message>"
        );
        assert!(team.take_unread("bob").unwrap().is_empty());
        let error = team.send("alice", "zed", "?", None, None).unwrap_err();
        assert_eq!(error.code(), crate::ErrorCode::UnknownTeammate);
    }

    #[test]
    fn a_stopped_member_takes_no_messages_and_an_active_team_is_not_deleted() {
        let (_dir, store, team) = team();
        team.set_status("alice", MemberStatus::Stopped, None)
            .unwrap();
        let error = team.send("bob", "alice", "?", None, None).unwrap_err();
        assert_eq!(error.code(), crate::ErrorCode::TeammateStopped);
        assert_eq!(
            team.send("bob", "*", "all", None, None).unwrap(),
            ["team-lead"]
        );
        let error = store.delete("alpha").unwrap_err();
        assert_eq!(error.code(), crate::ErrorCode::TeamActive);
        team.set_status("bob", MemberStatus::Stopped, None).unwrap();
        store.delete("alpha").unwrap();
        assert!(store.list().unwrap().is_empty());
        assert_eq!(
            team.config().unwrap_err().code(),
            crate::ErrorCode::TeamNotFound
        );
    }
}
