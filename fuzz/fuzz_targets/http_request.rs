//! Fuzz target `http_request`: see `skillfold::fuzz_entry::http_request` for the input and the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::http_request(data));
