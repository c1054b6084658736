//! The runtime's codes: loading an agent's bundles into a catalogue. Tool calls have their own
//! area, [`crate::runtime::tools::ToolCode`]. Declared with
//! [`crate::support::error_code::error_codes!`]; documented in `docs/error-codes.md`.

crate::support::error_code::error_codes! {
    /// Why a bundle is not served or a catalogue cannot be built.
    ///
    /// ```
    /// # let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
    /// let unknown = built.runtime.catalogue(Some("nobody")).unwrap_err();
    /// assert_eq!(unknown.code(), skillfold::RuntimeCode::UnknownAgent);
    /// ```
    pub enum RuntimeCode: "runtime", default Invalid;
    /// The corpus holds no prepared generation for the pin.
    NotPrepared = "not_prepared",
    /// The agent's catalogue would hold too many skills.
    TooManySkills = "too_many_skills",
    /// Two sources give one name different content.
    ConflictingSkills = "conflicting_skills",
    /// No agent of that name in the descriptor.
    UnknownAgent = "unknown_agent",
    /// The published generation's manifest is unreadable or of an unknown format: its bundles
    /// are not served (the spelling of the corpus's code, `verify` exits 2; `prepare` publishes
    /// a fresh generation).
    CorpusBadManifest = "corpus_bad_manifest",
}
