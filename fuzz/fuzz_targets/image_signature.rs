//! Fuzz target `image_signature`: see `skillfold::fuzz_entry::image_signature` for the input and
//! the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::image_signature(data));
