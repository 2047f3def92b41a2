//! The table's and the entries' tests.

use pretty_assertions::assert_eq;
use subagent_a2a::types::{TaskStatus, TaskStatusUpdateEvent};

use super::entry::{json_len, kept_bytes};
use super::*;
use subagent_a2a::types::{Task, TaskState};
use subagent_core::CancellationToken;

fn task(id: &str) -> Task {
    Task {
        id: id.to_owned(),
        ..Task::default()
    }
}

fn finish(entry: &Entry) {
    entry.push(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        status: TaskStatus {
            state: TaskState::Completed,
            ..TaskStatus::default()
        },
        ..TaskStatusUpdateEvent::default()
    }));
}

/// A status update numbered `n` (the number rides in the status's timestamp, so a
/// snapshot says which update it reflects).
fn numbered(n: u64, state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        status: TaskStatus {
            state,
            timestamp: Some(n.to_string()),
            ..TaskStatus::default()
        },
        ..TaskStatusUpdateEvent::default()
    })
}

fn number(status: &TaskStatus) -> Option<u64> {
    status.timestamp.as_deref()?.parse().ok()
}

/// Subscribers joining at every moment of a busy task each get the snapshot and then
/// exactly the events after it: none missing, none twice, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_joining_while_events_arrive_miss_nothing_and_get_nothing_twice() {
    use futures::StreamExt;

    const EVENTS: u64 = 1_000;
    let entry = Entry::new(task("busy"), CancellationToken::new());
    entry.push(numbered(0, TaskState::Working));
    // Subscribers join every 25 events and read on the other worker while events go on
    // arriving.
    let mut subscribers = Vec::new();
    for n in 1..EVENTS {
        entry.push(numbered(n, TaskState::Working));
        if n % 25 == 0 {
            let stream = entry.subscribe().unwrap();
            subscribers.push(tokio::spawn(stream.collect::<Vec<_>>()));
        }
        if n % 7 == 0 {
            tokio::task::yield_now().await;
        }
    }
    entry.push(numbered(EVENTS, TaskState::Completed));
    assert!(entry.subscribe().is_none());
    for subscriber in subscribers {
        let events = subscriber.await.unwrap();
        let StreamResponse::Task(snapshot) = &events[0] else {
            panic!("the first event is not the snapshot: {:?}", events[0]);
        };
        let from = number(&snapshot.status)
            .unwrap_or_else(|| panic!("snapshot without a number: {snapshot:?}"));
        let after: Vec<u64> = events[1..]
            .iter()
            .filter_map(|event| match event {
                StreamResponse::StatusUpdate(update) => number(&update.status),
                _ => None,
            })
            .collect();
        assert_eq!(after.len(), events.len() - 1);
        let expected: Vec<u64> = (from + 1..=EVENTS).collect();
        assert_eq!(after, expected);
    }
}

#[tokio::test]
async fn a_finished_task_drops_its_events_at_its_end_or_once_streamed_when_it_expires() {
    use futures::StreamExt;

    let unread = Entry::new(task("unread"), CancellationToken::new());
    unread.push(numbered(1, TaskState::Working));
    finish(&unread);
    let read = Entry::new(task("read"), CancellationToken::new());
    let stream = read.events();
    let subscriber = read.subscribe().unwrap();
    read.push(numbered(1, TaskState::Working));
    finish(&read);
    assert_eq!((unread.retained(), read.retained()), (0, 3));
    let all = stream.collect::<Vec<_>>().await;
    assert_eq!((all.len(), read.retained()), (3, 3));
    let later = subscriber.collect::<Vec<_>>().await;
    // Streamed: kept for a client that lost its stream, until the task expires.
    assert_eq!((later.len(), read.retained()), (3, 3));
    let again = read.resume_from(1).unwrap().collect::<Vec<_>>().await;
    assert_eq!(again.len(), 2);
    read.expire();
    assert_eq!(read.retained(), 0);
    assert!(read.resume_from(1).is_none());
    assert_eq!(read.snapshot().status.state, TaskState::Completed);
}

