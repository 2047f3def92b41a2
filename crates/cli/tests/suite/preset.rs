//! `subagent preset validate` and `subagent preset schema`.

use pretty_assertions::assert_eq;

use super::support::write_file;
use super::support::{preset, stderr, stdout, subagent};

#[test]
fn every_shipped_preset_validates_with_the_real_factories() {
    let home = tempfile::tempdir().unwrap();
    for name in [
        "standard.yaml",
        "cross-product.yaml",
        "offline.yaml",
        "read-only.yaml",
    ] {
        let output = subagent(home.path())
            .args(["preset", "validate"])
            .arg(preset(name))
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{name}: {}", stderr(&output));
        assert!(stdout(&output).contains(": valid"), "{name}");
    }
}

#[test]
fn a_bad_preset_names_file_line_and_column_and_exits_2() {
    let home = tempfile::tempdir().unwrap();
    let file = write_file(
        home.path(),
        "bad.yaml",
        "version: 1\nproviders:\n  - name: spawn\n    kind: spawn\n    disabeld: true\n",
    );
    let output = subagent(home.path())
        .args(["preset", "validate"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    let expected = format!("error[INVALID_ARGUMENTS]: {}:5:5: ", file.display());
    assert!(err.starts_with(&expected), "{err}");
    assert!(err.contains("disabeld"), "{err}");

    let output = subagent(home.path())
        .args(["preset", "validate", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let value: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(value["code"], "INVALID_ARGUMENTS");
    assert_eq!(
        (value["line"].as_u64(), value["column"].as_u64()),
        (Some(5), Some(5))
    );

    // The same preset refuses `delegate` before anything starts.
    let output = subagent(home.path())
        .args(["delegate", "--preset"])
        .arg(&file)
        .arg("hello")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains(":5:5:"));
}

#[test]
fn schema_is_json_with_every_provider_kind() {
    let home = tempfile::tempdir().unwrap();
    let output = subagent(home.path())
        .args(["preset", "schema"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let schema: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let text = schema.to_string();
    // Every built-in kind (the one list, whose names its own unit test pins).
    let kinds = subagent_cli::built_in_kinds();
    assert_eq!(kinds.len(), 7);
    for kind in kinds.iter().map(|kind| kind.kind) {
        assert!(
            text.contains(&format!("\"{kind}\"")),
            "{kind} missing from the schema"
        );
    }
}
