//! Fuzz target `bundle_path`: see `skillfold::fuzz_entry::bundle_path` for the input and the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::bundle_path(data));