/// A streamed answer is tens of thousands of events: once they are dropped, so is the room
/// they took (issue 26.5: a burst of 16 such tasks left ~300 MB of empty event buffers), and
/// room kept for fewer events shrinks with them.
#[tokio::test]
async fn dropped_events_give_their_room_back() {
    use futures::StreamExt;

    let entry = Entry::new(task("long"), CancellationToken::new());
    let stream = entry.events();
    for n in 0..20_000 {
        entry.push(numbered(n, TaskState::Working));
    }
    // Read all but the last 100, then shed what every stream has read.
    let mut stream = Box::pin(stream);
    for _ in 0..19_901 {
        stream.next().await.unwrap();
    }
    entry.lock().shed();
    assert_eq!(entry.retained(), 100);
    assert!(
        entry.room() < 1_000,
        "room for {} events kept",
        entry.room()
    );
    finish(&entry);
    drop(stream);
    entry.expire();
    assert_eq!((entry.retained(), entry.room()), (0, 0));
}

#[test]
fn past_the_bound_the_oldest_finished_tasks_are_forgotten_and_live_ones_kept() {
    let tasks = Tasks::new(2, usize::MAX, None);
    let ids = ["a", "b", "c", "d"];
    for id in ids {
        let entry = Entry::new(task(id), CancellationToken::new());
        if id != "a" {
            finish(&entry);
        }
        tasks.insert(id.to_owned(), entry, None);
    }
    let kept: Vec<String> = tasks.all().iter().map(|e| e.snapshot().id).collect();
    assert_eq!(kept, ["a", "d"]);
    let found: Vec<bool> = ids.iter().map(|id| tasks.get(id).is_some()).collect();
    assert_eq!(found, [true, false, false, true]);
}

#[test]
fn forgetting_an_entry_leaves_a_later_one_under_the_same_id() {
    let tasks = Tasks::new(1, usize::MAX, None);
    let first = Entry::new(task("first"), CancellationToken::new());
    finish(&first);
    tasks.insert("same".to_owned(), Arc::clone(&first), None);
    let second = Entry::new(task("second"), CancellationToken::new());
    tasks.insert("same".to_owned(), Arc::clone(&second), None);
    let kept = tasks.get("same").map(|e| e.snapshot().id);
    assert_eq!(kept.as_deref(), Some("second"));
    assert_eq!(tasks.all().len(), 1);
}
/// A store directory and a finished task whose run wrote a transcript there.
fn session_file(dir: &Path) -> PathBuf {
    let path = dir.join(format!("{}.jsonl", subagent_core::RunId::new()));
    std::fs::write(&path, "{}\n").unwrap();
    path
}

/// A finished task whose run's outcome named `transcript`, added to `tasks` under `id`.
fn ran(tasks: &Tasks, id: &str, transcript: &Path, held: Option<Hold>) {
    let entry = Entry::new(task(id), CancellationToken::new());
    tasks.insert(id.to_owned(), Arc::clone(&entry), held);
    tasks.attach(&entry, transcript);
    finish(&entry);
}

fn exist(paths: &[&PathBuf]) -> Vec<bool> {
    paths.iter().map(|path| path.exists()).collect()
}

#[tokio::test]
async fn forgetting_a_task_deletes_its_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = Tasks::new(1, usize::MAX, Some(dir.path().to_path_buf()));
    let (a, b) = (session_file(dir.path()), session_file(dir.path()));
    ran(&tasks, "a", &a, None);
    tasks.settled().await;
    assert_eq!(exist(&[&a]), [true]);
    ran(&tasks, "b", &b, None);
    tasks.settled().await;
    assert!(tasks.get("a").is_none());
    assert_eq!(exist(&[&a, &b]), [false, true]);
}

#[tokio::test]
async fn a_transcript_shared_with_a_continued_task_stays_until_both_are_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = Tasks::new(2, usize::MAX, Some(dir.path().to_path_buf()));
    let (shared, c, d) = (
        session_file(dir.path()),
        session_file(dir.path()),
        session_file(dir.path()),
    );
    ran(&tasks, "a", &shared, None);
    // "b" continues "a": its run appends to the same file, and its outcome names it.
    let (_, held) = tasks.continuing("a").unwrap();
    let held = held.unwrap();
    ran(&tasks, "b", &shared, Some(held));
    ran(&tasks, "c", &c, None);
    tasks.settled().await;
    assert_eq!(
        (tasks.get("a").is_none(), exist(&[&shared])),
        (true, vec![true])
    );
    ran(&tasks, "d", &d, None);
    tasks.settled().await;
    assert_eq!(
        (tasks.get("b").is_none(), exist(&[&shared])),
        (true, vec![false])
    );
    assert_eq!(exist(&[&c, &d]), [true, true]);
}

