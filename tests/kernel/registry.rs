//! The MCP registry's entry (server.json at the repository's root): what the registry requires
//! of it (its 2025-12-11 schema and the official registry's rules), and what ties it to the
//! crate it points at, so that a release cannot publish an entry the registry refuses or one
//! that names another version.

use serde_json::Value;
use std::path::Path;

fn repo_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// An exact version, as the registry wants it: no range, no wildcard, not `latest`.
fn exact(version: &str) -> bool {
    !version.is_empty()
        && version != "latest"
        && !version.contains(['^', '~', '>', '<', '=', '*', ' ', ','])
        && !version.split('.').any(|part| part == "x" || part == "X")
}

#[test]
fn server_json_has_what_the_registry_requires_and_names_this_crate() {
    let entry: Value =
        serde_json::from_str(&repo_file("server.json")).expect("server.json is JSON");
    assert_eq!(
        entry["$schema"],
        "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    );
    // name: reverse-DNS namespace, one slash, the server's name (3 to 200 characters).
    let name = entry["name"].as_str().expect("a name");
    let (namespace, server) = name.split_once('/').expect("namespace/name");
    assert!((3..=200).contains(&name.len()), "{name}");
    assert!(!server.contains('/'), "exactly one slash: {name}");
    assert!(
        namespace.starts_with("io.github.")
            && namespace
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-'),
        "a GitHub namespace, reverse-DNS: {namespace}"
    );
    assert!(
        server
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')),
        "{server}"
    );
    let description = entry["description"].as_str().expect("a description");
    assert!(
        (1..=100).contains(&description.chars().count()),
        "the registry takes 1 to 100 characters: {} in {description:?}",
        description.chars().count()
    );
    let version = entry["version"].as_str().expect("a version");
    assert_eq!(version, env!("CARGO_PKG_VERSION"), "the crate's version");
    assert!(exact(version), "{version}");

    let packages = entry["packages"].as_array().expect("packages");
    assert_eq!(packages.len(), 1, "{packages:?}");
    let package = &packages[0];
    assert_eq!(package["registryType"], "cargo");
    assert_eq!(
        package["registryBaseUrl"], "https://crates.io",
        "the only cargo registry it takes"
    );
    assert_eq!(package["identifier"], env!("CARGO_PKG_NAME"));
    assert_eq!(package["version"], version);
    assert_eq!(package["transport"], serde_json::json!({"type": "stdio"}));
    // The binary serves MCP as `flowdeck mcp`.
    let arguments = package["packageArguments"]
        .as_array()
        .expect("packageArguments");
    assert_eq!(
        arguments[0],
        serde_json::json!({"type": "positional", "value": "mcp"})
    );
    for argument in arguments {
        match argument["type"].as_str() {
            Some("positional") => assert!(
                argument.get("value").is_some() || argument.get("valueHint").is_some(),
                "{argument}"
            ),
            Some("named") => assert!(
                argument["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("--")),
                "{argument}"
            ),
            other => panic!("an argument of type {other:?}: {argument}"),
        }
    }
}

#[test]
fn the_readme_carries_the_registry_name_as_visible_text() {
    let entry: Value =
        serde_json::from_str(&repo_file("server.json")).expect("server.json is JSON");
    let marker = format!("mcp-name: {}", entry["name"].as_str().expect("a name"));
    let readme = repo_file("README.md");
    let line = readme
        .lines()
        .find(|line| line.contains(&marker))
        .unwrap_or_else(|| {
            panic!("README.md lacks `{marker}`: the registry checks the crate's README for it")
        });
    // crates.io drops HTML comments as it renders a README: the marker must be text.
    assert!(!line.contains("<!--"), "{line}");
}

#[test]
fn an_exact_version_is_one_release() {
    for version in ["0.1.0", "2.0.0-rc.1"] {
        assert!(exact(version), "{version}");
    }
    for version in ["latest", "^0.1.0", "~0.1", ">=0.1.0", "0.1.x", "0.*", ""] {
        assert!(!exact(version), "{version}");
    }
}
