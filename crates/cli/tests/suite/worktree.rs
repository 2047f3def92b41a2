//! Worktree isolation through the CLI, with real git: `subagent run`'s delegation with
//! `isolation: worktree` and `subagent delegate --isolation worktree` edit a worktree of the
//! repository of `--cwd`, in HOME's state dir, and never the user's checkout.

use std::path::{Path, PathBuf};
use std::process::Output;

use pretty_assertions::assert_eq;
use subagent_test_support::FakeServer;
use subagent_test_support::git::{self, git};

use super::support::{json_lines, stderr, stdout, subagent};

const SCENARIOS: &str = r#"
- name: child
  match: "ISOLATED-CHILD"
  steps:
    - tool_calls:
        - {name: write_file, input: {path: "edited.txt", content: "edited\n"}}
    - text: "child edited"
- name: parent
  match: "please isolate"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "ISOLATED-CHILD edit", subagent_type: general-purpose, isolation: worktree}
    - text: "parent done"
"#;

const DIFFSTAT: &str = " edited.txt | 1 +\n 1 file changed, 1 insertion(+)";

/// HOME, and a repository with one commit beside it (never inside HOME: the worktrees go to
/// HOME's state dir).
struct Setup {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (home, repo) = (base.join("home"), base.join("repo"));
        std::fs::create_dir(&home).unwrap();
        git::repository_at(&repo, &[("a.txt", "one\n")]);
        Self {
            _dir: dir,
            home,
            repo,
        }
    }

    /// A preset on the fake server whose spawn children may edit without asking.
    fn preset(&self, url: &str) -> PathBuf {
        let path = self.home.join("worktree.yaml");
        std::fs::write(
            &path,
            format!(
                "version: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: FAKE_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\n    config:\n      permission_mode: accept-edits\ntools:\n  - name: subagent\n    provider: spawn\n"
            ),
        )
        .unwrap();
        path
    }

    /// `subagent ARGS --preset PRESET --cwd CWD PROMPT` with the fake key.
    fn run(&self, args: &[&str], preset: &Path, cwd: &Path, prompt: &str) -> Output {
        subagent(&self.home)
            .env("FAKE_KEY", "test-key")
            .args(args)
            .arg("--preset")
            .arg(preset)
            .arg("--cwd")
            .arg(cwd)
            .arg(prompt)
            .output()
            .unwrap()
    }

    /// The worktrees kept in HOME's state dir.
    fn kept(&self) -> Vec<PathBuf> {
        let root = self.home.join(".local/state/subagents/worktrees");
        let Ok(entries) = std::fs::read_dir(root) else {
            return Vec::new();
        };
        entries.map(|entry| entry.unwrap().path()).collect()
    }

    fn branches(&self) -> String {
        git(
            &self.repo,
            &[
                "branch",
                "--list",
                "subagent/*",
                "--format=%(refname:short)",
            ],
        )
    }

    fn assert_checkout_clean(&self) {
        assert_eq!(
            git(
                &self.repo,
                &["status", "--porcelain", "--untracked-files=all"]
            ),
            ""
        );
        assert!(!self.repo.join("edited.txt").exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_isolates_a_delegation_in_a_worktree() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let setup = Setup::new();
    let output = setup.run(
        &["run", "--permission-mode", "accept-edits"],
        &setup.preset(&server.url()),
        &setup.repo,
        "please isolate",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "parent done\n");
    let kept = setup.kept();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        std::fs::read_to_string(kept[0].join("edited.txt")).unwrap(),
        "edited\n"
    );
    assert_eq!(setup.branches().lines().count(), 1);
    setup.assert_checkout_clean();
    // The parent's model heard where the worktree is.
    let requests = server.model_requests();
    let heard = requests
        .iter()
        .any(|r| format!("{:?}", r.messages).contains(&kept[0].display().to_string()));
    assert!(heard, "the parent was not told the worktree's path");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_isolation_worktree_reports_the_kept_worktree() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let setup = Setup::new();
    let preset = setup.preset(&server.url());
    let output = setup.run(
        &["delegate", "--json", "--isolation", "worktree"],
        &preset,
        &setup.repo,
        "ISOLATED-CHILD edit",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    let kept = setup.kept();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let branch = setup.branches();
    assert_eq!(
        outcome["worktree"],
        serde_json::json!({
            "path": kept[0],
            "branch": branch.trim(),
            "diffstat": DIFFSTAT,
        })
    );
    setup.assert_checkout_clean();

    // For people: the same on stderr, the answer on stdout.
    let output = setup.run(
        &["delegate", "--isolation", "worktree"],
        &preset,
        &setup.repo,
        "ISOLATED-CHILD edit",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "child edited\n");
    let second = setup
        .kept()
        .into_iter()
        .find(|path| *path != kept[0])
        .unwrap();
    let branch = git(&second, &["branch", "--show-current"]);
    assert!(
        super::support::session_as_s(&stderr(&output)).ends_with(&format!(
            "worktree kept: {} (branch {})\n{DIFFSTAT}\nsession: S (continue it: subagent delegate --preset {} --cwd {} --provider spawn --resume S PROMPT)\n",
            second.display(),
            branch.trim(),
            preset.display(),
            setup.repo.display()
        )),
        "{}",
        stderr(&output)
    );
    setup.assert_checkout_clean();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_refuses_other_isolations_and_a_cwd_outside_a_repository() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let setup = Setup::new();
    let preset = setup.preset(&server.url());
    let refused = |isolation: &str, cwd: &Path| {
        let output = setup.run(
            &["delegate", "--isolation", isolation],
            &preset,
            cwd,
            "ISOLATED-CHILD edit",
        );
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        stderr(&output)
    };
    let err = refused("remote", &setup.repo);
    assert!(
        err.contains(
            "error[INVALID_ARGUMENTS]: invalid arguments: isolation \"remote\" is not available (valid: worktree)"
        ),
        "{err}"
    );
    let err = refused("worktree", &setup.home);
    assert!(
        err.contains(&format!(
            "error[INVALID_ARGUMENTS]: invalid arguments: worktree isolation needs the parent's working directory to be inside a git repository: {} is not",
            setup.home.display()
        )),
        "{err}"
    );
    assert_eq!(server.model_requests().len(), 0);
    assert_eq!(setup.kept(), Vec::<PathBuf>::new());
    setup.assert_checkout_clean();
}
