//! Fuzz target `descriptor_edit`: see `skillfold::fuzz_entry::descriptor_edit` for the input and the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::descriptor_edit(data));
