//! The codes of `install` and `verify --installed`: writing verified bundles into an agent's
//! folder and checking that folder. Declared with [`crate::support::error_code::error_codes!`];
//! documented in `docs/error-codes.md`.

crate::support::error_code::error_codes! {
    /// Why an install into an agent's folder is refused, or why the folder does not hold its
    /// selection.
    pub enum InstallCode: "install", default Invalid;
    /// A folder (or file, or link) that skillfold did not install has a selected bundle's name;
    /// nothing was changed.
    InstallConflict = "install_conflict",
    /// The target folder, or a folder `install` would create on the way to it, is a symbolic
    /// link or not a directory (never followed), or holds too many entries to inventory.
    InstallTargetUnsafe = "install_target_unsafe",
    /// The record `.skillfold-install.json` is not one skillfold wrote: a link, too large, not
    /// JSON of the known format, an invalid or repeated name.
    InstallRecordInvalid = "install_record_invalid",
    /// The target folder cannot be written (a read-only file system, no permission).
    InstallNotWritable = "install_not_writable",
    /// Writing the target failed otherwise (a full disk, an I/O error); what was installed
    /// before is intact.
    InstallIo = "install_io" => Retryable,
    /// The folder was installed for another agent (or for the defaults) than the one asked
    /// for; nothing was changed. `install --switch-agent` changes it.
    InstallAgentMismatch = "install_agent_mismatch",
    /// `verify --installed`: an installed bundle's files differ from its pin (a file changed,
    /// added or removed), a selected bundle is missing, or one no longer selected is still there.
    InstalledDrift = "installed_drift",
}
