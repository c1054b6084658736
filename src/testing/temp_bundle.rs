//! What the format's unit tests add to the shared bundle fixture ([`super::bundle_dir`]):
//! folders, links, and the problem codes the bundle reader reports.

use std::path::Path;

pub use super::bundle_dir::{TempBundle, skill_md};
use crate::format::problem::ProblemCode;

impl TempBundle {
    /// The temporary directory that holds the bundle (outside of it).
    pub fn outside(&self) -> &Path {
        self.root().parent().expect("parent")
    }

    pub fn mkdir(&self, rel: &str) {
        fs_err::create_dir_all(self.path(rel)).expect("mkdir -p");
    }

    pub fn symlink(&self, target: impl AsRef<Path>, rel: &str) {
        std::os::unix::fs::symlink(target, self.path(rel)).expect("symlink");
    }

    /// The error codes `Bundle::read_dir` reports (empty when the bundle is valid).
    pub fn codes(&self) -> Vec<ProblemCode> {
        match crate::format::bundle::Bundle::read_dir(self.root()) {
            Ok(_) => Vec::new(),
            Err(crate::format::bundle::BundleError::Invalid(e)) => e
                .problems
                .as_slice()
                .iter()
                .filter(|p| p.is_error())
                .map(|p| p.code)
                .collect(),
            Err(other) => panic!("unexpected load error: {other}"),
        }
    }

    pub fn assert_valid(&self) {
        assert_eq!(
            self.codes(),
            Vec::<ProblemCode>::new(),
            "expected a valid bundle"
        );
    }

    pub fn assert_refused(&self, code: ProblemCode) {
        let codes = self.codes();
        assert!(codes.contains(&code), "expected {code:?}, got {codes:?}");
    }
}
