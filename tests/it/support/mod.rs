//! What the integration tests share, in one place, so a new test starts from here:
//!
//! - [`world`]: the world a test runs in, a temporary directory with local bundles and the
//!   descriptor that pins them ([`world::World`]), and the smaller fixtures of that kind;
//! - [`git`]: Git repositories made with the real `git` CLI, and descriptors of their commits;
//! - [`git_server`]: Git servers on 127.0.0.1 (smart HTTP through lighttpd, or scripted bytes);
//! - [`bin`]: the `skillfold` binary, run as a user runs it;
//! - [`venv`]: Python virtual environments of pinned packages under the target directory.
//!
//! What only one test file needs stays in that file.

pub mod bin;
pub mod git;
pub mod git_server;
pub mod venv;
pub mod world;
