//! Fuzz target `oci_tag`: see `skillfold::fuzz_entry::oci_tag` for the input and the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::oci_tag(data));