#[tokio::test]
async fn a_continuation_holds_the_transcript_while_it_starts_and_lets_it_go_if_it_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = Tasks::new(1, usize::MAX, Some(dir.path().to_path_buf()));
    let (a, b) = (session_file(dir.path()), session_file(dir.path()));
    ran(&tasks, "a", &a, None);
    let (_, held) = tasks.continuing("a").unwrap();
    let held = held.unwrap();
    // "a" is forgotten while a run continuing it starts: its file stays for that run.
    ran(&tasks, "b", &b, None);
    tasks.settled().await;
    assert_eq!((tasks.get("a").is_none(), exist(&[&a])), (true, vec![true]));
    // The run did not start: nothing refers to the file any more.
    drop(held);
    tasks.settled().await;
    assert_eq!(exist(&[&a, &b]), [false, true]);
}

#[tokio::test]
async fn a_transcript_that_is_not_a_session_file_of_the_store_is_never_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("sessions");
    let other = dir.path().join("claude-projects");
    let nested = store.join("nested");
    for dir in [&store, &other, &nested] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let not_a_session = store.join("notes.jsonl");
    std::fs::write(&not_a_session, "mine\n").unwrap();
    let paths = [
        session_file(&other),
        session_file(&nested),
        not_a_session,
        // The store's path through `..`: a file of the store, but not named as the server
        // names them.
        session_file(&store),
    ];
    let dotted = store
        .join("..")
        .join("sessions")
        .join(paths[3].file_name().unwrap());
    let tasks = Tasks::new(1, usize::MAX, Some(store.clone()));
    for (n, path) in paths[..3].iter().chain([&dotted]).enumerate() {
        ran(&tasks, &n.to_string(), path, None);
    }
    tasks.close().await;
    assert_eq!(exist(&paths.iter().collect::<Vec<_>>()), [true; 4]);
}

#[tokio::test]
async fn keeping_transcripts_deletes_none_neither_when_forgetting_nor_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = Tasks::new(1, usize::MAX, None);
    let (a, b) = (session_file(dir.path()), session_file(dir.path()));
    ran(&tasks, "a", &a, None);
    ran(&tasks, "b", &b, None);
    tasks.close().await;
    assert_eq!(exist(&[&a, &b]), [true, true]);
}

#[tokio::test]
async fn closing_deletes_the_transcripts_of_every_task_kept() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = Tasks::new(10, usize::MAX, Some(dir.path().to_path_buf()));
    let (a, b) = (session_file(dir.path()), session_file(dir.path()));
    ran(&tasks, "a", &a, None);
    let (_, held) = tasks.continuing("a").unwrap();
    let held = held.unwrap();
    ran(&tasks, "b", &a, Some(held));
    ran(&tasks, "c", &b, None);
    // A task still running takes no hold (nor a further message).
    let live = Entry::new(task("live"), CancellationToken::new());
    tasks.insert("live".to_owned(), live, None);
    assert!(tasks.continuing("live").unwrap().1.is_none());
    let mine = dir
        .path()
        .join(format!("{}.jsonl", subagent_core::RunId::new()));
    std::fs::write(&mine, "a session of the user's own\n").unwrap();
    tasks.close().await;
    assert_eq!(exist(&[&a, &b, &mine]), [false, false, true]);
}

