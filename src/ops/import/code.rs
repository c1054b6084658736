//! The codes of `skillfold import`: reading another tool's lock file and turning its entries into
//! a descriptor draft. Declared with [`crate::support::error_code::error_codes!`]; documented in
//! `docs/error-codes.md`.

crate::support::error_code::error_codes! {
    /// Why a lock file, or one of its entries, cannot be imported.
    pub enum ImportCode: "import", default Invalid;
    /// The lock file cannot be read (missing, permissions, not a regular file).
    LockUnreadable = "lock_unreadable",
    /// The lock file is larger than the bound `import` reads.
    LockTooLarge = "lock_too_large",
    /// The lock file nests deeper than the bound `import` reads.
    LockTooDeep = "lock_too_deep",
    /// The lock file is not JSON or YAML, or not UTF-8 text.
    LockSyntax = "lock_syntax",
    /// A mapping of the lock file names a key twice.
    LockDuplicateKey = "lock_duplicate_key",
    /// The lock file is none of the formats `import` reads.
    LockUnknownFormat = "lock_unknown_format",
    /// An entry lacks a field its format requires, or a field has the wrong shape.
    LockInvalidEntry = "lock_invalid_entry",
    /// An entry points at a local path or a `file://` URL: never fetched.
    LockLocalPath = "lock_local_path",
    /// An entry's URL carries credentials (`user:token@`, a query): never fetched.
    LockCredentials = "lock_credentials",
    /// An entry's source is of a kind skillfold does not pin (a registry name, an npm package,
    /// an image layout, a skill at a repository's root).
    LockUnsupportedSource = "lock_unsupported_source",
    /// The content hash the lock records differs from the bundle `import` fetched.
    LockHashMismatch = "lock_hash_mismatch",
}
