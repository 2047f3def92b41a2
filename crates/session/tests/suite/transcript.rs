//! Transcripts: round trip, flush at turn end, torn-line recovery.

use std::io::Write;

use pretty_assertions::assert_eq;
use subagent_session::{
    Error, EventLog, Message, SessionEvent, StopReason, TranscriptWriter, load_transcript,
};

fn turn(n: u32, text: &str) -> Vec<SessionEvent> {
    vec![
        SessionEvent::TurnStart { turn: n },
        SessionEvent::message(Message::user(text)),
        SessionEvent::message(Message::assistant(format!("re: {text}"))),
        SessionEvent::TurnEnd {
            stop_reason: StopReason::Completed,
        },
    ]
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let events: Vec<_> = turn(0, "héllo ✓")
        .into_iter()
        .chain(turn(1, "again"))
        .collect();
    let mut writer = TranscriptWriter::create(&path).unwrap();
    for event in &events {
        writer.append(event).unwrap();
    }
    drop(writer);
    let loaded = load_transcript(&path).unwrap();
    assert!(loaded.warnings.is_empty());
    assert_eq!(loaded.log, EventLog::from_events(events));
    let first = std::fs::read_to_string(&path).unwrap();
    assert!(
        first.starts_with(r#"{"seq":0,"type":"turn_start","turn":0}"#),
        "{first}"
    );
}

#[test]
fn turn_end_flushes_without_closing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut writer = TranscriptWriter::create(&path).unwrap();
    let events = turn(0, "q");
    for event in &events[..3] {
        writer.append(event).unwrap();
    }
    // Mid-turn: buffered, nothing on disk yet.
    assert_eq!(load_transcript(&path).unwrap().log.len(), 0);
    writer.append(&events[3]).unwrap();
    // Turn ended: all four on disk while the writer is still open.
    assert_eq!(load_transcript(&path).unwrap().log.len(), 4);
}

#[test]
fn a_batch_is_written_unflushed_and_flushed_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut writer = TranscriptWriter::create(&path).unwrap();
    let events: Vec<_> = turn(0, "a").into_iter().chain(turn(1, "b")).collect();
    for event in &events {
        writer.append_unflushed(event).unwrap();
    }
    // Two turn ends went by: still buffered, nothing on disk.
    assert_eq!(load_transcript(&path).unwrap().log.len(), 0);
    assert_eq!(writer.next_seq(), 8);
    writer.flush().unwrap();
    assert_eq!(
        load_transcript(&path).unwrap().log,
        EventLog::from_events(events)
    );
}

#[test]
fn torn_last_line_is_skipped_with_a_warning_and_cut_before_appending() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut writer = TranscriptWriter::create(&path).unwrap();
    for event in turn(0, "kept").iter().chain(turn(1, "kept too").iter()) {
        writer.append(event).unwrap();
    }
    drop(writer);
    // A crash mid-write: half a line, no newline, and a cut multi-byte character.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(&r#"{"seq":8,"type":"message","message":{"role":"user","content":[{"type":"text","text":"✓"#.as_bytes()[..70]).unwrap();
    drop(file);

    let loaded = load_transcript(&path).unwrap();
    assert_eq!(loaded.log.len(), 8, "both complete turns survive");
    assert_eq!(loaded.warnings.len(), 1);
    assert_eq!(loaded.warnings[0].line, 9);
    assert!(
        loaded.warnings[0]
            .to_string()
            .contains("t.jsonl:9: skipped a torn last line"),
        "{}",
        loaded.warnings[0]
    );

    // Continuing the transcript cuts the torn tail, so the file is valid again.
    let (mut writer, reloaded) = TranscriptWriter::open(&path).unwrap();
    assert_eq!(reloaded.warnings.len(), 1);
    assert_eq!(writer.next_seq(), 8);
    for event in turn(2, "after the crash") {
        writer.append(&event).unwrap();
    }
    drop(writer);
    let loaded = load_transcript(&path).unwrap();
    assert!(loaded.warnings.is_empty());
    assert_eq!(loaded.log.len(), 12);
    assert_eq!(
        loaded.log.get(9).unwrap().as_message().unwrap().text(),
        "after the crash"
    );
}

