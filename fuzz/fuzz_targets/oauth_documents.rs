//! Fuzz target `oauth_documents`: see `skillfold::fuzz_entry::oauth_documents` for the input and the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::oauth_documents(data));
