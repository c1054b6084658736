//! Where a bundle comes from: the kind of its source, as the `prepare` report, the host record's
//! [`crate::Origin`] and the MCP server's `skillfold/origin` spell it (`git`, `oci`, `local`,
//! `custom`, `discovered`). One enum, so no part of skillfold compares kind strings.

use serde::Serialize;

/// The kind of a bundle's source.
///
/// ```
/// use skillfold::SourceKind;
/// assert_eq!(SourceKind::Oci.as_str(), "oci");
/// assert_eq!(serde_json::to_string(&SourceKind::Git).unwrap(), "\"git\"");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SourceKind {
    /// A pinned commit of a Git repository (`git:` in the descriptor), prepared into a corpus.
    Git,
    /// A pinned OCI image (`oci:`), pulled into a corpus.
    Oci,
    /// A deployed directory (`local:`), verified in place.
    Local,
    /// A host's own [`crate::BundleSource`].
    Custom,
    /// A guide found under a descriptor's `guides` root.
    Discovered,
}

impl SourceKind {
    /// The stable spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Git => "git",
            SourceKind::Oci => "oci",
            SourceKind::Local => "local",
            SourceKind::Custom => "custom",
            SourceKind::Discovered => "discovered",
        }
    }
}

impl std::fmt::Display for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for SourceKind {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SourceKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}
