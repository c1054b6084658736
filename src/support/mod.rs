//! Small helpers every layer shares, none of which knows about bundles: the one escaping
//! function for untrusted text ([`escape`]), hex ([`hex`]), wall-clock times ([`time`]), a bounded
//! worker pool ([`parallel`]), a child process confined and bounded ([`confined`]: the script
//! runner's and the scanners'), the machinery of stable error codes ([`error_code`]), an error as one line of
//! text (`error_text`), the portable
//! form of generated JSON Schemas ([`json_schema`]), JSON text with the invisible characters a
//! person must not get raw escaped ([`json_text`]) and test-only crash injection
//! ([`failpoint`]). It is the bottom layer: every module may use it, and it uses nothing else in
//! the crate (`scripts/check-layers` checks).

pub mod confined;
pub mod error_code;
#[cfg(any(feature = "git", feature = "http"))]
pub mod error_text;
pub mod escape;
pub mod failpoint;
pub mod hex;
pub mod json_schema;
pub mod json_text;
pub mod parallel;
pub mod time;
