//! Fuzz target `tools`: `load_skill`, `skill_run_script` and `skill_read_reference` on one
//! catalogue built once; see `skillfold::fuzz_entry::ToolHarness` for the input and the
//! invariants. The discovered-skills fixture folder lives under this crate's `target/`.
#![no_main]

use std::sync::LazyLock;

use skillfold::fuzz_entry::ToolHarness;

static HARNESS: LazyLock<ToolHarness> = LazyLock::new(|| {
    ToolHarness::new(concat!(env!("CARGO_MANIFEST_DIR"), "/target/tools-fixture").as_ref())
});

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    HARNESS.call(data);
});
