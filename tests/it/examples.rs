//! The bundled examples: `examples/skillfold.yaml` checks, pins exactly the bytes of
//! `examples/skills/`, and `scripts/demo` (the README's main command) prepares it end to end.

use std::path::Path;
use std::process::Command;

use super::util::{skillfold, stderr, stdout};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn example_descriptor_checks() {
    let out = skillfold(&["check", "-c", "examples/skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn example_pins_name_the_example_bundles() {
    let loaded =
        skillfold::descriptor::load(&root().join("examples/skillfold.yaml")).expect("load");
    let plan = skillfold::descriptor::check(&loaded.descriptor, &loaded.base).expect("check");
    let mut seen = 0;
    for source in &plan.sources {
        for pin in source.pins() {
            let dir = root().join("examples/skills").join(pin.name.as_str());
            let bundle = skillfold::bundle::Bundle::read_dir(&dir).expect("example bundle");
            assert_eq!(
                bundle.digest(),
                pin.hash,
                "{}: re-pin after review",
                pin.name
            );
            seen += 1;
        }
    }
    assert_eq!(
        seen,
        fs_err::read_dir(root().join("examples/skills"))
            .expect("dir")
            .count()
    );
}

#[test]
fn demo_prepares_the_example_end_to_end() {
    let out = Command::new("bash")
        .arg(root().join("scripts/demo"))
        .env("SKILLFOLD_BIN", env!("CARGO_BIN_EXE_skillfold"))
        .current_dir(root())
        .output()
        .expect("run scripts/demo");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stderr(&out);
    assert!(text.contains("up to date (verified, no fetch)"), "{text}");
    for name in [
        "commit-message",
        "changelog-writer",
        "csv-profiler",
        "http-api-review",
    ] {
        assert!(
            stdout(&out).contains(&format!("  {name}/SKILL.md")),
            "{name} not published"
        );
    }
}
