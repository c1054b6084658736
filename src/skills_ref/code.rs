//! The spec tooling's own codes: reading a skill the way skills-ref does ([`SpecCode`]).
//! Declared with [`crate::support::error_code::error_codes!`]; documented in `docs/error-codes.md`.

crate::support::error_code::error_codes! {
    /// Why a skill could not be read or its properties printed. The spec commands exit 1 on
    /// every one, as skills-ref does.
    pub enum SpecCode: "spec", default Retryable;
    /// The path does not exist.
    NotFound = "not_found",
    /// The path is not a directory.
    NotADirectory = "not_a_directory",
    /// The skill directory or its `SKILL.md` is a symbolic link.
    Symlink = "symlink",
    /// Reading failed.
    IoError = "io_error",
    /// No `SKILL.md` in the directory.
    MissingSkillMd = "missing_skill_md",
    /// `SKILL.md` does not start with a `---` line.
    FrontmatterMissing = "frontmatter_missing",
    /// No closing `---` line.
    FrontmatterUnclosed = "frontmatter_unclosed",
    /// The frontmatter is not valid strictyaml.
    YamlInvalid = "yaml_invalid",
    /// The frontmatter is not a mapping.
    FrontmatterNotMapping = "frontmatter_not_mapping",
    /// `SKILL.md` is a directory, FIFO or device.
    NotAFile = "not_a_file",
    /// `SKILL.md` is larger than its bound.
    FileTooLarge = "file_too_large",
    /// `SKILL.md` is not valid UTF-8.
    NotUtf8 = "not_utf8",
    /// The frontmatter holds a character YAML does not allow.
    ControlChar = "control_char",
    /// YAML that strictyaml crashes on.
    YamlUnsupported = "yaml_unsupported",
    /// `name` or `description` is absent.
    FieldMissing = "field_missing",
    /// `name` or `description` is not a string.
    FieldNotString = "field_not_string",
    /// A value skills-ref cannot print as JSON.
    ValueUnsupported = "value_unsupported",
    /// `validate`: the skill breaks a rule of the specification (each is listed, in skills-ref's
    /// words).
    ValidationFailed = "validation_failed",
}
