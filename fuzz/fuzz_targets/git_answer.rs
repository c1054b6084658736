//! Fuzz target `git_answer`: see `skillfold::fuzz_entry::git_answer` for the input and the
//! invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skillfold::fuzz_entry::git_answer(data));
