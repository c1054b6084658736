//! Fuzz target `oci_pull`: see `skillfold::fuzz_entry::oci_pull` for the input and the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::oci_pull(data));