#[test]
fn one_locked_writer_at_a_time_and_the_lock_comes_before_any_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut writer = TranscriptWriter::create_locked(&path).unwrap();
    for event in turn(0, "first") {
        writer.append(&event).unwrap();
    }
    writer.append_unflushed(&turn(1, "second")[0]).unwrap();
    // What a live writer's half-written line looks like from outside: a second writer must not
    // take it for a torn line and cut it.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"seq\":4,\"ty")
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    let locked = |result: Result<(), Error>| match result {
        Err(Error::Locked { path }) => path,
        other => panic!("expected locked, got {other:?}"),
    };
    assert_eq!(locked(TranscriptWriter::open_locked(&path).map(drop)), path);
    assert_eq!(
        locked(TranscriptWriter::create_locked(&path).map(drop)),
        path
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing was changed");
    // Released with its writer (which writes its buffered line where its own last one ended):
    // the next one continues after it.
    drop(writer);
    let (writer, _) = TranscriptWriter::open_locked(&path).unwrap();
    assert_eq!(writer.next_seq(), 5);
}

#[test]
fn open_locked_never_creates_a_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.jsonl");
    match TranscriptWriter::open_locked(&path) {
        Err(Error::Io { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected not found, got {other:?}"),
    }
    assert!(!path.exists());
}

#[test]
fn corruption_in_the_middle_is_an_error_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(
        &path,
        "{\"seq\":0,\"type\":\"turn_start\",\"turn\":0}\nnot json\n{\"seq\":1,\"type\":\"turn_start\",\"turn\":1}\n",
    )
    .unwrap();
    match load_transcript(&path) {
        Err(Error::Corrupt { line, .. }) => assert_eq!(line, 2),
        other => panic!("expected corrupt, got {other:?}"),
    }
    std::fs::write(
        &path,
        "{\"seq\":0,\"type\":\"turn_start\",\"turn\":0}\n{\"seq\":5,\"type\":\"turn_start\",\"turn\":1}\n",
    )
    .unwrap();
    match load_transcript(&path) {
        Err(Error::Corrupt { line, message, .. }) => {
            assert_eq!(line, 2);
            assert_eq!(message, "seq 5 where 1 was expected");
        }
        other => panic!("expected corrupt, got {other:?}"),
    }
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let err = load_transcript(std::path::Path::new("/nonexistent/t.jsonl")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("transcript /nonexistent/t.jsonl:"),
        "{err}"
    );
}

/// Runs `f` on another thread; one that blocks fails the test instead of hanging it.
fn within_bound<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("it blocked"))
}

fn fifo(path: &std::path::Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .unwrap();
}

fn io_kind(error: Error) -> std::io::ErrorKind {
    match error {
        Error::Io { source, .. } => source.kind(),
        other => panic!("not an I/O error: {other:?}"),
    }
}

/// A planted `<id>.jsonl` that is a symlink to `/dev/zero` or a FIFO is refused at once by every
/// way a transcript is read or opened (it took `run --resume` to 23 GB, or hung it past SIGTERM).
#[test]
fn a_planted_device_or_fifo_is_refused_without_reading_or_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let zero = dir.path().join("zero.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let pipe = dir.path().join("pipe.jsonl");
    fifo(&pipe);
    for path in [zero, pipe] {
        let p = path.clone();
        let kind = io_kind(within_bound(move || load_transcript(&p)).unwrap_err());
        assert_eq!(kind, std::io::ErrorKind::InvalidInput, "{}", path.display());
        let p = path.clone();
        let kind = io_kind(within_bound(move || TranscriptWriter::open(&p)).unwrap_err());
        assert_eq!(kind, std::io::ErrorKind::InvalidInput, "{}", path.display());
        let p = path.clone();
        let kind = io_kind(within_bound(move || TranscriptWriter::open_locked(&p)).unwrap_err());
        assert_eq!(kind, std::io::ErrorKind::InvalidInput, "{}", path.display());
        let p = path.clone();
        let kind = io_kind(within_bound(move || TranscriptWriter::create_locked(&p)).unwrap_err());
        assert_eq!(kind, std::io::ErrorKind::InvalidInput, "{}", path.display());
        let p = path.clone();
        let kind = io_kind(within_bound(move || TranscriptWriter::create(&p)).unwrap_err());
        assert_eq!(kind, std::io::ErrorKind::InvalidInput, "{}", path.display());
    }
}

/// A transcript written as a symlink to another file is not followed when written: a planted
/// link must not let a run cut or overwrite a file elsewhere.
#[test]
fn a_planted_symlink_to_a_regular_file_is_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("precious.txt");
    std::fs::write(&elsewhere, b"keep me\n").unwrap();
    let link = dir.path().join("s.jsonl");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    assert!(TranscriptWriter::create(&link).is_err());
    assert!(TranscriptWriter::create_locked(&link).is_err());
    assert!(TranscriptWriter::open(&link).is_err());
    assert!(TranscriptWriter::open_locked(&link).is_err());
    assert_eq!(std::fs::read(&elsewhere).unwrap(), b"keep me\n");
}
