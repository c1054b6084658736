//! Fuzz target `skills_ref`: see `skillfold::fuzz_entry::skills_ref` for the input and the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::skills_ref(data));
