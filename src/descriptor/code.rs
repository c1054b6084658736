//! The descriptor's codes: reading `skillfold.yaml` and every rule `check` applies to it.
//! Declared with [`crate::support::error_code::error_codes!`]; documented in `docs/error-codes.md`.

crate::support::error_code::error_codes! {
    /// Why a descriptor cannot be read or breaks a rule. Every one is a configuration error.
    ///
    /// ```
    /// assert_eq!(skillfold::DescriptorCode::InvalidHash.as_str(), "invalid_hash");
    /// ```
    pub enum DescriptorCode: "descriptor", default Invalid;
    /// The descriptor cannot be read (missing, permissions).
    DescriptorUnreadable = "descriptor_unreadable",
    /// The descriptor is larger than its bound.
    DescriptorTooLarge = "descriptor_too_large",
    /// The descriptor nests deeper than its bound.
    DescriptorTooDeep = "descriptor_too_deep",
    /// Not a descriptor: YAML syntax, an unknown key, a wrong shape.
    DescriptorSyntax = "descriptor_syntax",
    /// A Git source URL is empty.
    InvalidSource = "invalid_source",
    /// A URL carries credentials.
    CredentialsInUrl = "credentials_in_url",
    /// `revision` is not a full commit id.
    RevisionNotCommit = "revision_not_commit",
    /// A `directory` (or `guides`) is empty.
    InvalidDirectory = "invalid_directory",
    /// `root` is not a relative path inside the repository.
    InvalidRoot = "invalid_root",
    /// A Git source approves no bundle.
    NoApprovedBundles = "no_approved_bundles",
    /// A skill name breaks the name rule.
    InvalidName = "invalid_name",
    /// A version label is refused.
    InvalidVersion = "invalid_version",
    /// A hash is not 64 lowercase hexadecimal digits.
    InvalidHash = "invalid_hash",
    /// A Git source approves the same name twice.
    DuplicateName = "duplicate_name",
    /// Two Git sources use the same or nested corpus directories.
    SharedDirectory = "shared_directory",
    /// A name is pinned twice with different versions or hashes.
    ConflictingPins = "conflicting_pins",
    /// An agent (or the defaults alone) would get more unique skills than the selection bound
    /// (16, or `selection.max_skills`).
    TooManySkills = "too_many_skills",
    /// `selection.max_skills` is below the contract's 16: the bound is only raised.
    InvalidMaxSkills = "invalid_max_skills",
    /// `selection.max_skills` is over its ceiling of 1,024.
    MaxSkillsOverCeiling = "max_skills_over_ceiling",
    /// An agent name breaks the agent name rule.
    InvalidAgentName = "invalid_agent_name",
    /// A script allowlist entry is malformed or repeated.
    InvalidScriptAllowlist = "invalid_script_allowlist",
    /// An allowlisted script is not a `scripts/….py` path inside the bundle.
    InvalidScriptPath = "invalid_script_path",
    /// `track` is not a branch name (a Git source) or an OCI tag (an OCI source).
    InvalidTrack = "invalid_track",
    /// A `limits` profile is unknown, or its mapping holds an unknown key or a bad value.
    InvalidLimits = "invalid_limits",
    /// A `limits` value is over its hard ceiling.
    LimitsOverCeiling = "limits_over_ceiling",
    /// A source's `content` relaxes the content rules (`hidden: warn`, `comments: allow`)
    /// without a `reason`, or its reason is over its bound.
    InvalidContentPolicy = "invalid_content_policy",
    /// A Git source's `verify` policy cannot be used: no key file, a file that cannot be read or
    /// parsed (the line is named), or a kind of key this version does not verify.
    InvalidTrustPolicy = "invalid_trust_policy",
    /// A Git source has `verify` (or `pin` is given a key file) and this build of skillfold was
    /// built without commit signature support (the cargo feature `signatures`).
    SignaturesNotBuilt = "signatures_not_built",
    /// `scripts.timeout_seconds` is out of range.
    InvalidTimeout = "invalid_timeout",
    /// `update --write` must change a scalar written in a form it cannot rewrite in place (a
    /// block scalar, an alias, one with an anchor or a tag).
    NotRewritable = "not_rewritable",
    /// A pin's version is `pin`'s `"<version>"` placeholder and the bundle declares none.
    VersionPlaceholder = "version_placeholder",
    /// `update` names a source the descriptor does not have.
    UnknownSource = "unknown_source",
    /// `update --to` is not a target of a selected source: not a full commit id, branch or tag
    /// name for a Git source; neither a `sha256:` digest nor an OCI tag for an OCI source.
    InvalidTarget = "invalid_target",
    /// `update` names an OCI source that has no `track` tag, and no `--to`.
    NotTracked = "not_tracked",
    /// An `oci` reference is not `REGISTRY/REPOSITORY@sha256:<64 hex>`.
    InvalidReference = "invalid_reference",
    /// A declared scanner cannot be used (a bad name, an empty command, a timeout out of
    /// range), or a `require_scan` names a scanner the descriptor does not declare.
    InvalidScanner = "invalid_scanner",
    /// A recorded verdict (`scans`) is malformed: an undeclared scanner, a bad digest, hash or
    /// date, a summary over its bound or with control characters.
    InvalidScan = "invalid_scan",
    /// A bundle a `require_scan` covers has no `pass` verdict by a required scanner for its
    /// current hash (a verdict for another hash is void).
    ScanMissing = "scan_missing",
    /// An `oci` reference names a tag (or no digest): images are pinned by manifest digest.
    ReferenceNotPinned = "reference_not_pinned",
}

/// A limits profile is read only from a descriptor (a source's `limits`), so its refusals carry
/// the descriptor's codes; they are declared here because `format`, where the profile lives, sits
/// below this layer.
impl crate::format::limits::LimitsError {
    /// Stable error code: `limits_over_ceiling` for a value over its hard ceiling,
    /// `invalid_limits` for every other refusal.
    pub fn code(&self) -> DescriptorCode {
        if self.is_over_ceiling() {
            DescriptorCode::LimitsOverCeiling
        } else {
            DescriptorCode::InvalidLimits
        }
    }
}

crate::support::error_code::coded_by_code!(crate::format::limits::LimitsError);
