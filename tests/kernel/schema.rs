//! The published schema and the Rust types say the same thing: every valid manifest, read into
//! the types and written back out, still passes the schema and reads back identical.

use flowdeck::workflow::schema::validator;
use flowdeck::workflow::{Format, Workflow, check_bytes};
use std::path::Path;

fn manifests() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["workflows", "tests/fixtures/valid"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("folder") {
            let path = entry.expect("entry").path();
            if path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(Format::from_file_name)
                .is_some()
            {
                files.push(path);
            }
        }
    }
    assert!(
        files.len() >= 10,
        "expected the bundled workflows and the valid fixtures"
    );
    files
}

#[test]
fn types_round_trip_through_the_schema() {
    let schema = validator().expect("schema compiles");
    for path in manifests() {
        let name = path.file_name().and_then(|n| n.to_str()).expect("name");
        let bytes = std::fs::read(&path).expect("read");
        let checked = check_bytes(&bytes, Format::from_file_name(name).expect("format"));
        let workflow = checked
            .workflow
            .unwrap_or_else(|| panic!("{name}: {:?}", checked.violations));
        let written = serde_json::to_value(&workflow).expect("serialize");
        let errors: Vec<String> = schema
            .iter_errors(&written)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{name}: the types wrote what the schema refuses: {errors:?}"
        );
        let back: Workflow = serde_json::from_value(written).expect("read back");
        assert_eq!(back, workflow, "{name}: round trip changed the workflow");
    }
}
