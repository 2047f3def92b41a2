//! docs/permissions.md says what the code does.

use pretty_assertions::assert_eq;
use subagent_settings::tool_name_table;

fn doc() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/permissions.md");
    std::fs::read_to_string(root).unwrap()
}

#[test]
fn the_tool_name_table_is_the_codes() {
    let doc = doc();
    let table: Vec<(String, String)> = doc
        .lines()
        .skip_while(|line| *line != "| ours | Claude Code |")
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<String> = line
                .split('|')
                .map(|cell| cell.trim().trim_matches('`').to_owned())
                .collect();
            (cells[1].clone(), cells[2].clone())
        })
        .collect();
    let code: Vec<(String, String)> = tool_name_table()
        .iter()
        .map(|(ours, claude)| ((*ours).to_owned(), (*claude).to_owned()))
        .collect();
    assert_eq!(table, code);
}

#[test]
fn no_console_blocks_until_the_commands_exist() {
    // Console blocks run in crates/cli's doc test; `subagent settings` and `subagent trust` are
    // not wired yet, so the page shows none.
    assert!(!doc().contains("```console"));
}
