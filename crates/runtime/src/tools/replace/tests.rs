use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use pretty_assertions::assert_eq;

use super::*;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_reader_never_sees_a_torn_or_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("MEMORY.md");
    let (a, b) = ("a".repeat(256 * 1024), "b".repeat(256 * 1024));
    replace_file(&path, a.as_bytes(), true).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (path, done) = (path.clone(), Arc::clone(&done));
        std::thread::spawn(move || {
            for round in 0..200 {
                let text = if round % 2 == 0 { &b } else { &a };
                replace_file(&path, text.as_bytes(), true).unwrap();
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let mut reads = 0;
    while !done.load(Ordering::SeqCst) || reads == 0 {
        let seen = subagent_session::read_user_file(&path, 1 << 20).unwrap();
        assert_eq!(seen.len(), 256 * 1024, "a torn read");
        assert!(seen.iter().all(|&c| c == seen[0]), "a mixed read");
        reads += 1;
    }
    writer.join().unwrap();
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["MEMORY.md"]);
}

#[test]
fn edits_under_the_directory_lock_all_land() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("MEMORY.md");
    replace_file(&path, b"", false).unwrap();
    // Read, change, write: each under the lock, from several threads (each lock is its own
    // open file description, as another process's would be).
    let workers: Vec<_> = (0..4)
        .map(|worker| {
            let (dir, path) = (dir.path().to_owned(), path.clone());
            std::thread::spawn(move || {
                for line in 0..50 {
                    let _lock = lock_dir(&dir).unwrap();
                    let mut text = String::from_utf8(
                        subagent_session::read_user_file(&path, 1 << 20).unwrap(),
                    )
                    .unwrap();
                    text.push_str(&format!("- worker {worker} line {line}\n"));
                    replace_file(&path, text.as_bytes(), false).unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let text =
        String::from_utf8(subagent_session::read_user_file(&path, 1 << 20).unwrap()).unwrap();
    assert_eq!(text.lines().count(), 200, "{text}");
}

#[test]
fn modes_are_kept_or_private() {
    let dir = tempfile::tempdir().unwrap();
    let private = dir.path().join("new.md");
    replace_file(&private, b"x", true).unwrap();
    assert_eq!(mode(&private), 0o600);
    let shared = dir.path().join("script.sh");
    std::fs::write(&shared, "old").unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o751)).unwrap();
    replace_file(&shared, b"new", true).unwrap();
    assert_eq!(mode(&shared), 0o751);
    assert_eq!(
        subagent_session::read_user_file(&shared, 16).unwrap(),
        b"new"
    );
    // A file that may not be written stays as it is (unless we are root, who may).
    let locked = dir.path().join("locked.md");
    std::fs::write(&locked, "kept").unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444)).unwrap();
    let root = rustix::process::geteuid().is_root();
    let written = replace_file(&locked, b"over", false);
    if root {
        assert!(written.is_ok());
    } else {
        assert_eq!(
            written.unwrap_err().kind(),
            std::io::ErrorKind::PermissionDenied
        );
        assert_eq!(
            subagent_session::read_user_file(&locked, 16).unwrap(),
            b"kept"
        );
    }
    std::fs::remove_file(&locked).unwrap();
    // A directory in the way: an error, and nothing left behind.
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    assert!(replace_file(&dir.path().join("sub"), b"x", false).is_err());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
}
