//! Fuzz target `tokens`: see `skillfold::fuzz_entry::tokens` for the input and the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::tokens(data));
