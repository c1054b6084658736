//! Fuzz target `mcp_framing`: one line from an MCP client through the stdio framing's judgement
//! (`skillfold::mcp::framing::judge` and `oversized`); see `skillfold::fuzz_entry::mcp_framing`
//! for the invariants.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    skillfold::fuzz_entry::mcp_framing(data);
});
