//! Fuzz target `bundle`: see `skillfold::fuzz_entry::bundle` for the input and the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::bundle(data));
