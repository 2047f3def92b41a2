use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn a_short_index_is_loaded_whole_and_trimmed() {
    assert_eq!(
        load_index("\n- [A](a.md) — first\nsecond\n\n"),
        "- [A](a.md) — first\nsecond"
    );
    assert_eq!(
        load_index(" \n"),
        "Your MEMORY.md is currently empty. When you save new memories, they will appear here."
    );
}

#[test]
fn a_long_index_is_cut_at_200_lines_with_claude_codes_warning() {
    let index: String = (1..=250).map(|i| format!("- line {i}\n")).collect();
    let loaded = load_index(&index);
    let (kept, warning) = loaded.split_once("\n\n").unwrap();
    assert_eq!(kept.lines().count(), 200);
    assert!(kept.ends_with("- line 200"), "{kept}");
    assert_eq!(
        warning,
        "> WARNING: MEMORY.md is 250 lines (limit: 200). Only part of it was loaded. Keep index entries to one line under ~200 chars; move detail into topic files."
    );
}

#[test]
fn a_wide_index_is_cut_at_a_line_end_before_25000_bytes() {
    let line = format!("- {}\n", "x".repeat(998));
    let index = line.repeat(30);
    let loaded = load_index(&index);
    let (kept, warning) = loaded.split_once("\n\n").unwrap();
    assert!(kept.len() <= MAX_INDEX_BYTES, "{}", kept.len());
    assert_eq!(kept.lines().count(), 24);
    assert!(kept.lines().all(|l| l.len() == 1000));
    assert_eq!(
        warning,
        "> WARNING: MEMORY.md is 29.3KB (limit: 24.4KB) — index entries are too long. Only part of it was loaded. Keep index entries to one line under ~200 chars; move detail into topic files."
    );
    // Both bounds passed.
    let both = format!("- {}\n", "y".repeat(200)).repeat(201);
    assert!(load_index(&both).contains("> WARNING: MEMORY.md is 201 lines and 39.8KB."));
    // A cut never splits a character.
    let wide = "é".repeat(20_000);
    assert!(load_index(&wide).starts_with(&"é".repeat(12_500)));
}

#[test]
fn sizes_read_as_claude_code_writes_them() {
    assert_eq!(human_bytes(512), "512 bytes");
    assert_eq!(human_bytes(25_000), "24.4KB");
    assert_eq!(human_bytes(2048), "2KB");
    assert_eq!(human_bytes(3 * 1024 * 1024 / 2), "1.5MB");
}

#[test]
fn opening_makes_a_private_directory_and_reads_its_index() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".claude/agent-memory/keeper");
    let memory = AgentMemory {
        scope: MemoryScope::User,
        dir: dir.clone(),
    };
    let opened = RunMemory::open(&memory).unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&home.path().join(".claude")), 0o700);
    assert!(opened.instructions.starts_with(&format!(
        "# Persistent Agent Memory\n\nYou have a persistent, file-based memory at `{}/`.",
        dir.display()
    )));
    assert!(opened.instructions.ends_with(
        "- Since this memory is user-scope, keep learnings general since they apply across all projects\n\n## MEMORY.md\n\nYour MEMORY.md is currently empty. When you save new memories, they will appear here."
    ));
    std::fs::write(dir.join("MEMORY.md"), "- [Alpha](alpha.md) — first\n").unwrap();
    let opened = RunMemory::open(&memory).unwrap();
    assert!(
        opened
            .instructions
            .ends_with("## MEMORY.md\n\n- [Alpha](alpha.md) — first"),
        "{}",
        opened.instructions
    );
    // An index that is not a regular file is an error, never a blocked read.
    let fifo = home.path().join("fifo-memory");
    std::fs::create_dir(&fifo).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(fifo.join("MEMORY.md"))
        .status()
        .unwrap();
    assert!(made.success());
    let error = RunMemory::open(&AgentMemory {
        scope: MemoryScope::Project,
        dir: fifo,
    })
    .unwrap_err();
    assert!(matches!(error, Error::Io { .. }), "{error}");
}

#[test]
fn a_runs_memory_files_are_written_without_asking_unless_denied() {
    use crate::permissions::{Decision, PermissionPolicy, PermissionRule, ToolKind};
    use subagent_core::PermissionMode;

    let dir = Path::new("/home/u/.claude/agent-memory/keeper");
    let mut policy = PermissionPolicy::new(PermissionMode::Default);
    policy.memory_dirs = vec![dir.to_owned()];
    let decide = |policy: &PermissionPolicy, tool: &str, subject: &str| {
        policy.evaluate_subjects(tool, ToolKind::Edit, &[subject])
    };
    let note = "/home/u/.claude/agent-memory/keeper/notes.md";
    assert_eq!(decide(&policy, "write_file", note), Decision::Allow);
    assert_eq!(decide(&policy, "edit_file", note), Decision::Allow);
    // Not Markdown, not the memory, not a writing tool: as before.
    assert_eq!(
        decide(
            &policy,
            "write_file",
            "/home/u/.claude/agent-memory/keeper/run.sh"
        ),
        Decision::Ask
    );
    assert_eq!(
        decide(&policy, "write_file", "/home/u/other.md"),
        Decision::Ask
    );
    assert_eq!(decide(&policy, "delete", note), Decision::Ask);
    assert_eq!(decide(&policy, "write_file", "notes.md"), Decision::Ask);
    // A deny rule and plan mode still hold; don't-ask allows it.
    let denied = policy
        .clone()
        .rule(PermissionRule::parse("write_file", Decision::Deny).unwrap());
    assert_eq!(decide(&denied, "write_file", note), Decision::Deny);
    assert_eq!(
        decide(
            &policy.restricted_to(PermissionMode::Plan),
            "write_file",
            note
        ),
        Decision::Deny
    );
    assert_eq!(
        decide(
            &policy.restricted_to(PermissionMode::DontAsk),
            "write_file",
            note
        ),
        Decision::Allow
    );
    // Without memory directories, nothing changes.
    assert_eq!(
        decide(
            &PermissionPolicy::new(PermissionMode::Default),
            "write_file",
            note
        ),
        Decision::Ask
    );
}
