//! Reading a file someone else named: a preset, a scenario, an agent definition, an output
//! schema, a file a model asked for. Whoever named it (a user, a cloned project, a model) may
//! have named `/dev/zero`, a FIFO nobody writes to, or a symlink to either, so:
//!
//! - only a regular file is read: a FIFO, a device, a socket or a directory (also behind a
//!   symlink) is refused, and it is never opened in a way that can block (the open is
//!   non-blocking and the opened file's type is checked again, so swapping the path for a FIFO
//!   between the check and the open does not hang either);
//! - the bound is on the bytes actually read (at most `limit + 1`), not on the size the file
//!   system reports, which is 0 for `/dev/zero` and stale for a file still growing.
//!
//! Errors are [`std::io::Error`]s, as from [`std::fs::read`], so callers report them the way they
//! already report a missing file. Their kinds: [`ErrorKind::InvalidInput`] for a file that is
//! not regular, [`ErrorKind::FileTooLarge`] for one over the limit, [`ErrorKind::InvalidData`]
//! for text that is not UTF-8 ([`read_user_text`]); anything else is the operating system's.
//! The messages do not name the path: the caller does.

use std::fs::{File, FileType, Metadata};
use std::io::{self, ErrorKind, Read};
use std::path::Path;

/// Reads the regular file at `path` (symlinks followed), at most `limit` bytes.
///
/// # Errors
/// [`ErrorKind::InvalidInput`] when `path` is not a regular file (nothing is read from it),
/// [`ErrorKind::FileTooLarge`] when it holds more than `limit` bytes (at most `limit + 1` are
/// read), and the operating system's error when it cannot be opened or read.
pub fn read_user_file(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    // The type as the path resolves now, before anything is opened.
    regular(&std::fs::metadata(path)?)?;
    let file = open_nonblocking(path)?;
    // The type of what was actually opened: the path may have changed in between.
    let metadata = file.metadata()?;
    regular(&metadata)?;
    let hint = usize::try_from(metadata.len().min(limit)).unwrap_or(0);
    read_bounded_with_hint(file, limit, hint)
}

/// Opens the regular file at `path` (symlinks followed) for reading, as [`read_user_file`] does:
/// without blocking, a FIFO, a device, a socket or a directory refused. For a caller that needs
/// the file itself (to take its lock), not its bytes.
///
/// # Errors
/// [`ErrorKind::InvalidInput`] when `path` is not a regular file, and the operating system's
/// error when it cannot be opened.
pub fn open_user_file(path: &Path) -> io::Result<File> {
    regular(&std::fs::metadata(path)?)?;
    let file = open_nonblocking(path)?;
    regular(&file.metadata()?)?;
    Ok(file)
}

/// [`read_user_file`] for UTF-8 text.
///
/// # Errors
/// Those of [`read_user_file`], and [`ErrorKind::InvalidData`] when the bytes are not UTF-8.
pub fn read_user_text(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_user_file(path, limit)?)
        .map_err(|_| io::Error::new(ErrorKind::InvalidData, "not UTF-8 text"))
}

/// Reads everything `reader` gives, at most `limit` bytes: for sources that are not files
/// (stdin). Stops after `limit + 1` bytes.
///
/// # Errors
/// [`ErrorKind::FileTooLarge`] when the reader gives more than `limit` bytes, and the reader's
/// own errors.
pub fn read_bounded(reader: impl Read, limit: u64) -> io::Result<Vec<u8>> {
    read_bounded_with_hint(reader, limit, 0)
}

fn read_bounded_with_hint(reader: impl Read, limit: u64, hint: usize) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(hint);
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// The error [`read_user_file`] and [`read_bounded`] return for more than `limit` bytes.
pub fn too_large(limit: u64) -> io::Error {
    io::Error::new(
        ErrorKind::FileTooLarge,
        format!("larger than the limit of {limit} bytes; refused"),
    )
}

pub(crate) fn regular(metadata: &Metadata) -> io::Result<()> {
    if metadata.is_file() {
        return Ok(());
    }
    Err(not_regular(describe(metadata.file_type())))
}

/// The error for a file that is `what` (e.g. "a FIFO (named pipe)") instead of a regular one.
pub(crate) fn not_regular(what: &str) -> io::Error {
    io::Error::new(
        ErrorKind::InvalidInput,
        format!("{what}, not a regular file; refused without reading it"),
    )
}

/// What a file that is not regular is, for messages.
fn describe(file_type: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// Opens for reading without blocking: on a FIFO with no writer a plain `open` waits forever.
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(File::from(fd))
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs `read` on another thread; a read that blocks fails the test instead of hanging it.
    fn within_bound<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(read());
        });
        rx.recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("the read blocked"))
    }

    fn error(result: io::Result<Vec<u8>>) -> (ErrorKind, String) {
        let error = result.unwrap_err();
        (error.kind(), error.to_string())
    }

    #[test]
    fn a_regular_file_within_the_limit_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_user_file(&path, 5).unwrap(), b"12345");
        assert_eq!(read_user_text(&path, 5).unwrap(), "12345");
    }

    #[test]
    fn a_regular_file_over_the_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"123456").unwrap();
        assert_eq!(
            error(read_user_file(&path, 5)),
            (
                ErrorKind::FileTooLarge,
                "larger than the limit of 5 bytes; refused".to_owned()
            )
        );
    }

    #[test]
    fn dev_zero_is_refused_directly_and_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("z.md");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        for path in [Path::new("/dev/zero"), link.as_path()] {
            let path = path.to_owned();
            let result = within_bound(move || read_user_file(&path, 1024));
            assert_eq!(
                error(result),
                (
                    ErrorKind::InvalidInput,
                    "a character device, not a regular file; refused without reading it".to_owned()
                )
            );
        }
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        for path in [fifo.clone(), link] {
            let result = within_bound(move || read_user_file(&path, 1024));
            assert_eq!(
                error(result),
                (
                    ErrorKind::InvalidInput,
                    "a FIFO (named pipe), not a regular file; refused without reading it"
                        .to_owned()
                )
            );
        }
        // Opened non-blocking, a FIFO does not wait for a writer even past the type check.
        let opened = within_bound(move || open_nonblocking(&fifo).map(|_| ()));
        assert!(opened.is_ok(), "{opened:?}");
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            error(read_user_file(dir.path(), 1024)),
            (
                ErrorKind::InvalidInput,
                "a directory, not a regular file; refused without reading it".to_owned()
            )
        );
    }

    #[test]
    fn a_missing_file_is_the_operating_systems_error() {
        let dir = tempfile::tempdir().unwrap();
        let (kind, _) = error(read_user_file(&dir.path().join("missing"), 1024));
        assert_eq!(kind, ErrorKind::NotFound);
    }

    #[test]
    fn text_must_be_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        let error = read_user_text(&path, 1024).unwrap_err();
        assert_eq!(
            (error.kind(), error.to_string()),
            (ErrorKind::InvalidData, "not UTF-8 text".to_owned())
        );
    }

    #[test]
    fn a_reader_is_bounded_by_what_it_gives() {
        assert_eq!(read_bounded(&b"abc"[..], 3).unwrap(), b"abc");
        let endless = std::io::repeat(0);
        assert_eq!(
            error(within_bound(move || read_bounded(endless, 1 << 20))),
            (
                ErrorKind::FileTooLarge,
                "larger than the limit of 1048576 bytes; refused".to_owned()
            )
        );
    }
}
