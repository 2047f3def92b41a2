//! Real git repositories for tests: one `git` runner (committer and default branch set on the
//! command line, never in the environment) and a repository with one commit.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs git in `dir` with a test committer and `main` as the default branch; its stdout.
///
/// # Panics
/// When git cannot run or fails (the message holds its stderr).
pub fn git(dir: &Path, args: &[&str]) -> String {
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
        .unwrap_or_else(|e| panic!("git {args:?} in {}: {e}", dir.display()));
    assert!(
        output.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap_or_else(|e| panic!("git {args:?}: {e}"))
}

/// Creates `repo` (and its parents) holding `files` (path relative to `repo`, content) and
/// makes them its first commit.
///
/// # Panics
/// When a file cannot be written or git fails.
pub fn repository_at(repo: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let path = repo.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("creating {}: {e}", parent.display()));
        }
        std::fs::write(&path, content)
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
    std::fs::create_dir_all(repo).unwrap_or_else(|e| panic!("creating {}: {e}", repo.display()));
    git(repo, &["init", "--quiet"]);
    git(repo, &["add", "--all"]);
    git(repo, &["commit", "--quiet", "-m", "first"]);
}

/// `git status --porcelain --untracked-files=all` of `repo`: empty when its checkout is clean.
pub fn status(repo: &Path) -> String {
    git(repo, &["status", "--porcelain", "--untracked-files=all"])
}

/// A repository with `files` in their first commit, at `repo` in a temp dir of its own (its
/// path canonical, so it compares equal to what a child reports). Keep the temp dir alive; the
/// repository's parent is free for a worktree root beside it.
///
/// # Panics
/// When the temp dir cannot be made or git fails.
#[must_use]
pub fn repository(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("a temp dir: {e}"));
    let base = dir
        .path()
        .canonicalize()
        .unwrap_or_else(|e| panic!("the temp dir: {e}"));
    let repo = base.join("repo");
    repository_at(&repo, files);
    (dir, repo)
}
