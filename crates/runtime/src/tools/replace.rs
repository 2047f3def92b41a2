//! How the writing file tools change a file: whole or not at all, one writer of a directory at
//! a time. The new content goes to a temporary file beside the target, synced, then renamed over
//! it, so a reader (another run, another process) sees the old file or the new one, never a
//! torn or emptied one; and a write or an edit (read, change, write) holds an exclusive advisory
//! lock on the file's directory meanwhile, so two runs editing one file (an agent's `MEMORY.md`)
//! in the same moment both land, one after the other.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The mode of a file created where new files are private (an agent's memory directory).
const PRIVATE_FILE_MODE: u32 = 0o600;

/// The mode of another new file before the umask, as `std::fs::write` creates it.
const DEFAULT_FILE_MODE: u32 = 0o666;

/// Holds the exclusive advisory lock on `dir` until dropped: the writing tools of every run
/// (in this process or another) take it before they read or replace a file in `dir`.
pub(crate) fn lock_dir(dir: &Path) -> std::io::Result<File> {
    let handle = OpenOptions::new()
        .read(true)
        // Only ever a directory: a FIFO planted in its place is refused, never waited on.
        .custom_flags(
            i32::try_from((rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::NONBLOCK).bits())
                .unwrap_or(0),
        )
        .open(dir)?;
    handle.lock()?;
    Ok(handle)
}

/// Replaces `path` with `bytes` through a temporary file in the same directory and a rename.
/// An existing file keeps its mode, and one this process may not write is refused
/// (`PermissionDenied`); a new one gets 0600 when `private`, else 0666 less the umask.
/// The temporary file is removed when anything fails.
pub(crate) fn replace_file(path: &Path, bytes: &[u8], private: bool) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "no directory to write in")
    })?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let existing = std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777);
    if existing.is_some() {
        // A file this process may not write stays unwritten, as an in-place write would leave
        // it (a rename would replace it all the same).
        rustix::fs::access(path, rustix::fs::Access::WRITE_OK)?;
    }
    let mode = existing.unwrap_or(if private {
        PRIVATE_FILE_MODE
    } else {
        DEFAULT_FILE_MODE
    });
    let (temp, mut file) = create_temp(dir, &name, mode)?;
    let written = (|| {
        file.write_all(bytes)?;
        if let Some(mode) = existing {
            // The umask applied at creation; an existing file's mode is kept exactly.
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// A new temporary file `.<name>.<pid>.<n>.tmp` in `dir`, created exclusively.
fn create_temp(dir: &Path, name: &str, mode: u32) -> std::io::Result<(std::path::PathBuf, File)> {
    let pid = std::process::id();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut attempt = 0u32;
    loop {
        let temp = dir.join(format!(".{name}.{pid}.{nanos}-{attempt}.tmp"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&temp)
        {
            Ok(file) => return Ok((temp, file)),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests;
