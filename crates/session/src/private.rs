//! The project's own state files, private to the user: every directory created mode 0700, every
//! file 0600 (as `~/.ssh`), whatever the umask leaves. Sessions, background tasks' output, teams
//! and the worktrees' locks are written through these, so a transcript (which holds what a
//! model read) is never readable by other users of the machine.
//!
//! A state file is only ever a regular file opened where it is: the open does not follow a
//! symbolic link in the last component and does not block, and what was opened is checked to be
//! a regular file. So a link planted in the state directory cannot make a run cut or overwrite a
//! file elsewhere, and a planted FIFO or device is refused at once instead of hanging the open.

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
///
/// # Errors
/// [`std::io::ErrorKind::InvalidInput`] when `path` is a symbolic link, a FIFO, a device, a
/// socket or a directory (nothing is emptied), else the operating system's error.
pub fn create_file(path: &Path) -> std::io::Result<File> {
    // Opened without truncating, checked, then emptied: `O_TRUNC` would act before the check.
    let file = open_regular(options().write(true).create(true).truncate(false), path)?;
    file.set_len(0)?;
    Ok(file)
}

/// Opens `path` for writing without truncating it, creating it mode 0600 when missing.
///
/// # Errors
/// Those of [`create_file`].
pub fn open_file(path: &Path) -> std::io::Result<File> {
    open_regular(options().write(true).create(true).truncate(false), path)
}

/// Opens `path` for appending (every write lands at its end, even with other writers),
/// creating it mode 0600 when missing.
///
/// # Errors
/// Those of [`create_file`].
pub fn append_file(path: &Path) -> std::io::Result<File> {
    open_regular(options().append(true).create(true), path)
}

/// Opens the existing file at `path` for writing, without truncating or creating it.
///
/// # Errors
/// Those of [`create_file`]; [`std::io::ErrorKind::NotFound`] when it is missing.
pub fn open_existing(path: &Path) -> std::io::Result<File> {
    open_regular(OpenOptions::new().write(true), path)
}

/// Opens with `options` without following a link in the last component and without blocking,
/// then checks that a regular file was opened.
fn open_regular(options: &mut OpenOptions, path: &Path) -> std::io::Result<File> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = options
        .custom_flags(i32::try_from(flags.bits()).unwrap_or(0))
        .open(path)
        .map_err(|error| {
            if error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "a symbolic link, not a regular file; a state file is never written through a link",
                )
            } else if error.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) {
                // A FIFO nobody reads: a non-blocking open for writing fails with ENXIO.
                crate::user_file::not_regular("a FIFO (named pipe)")
            } else {
                error
            }
        })?;
    crate::user_file::regular(&file.metadata()?)?;
    Ok(file)
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
