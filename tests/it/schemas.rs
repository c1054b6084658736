//! The committed JSON Schemas under `schemas/` are exactly what the code generates.
//! Regenerate them with `cargo run -- schema --out schemas`.

use std::path::Path;

#[test]
fn committed_schemas_are_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    for (name, schema) in skillfold::schemas::all() {
        let want = skillfold::schemas::render(&schema);
        let got = fs_err::read_to_string(dir.join(name)).unwrap_or_default();
        assert!(
            got == want,
            "schemas/{name} is stale: run `cargo run -- schema --out schemas` and commit the result"
        );
    }
}

#[test]
fn descriptor_schema_describes_the_shape() {
    let schema = skillfold::descriptor::json_schema();
    let text = schema.to_string();
    for needle in [
        "revision",
        "approved",
        "^([0-9a-f]{40}|[0-9a-f]{64})$",
        "additionalProperties",
    ] {
        assert!(
            text.contains(needle),
            "{needle} missing from the descriptor schema"
        );
    }
}
