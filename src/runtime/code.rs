//! The runtime's codes: loading an agent's bundles into a catalogue. Tool calls have their own
//! area, [`crate::runtime::tools::ToolCode`]. Declared with [`crate::error_codes!`]; documented
//! in `docs/error-codes.md`.

crate::error_codes! {
    /// Why a bundle is not served or a catalogue cannot be built.
    pub enum RuntimeCode: "runtime", default Invalid;
    /// The corpus holds no prepared generation for the pin.
    NotPrepared = "not_prepared",
    /// The agent's catalogue would hold too many skills.
    TooManySkills = "too_many_skills",
    /// Two sources give one name different content.
    ConflictingSkills = "conflicting_skills",
    /// No agent of that name in the descriptor.
    UnknownAgent = "unknown_agent",
}
