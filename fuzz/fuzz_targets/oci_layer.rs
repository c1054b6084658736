//! Fuzz target `oci_layer`: see `skillfold::fuzz_entry::oci_layer` for the input and the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::oci_layer(data));
