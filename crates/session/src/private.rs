//! The project's own state files, private to the user: every directory created mode 0700, every
//! file 0600 (as `~/.ssh`), whatever the umask leaves. Sessions, background tasks' output, teams
//! and the worktrees' locks are written through these, so a transcript (which holds what a
//! model read) is never readable by other users of the machine.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// The mode of every directory the state is kept in.
pub const DIR_MODE: u32 = 0o700;
/// The mode of every state file.
pub const FILE_MODE: u32 = 0o600;

/// `dir` and the parents it needs, each it creates mode 0700 (one that exists is left as it is).
pub fn create_dir_all(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir)
}

/// `dir`, mode 0700, failing with `AlreadyExists` when it is there (a claim on a name).
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().mode(DIR_MODE).create(dir)
}

/// Creates (or empties) the file at `path`, mode 0600 when created.
pub fn create_file(path: &Path) -> std::io::Result<File> {
    options().write(true).create(true).truncate(true).open(path)
}

/// Opens `path` for writing without truncating it, creating it mode 0600 when missing.
pub fn open_file(path: &Path) -> std::io::Result<File> {
    options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

/// Writes `bytes` to a new (or emptied) file at `path`, mode 0600 when created.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    create_file(path)?.write_all(bytes)
}

fn options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(FILE_MODE);
    options
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn what_it_creates_is_private() {
        let temp = tempfile::tempdir().unwrap();
        let deep = temp.path().join("a/b/c");
        create_dir_all(&deep).unwrap();
        for dir in ["a", "a/b", "a/b/c"] {
            assert_eq!(mode(&temp.path().join(dir)), 0o700, "{dir}");
        }
        let claimed = deep.join("team");
        create_dir(&claimed).unwrap();
        assert_eq!(mode(&claimed), 0o700);
        assert_eq!(
            create_dir(&claimed).unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
        let file = deep.join("f.json");
        write(&file, b"{}").unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(std::fs::read(&file).unwrap(), b"{}");
        let other = deep.join("g.jsonl");
        drop(create_file(&other).unwrap());
        drop(open_file(&deep.join("h.lock")).unwrap());
        assert_eq!(mode(&other), 0o600);
        assert_eq!(mode(&deep.join("h.lock")), 0o600);
    }
}
