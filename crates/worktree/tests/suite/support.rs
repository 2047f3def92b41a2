//! A real git repository in a temp dir, a provider whose child does what its prompt says in
//! the cwd it is given, and a registry with the worktree isolator.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use subagent_core::registry::Registry;
use subagent_core::{
    Capabilities, Capability, Error, Isolation, Outcome, Result, Run, StartRequest,
    SubagentProvider,
};
use subagent_worktree::Worktrees;

/// Runs git in `dir` (committer set on the command line, never in our environment); its
/// stdout.
pub(super) fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A repository with one commit: `a.txt` and `sub/b.txt`, and `.gitignore` ignoring
/// `target/`. Returns the temp dir (keep it alive) and the repository's canonical path.
pub(super) fn repository() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    std::fs::write(repo.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(repo.join("sub/b.txt"), "bee\n").unwrap();
    std::fs::write(repo.join(".gitignore"), "target/\n").unwrap();
    git(&repo, &["init", "--quiet"]);
    git(&repo, &["add", "--all"]);
    git(&repo, &["commit", "--quiet", "-m", "first"]);
    (dir, repo)
}

/// `git status --porcelain` of `repo`: empty when the user's checkout is clean.
pub(super) fn status(repo: &Path) -> String {
    git(repo, &["status", "--porcelain", "--untracked-files=all"])
}

/// The worktrees git knows of `repo`, main first: their paths.
pub(super) fn worktrees(repo: &Path) -> Vec<PathBuf> {
    git(repo, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|line| line.strip_prefix("worktree "))
        .map(PathBuf::from)
        .collect()
}

/// The branches of `repo` under `subagent/`.
pub(super) fn subagent_branches(repo: &Path) -> Vec<String> {
    git(
        repo,
        &[
            "branch",
            "--list",
            "subagent/*",
            "--format=%(refname:short)",
        ],
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

/// A child that acts in the cwd it is given, as its prompt says (words separated by `;`):
/// `write NAME TEXT` writes a file, `delete NAME` removes one, `commit` commits everything,
/// `pause MS` sleeps, `wait` waits until cancelled, `fail` refuses to start. Records each
/// start's cwd.
#[derive(Default)]
pub(super) struct Actor {
    pub cwds: Mutex<Vec<PathBuf>>,
}

impl Actor {
    fn act(cwd: &Path, step: &str) {
        let words: Vec<&str> = step.split_whitespace().collect();
        match words.as_slice() {
            ["write", name, text] => {
                let path = cwd.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, format!("{text}\n")).unwrap();
            }
            ["delete", name] => std::fs::remove_file(cwd.join(name)).unwrap(),
            ["pause", ms] => {
                std::thread::sleep(std::time::Duration::from_millis(ms.parse().unwrap()))
            }
            ["commit"] => {
                git(cwd, &["add", "--all"]);
                git(cwd, &["commit", "--quiet", "-m", "child"]);
            }
            [] | ["nothing"] | ["wait"] | ["fail"] => {}
            other => panic!("unknown step {other:?}"),
        }
    }
}

#[async_trait]
impl SubagentProvider for Actor {
    fn name(&self) -> &str {
        "actor"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE.with(Capability::Isolation, true)
    }

    async fn start(&self, request: StartRequest) -> Result<Run> {
        let cwd = request.parent.cwd.clone();
        self.cwds.lock().unwrap().push(cwd.clone());
        let prompt = request.prompt_text();
        if prompt.contains("fail") {
            return Err(Error::spawn_failed("the actor refuses"));
        }
        let (sender, run) = Run::channel("actor", &request);
        tokio::spawn(async move {
            if prompt.contains("wait") {
                sender.cancel_token().cancelled().await;
            }
            for step in prompt.split(';') {
                Actor::act(&cwd, step.trim());
            }
            let outcome = if sender.is_cancelled() {
                Outcome::cancelled()
            } else {
                Outcome::completed(format!("did: {prompt}"))
            };
            sender.finish(outcome);
        });
        Ok(run)
    }
}

/// A registry with `actor` and the worktree isolator, its worktrees in `root`.
pub(super) fn registry(actor: &Arc<Actor>, root: &Path) -> Registry {
    let mut registry = Registry::new();
    registry
        .register(Arc::clone(actor) as Arc<dyn SubagentProvider>)
        .unwrap();
    registry.set_isolator(Arc::new(Worktrees::new().with_root(root)));
    registry
}

/// Where the tests put the worktrees of `repo`: beside it, in `worktrees/`.
pub(super) fn worktrees_root(repo: &Path) -> PathBuf {
    repo.parent().unwrap().join("worktrees")
}

/// A repository (see [`repository`]), an [`Actor`] and a registry isolating its runs in
/// worktrees beside the repository.
pub(super) fn isolating() -> (tempfile::TempDir, PathBuf, Arc<Actor>, Registry) {
    let (dir, repo) = repository();
    let actor = Arc::new(Actor::default());
    let registry = registry(&actor, &worktrees_root(&repo));
    (dir, repo, actor, registry)
}

/// The outcome of `prompt` run by the actor isolated from a parent in `cwd`.
pub(super) async fn outcome_of(registry: &Registry, prompt: &str, cwd: &Path) -> Outcome {
    registry
        .start("actor", isolated(prompt, cwd))
        .await
        .unwrap()
        .outcome()
        .await
}

/// An isolated request from a parent in `cwd`.
pub(super) fn isolated(prompt: &str, cwd: &Path) -> StartRequest {
    StartRequest::builder(prompt)
        .cwd(cwd)
        .isolation(Isolation::Worktree)
        .build()
}

/// The id part of a `subagent/<id>` branch.
pub(super) fn id_of(branch: &str) -> &str {
    branch.strip_prefix("subagent/").unwrap()
}

/// Where the worktree of `branch` of `repo` lives.
pub(super) fn worktree_path(repo: &Path, branch: &str) -> PathBuf {
    worktrees_root(repo).join(format!("repo-{}", id_of(branch)))
}