/// The numbers of the status updates among `events`.
fn numbers(events: &[StreamResponse]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|event| match event {
            StreamResponse::StatusUpdate(update) => number(&update.status),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn past_the_byte_bound_finished_events_go_first_then_read_live_events_then_finished_tasks() {
    use futures::StreamExt;

    let tasks = Tasks::new(100, usize::MAX, None);
    // A finished task that was streamed: its events are kept for a client that comes back.
    let old = Entry::new(task("old"), CancellationToken::new());
    let stream = old.events();
    tasks.insert("old".to_owned(), Arc::clone(&old), None);
    for n in 1..=5 {
        tasks.push(&old, numbered(n, TaskState::Working));
    }
    tasks.push(&old, numbered(6, TaskState::Completed));
    assert_eq!(stream.collect::<Vec<_>>().await.len(), 7);
    // A live task whose stream has read 4 of its 6 events.
    let live = Entry::new(task("live"), CancellationToken::new());
    let mut reading = Box::pin(live.events());
    tasks.insert("live".to_owned(), Arc::clone(&live), None);
    for n in 1..=5 {
        tasks.push(&live, numbered(n, TaskState::Working));
    }
    for _ in 0..4 {
        reading.next().await.unwrap();
    }
    let kept = |tasks: &Tasks| (old.retained(), live.retained(), tasks.get("old").is_some());
    assert_eq!(kept(&tasks), (7, 6, true));
    tasks.shed_to(tasks.used() - 1);
    assert_eq!(kept(&tasks), (0, 6, true));
    tasks.shed_to(tasks.used() - 1);
    assert_eq!(kept(&tasks), (0, 2, true));
    tasks.shed_to(tasks.used() - 1);
    assert_eq!(kept(&tasks), (0, 2, false));
    // A live task, and the events its stream has yet to read, stay.
    tasks.shed_to(0);
    assert_eq!((live.retained(), tasks.get("live").is_some()), (2, true));
    // The stream reads on, missing nothing; a client that comes back for what was dropped
    // gets nothing from there (it is sent the snapshot instead).
    tasks.push(&live, numbered(6, TaskState::Completed));
    let rest = reading.collect::<Vec<_>>().await;
    assert_eq!(numbers(&rest), [4, 5, 6]);
    assert!(live.resume_from(1).is_none());
    assert_eq!(live.pushed(), 7);
    // Once nobody may come back, what is left counted is the snapshot.
    live.expire();
    assert_eq!(tasks.used(), json_len(&live.snapshot()));
}

#[test]
fn pushes_past_the_byte_bound_shed_what_nobody_reads() {
    let bound = kept_bytes(&numbered(100, TaskState::Working)) * 20;
    let tasks = Tasks::new(100, bound, None);
    let entry = Entry::new(task("long"), CancellationToken::new());
    tasks.insert("long".to_owned(), Arc::clone(&entry), None);
    let mut most = 0;
    for n in 100..1_100 {
        tasks.push(&entry, numbered(n, TaskState::Working));
        most = most.max(tasks.used());
    }
    assert!(most <= bound, "{most} > {bound}");
    assert!(entry.retained() < 20, "{}", entry.retained());
    assert_eq!(entry.pushed(), 1_001);
    // A count past the events kept, and a count of all of them, still read.
    assert!(entry.resume_from(1_001).is_some());
    assert!(entry.resume_from(2).is_none());
}

/// A task that ends while its stream is still behind stays in the table: a client that reads
/// the end and then asks for the task (`GetTask`) finds it, though the events its stream has
/// yet to read are more than the bound.
#[tokio::test]
async fn a_task_whose_stream_is_still_reading_at_its_end_is_not_forgotten() {
    use futures::StreamExt;

    let bound = kept_bytes(&numbered(100, TaskState::Working)) * 20;
    let tasks = Tasks::new(100, bound, None);
    let entry = Entry::new(task("long"), CancellationToken::new());
    let stream = entry.events();
    tasks.insert("long".to_owned(), Arc::clone(&entry), None);
    for n in 100..200 {
        tasks.push(&entry, numbered(n, TaskState::Working));
    }
    // An end larger than the slack past the bound, so that it sheds.
    let mut end = numbered(200, TaskState::Completed);
    if let StreamResponse::StatusUpdate(update) = &mut end {
        update.status.timestamp = Some("0".repeat(bound));
    }
    tasks.push(&entry, end);
    assert!(tasks.get("long").is_some());
    let read = stream.collect::<Vec<_>>().await;
    assert_eq!(read.len(), 102);
    assert!(tasks.get("long").is_some());
    // Read to the end, it goes at the next shed like any finished task (its snapshot alone is
    // past the bound).
    tasks.shed_to(bound / 4 * 3);
    assert_eq!((entry.retained(), tasks.get("long").is_some()), (0, false));
}
