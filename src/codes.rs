//! The registry of every error code skillfold reports, for hosts and scripts.
//!
//! Every refusal carries a stable `snake_case` code (in brackets at the end of a human line, as
//! `code` in JSON reports and in tool errors) whose spelling never changes once released. Each
//! area of skillfold declares its codes once, as an enum, and each code declares its exit class
//! ([`ExitClass`]: `ok` 0, `retryable` 1, `invalid` 2): the exit status of a command that fails
//! with it, and for a host whether trying again may help. The `skillfold` binary takes a failing
//! command's status from its code and nowhere else. The areas, in the order of
//! `docs/error-codes.md` (which a test checks against [`registry`], both ways):
//!
//! | area | enum | what fails |
//! | --- | --- | --- |
//! | `bundle` | [`ProblemCode`] | a bundle rule (a path, a bound, the frontmatter) |
//! | `bundle directory` | [`ReadCode`] | reading a bundle directory |
//! | `pin` | [`PinCode`] | a digest, name or version against its pin |
//! | `descriptor` | [`DescriptorCode`] | the operator's `skillfold.yaml` |
//! | `preparation` | [`PrepareCode`] | fetching a commit, the corpus, its guard |
//! | `distribution` | [`DistributionCode`] | OCI images: pushing and pulling |
//! | `runtime` | [`RuntimeCode`] | loading bundles into a catalogue |
//! | `install` | [`InstallCode`] | installing into an agent's folder, and checking it |
//! | `mcp` | `ServeCode` | the MCP server (a build with the `mcp` feature) |
//! | `import` | `ImportCode` | `skillfold import`: another tool's lock file (a build with the `git` feature) |
//! | `tool` | [`ToolCode`] | a refused tool call |
//! | `spec` | [`SpecCode`] | the skills-ref compatible commands |
//! | `command` | [`CommandCode`] | the command line itself (a lost stdout, a usage error) |
//!
//! Every enum implements [`Code`] (its area, its codes, each one's spelling and class); an
//! [`ErrorCode`] holds a code of any area. Every error type implements [`Coded`]: its code, and
//! so its class.
//!
//! ```
//! use skillfold::codes::{self, ExitClass, PrepareCode};
//!
//! let held = codes::ErrorCode::from(PrepareCode::GuardHeld);
//! assert_eq!((held.as_str(), held.area(), held.exit()), ("guard_held", "preparation", ExitClass::Retryable));
//! assert_eq!(held.exit().status(), 1);
//!
//! // Every code of every area, each with its area and exit class.
//! let all = codes::registry();
//! let digest = all.iter().find(|c| c.area() == "pin" && c.as_str() == "digest_mismatch").unwrap();
//! assert_eq!(digest.exit().status(), 2);
//! // Only a warning exits 0.
//! assert!(all.iter().filter(|c| c.exit() == ExitClass::Ok).all(|c| c.as_str() == "case_collision"));
//! ```

pub use crate::descriptor::code::DescriptorCode;
pub use crate::format::code::{PinCode, ReadCode};
pub use crate::format::problem::ProblemCode;
#[cfg(feature = "mcp")]
pub use crate::mcp::code::ServeCode;
#[cfg(feature = "git")]
pub use crate::ops::import::code::ImportCode;
pub use crate::ops::install::code::InstallCode;
pub use crate::runtime::code::RuntimeCode;
pub use crate::runtime::tools::ToolCode;
pub use crate::skills_ref::code::SpecCode;
pub use crate::source::code::PrepareCode;
pub use crate::source::oci::code::DistributionCode;
pub use crate::support::error_code::{Code, Coded, ErrorCode, ExitClass};

use crate::support::error_code::codes_of;

crate::support::error_code::error_codes! {
    /// The command line's own failures: what ends a command without an error of a library area
    /// (the binary sits above this registry, so its codes are declared here).
    pub enum CommandCode: "command", default Invalid;
    /// What the command printed could not be written to stdout (a full disk; a reader that went
    /// away is not an error), or its report could not be rendered.
    OutputFailed = "output_failed" => Retryable,
    /// The arguments cannot be used together (beyond what the parser checks).
    InvalidUsage = "invalid_usage",
    /// `schema --out`: a schema could not be written.
    SchemaWriteFailed = "schema_write_failed" => Retryable,
    /// `outdated --exit-code`: an approved bundle is changed, removed or invalid at its head
    /// (the report was made; the pins are behind and want a review).
    PinsOutdated = "pins_outdated",
    /// `token`: the random source failed, or the tokens file could not be read or written.
    TokenWriteFailed = "token_write_failed" => Retryable,
}

/// Every code of every area, as [`ErrorCode`]s (each knows its area, spelling and exit class),
/// area by area in the order of `docs/error-codes.md`, each area in declaration order.
pub fn registry() -> Vec<ErrorCode> {
    let mut codes: Vec<ErrorCode> = codes_of::<ProblemCode>()
        .chain(codes_of::<ReadCode>())
        .chain(codes_of::<PinCode>())
        .chain(codes_of::<DescriptorCode>())
        .chain(codes_of::<PrepareCode>())
        .chain(codes_of::<DistributionCode>())
        .chain(codes_of::<RuntimeCode>())
        .chain(codes_of::<InstallCode>())
        .collect();
    // The MCP server's codes exist only in a build with the server.
    #[cfg(feature = "mcp")]
    codes.extend(codes_of::<ServeCode>());
    // `import` exists only in a build that fetches from Git.
    #[cfg(feature = "git")]
    codes.extend(codes_of::<ImportCode>());
    codes.extend(codes_of::<ToolCode>());
    codes.extend(codes_of::<SpecCode>());
    codes.extend(codes_of::<CommandCode>());
    codes
}

#[cfg(test)]
mod tests {
    use super::registry;

    #[test]
    fn no_area_declares_a_code_twice() {
        let codes = registry();
        for (i, a) in codes.iter().enumerate() {
            assert!(
                !codes[i + 1..]
                    .iter()
                    .any(|b| b.area() == a.area() && b.as_str() == a.as_str()),
                "`{a}` twice in area `{}`",
                a.area()
            );
        }
    }
}
