//! The registry of every error code: each area's enum, in the order of `docs/error-codes.md`.
//!
//! The enums live in their areas (`format`, `descriptor`, `prepare`, `runtime`, `mcp`, `spec`);
//! this is the one place that lists them all, for the docs and the test that keeps the docs
//! page and the enums in agreement. (The MCP server's codes are listed only in a build with the
//! `mcp` feature, the one that has the server.)

use crate::support::error_code::{ErrorCode, codes_of};

crate::error_codes! {
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
}

/// Every code of every area, as [`ErrorCode`]s (each knows its area, spelling and exit class),
/// area by area in the order of `docs/error-codes.md`, each area in declaration order.
pub fn registry() -> Vec<ErrorCode> {
    use crate::descriptor::code::DescriptorCode;
    use crate::format::code::{PinCode, ReadCode};
    use crate::format::problem::ProblemCode;
    use crate::runtime::code::RuntimeCode;
    use crate::runtime::tools::ToolCode;
    use crate::skills_ref::code::{AllowedToolsCode, SpecCode};
    use crate::source::code::PrepareCode;

    let mut codes: Vec<ErrorCode> = codes_of::<ProblemCode>()
        .chain(codes_of::<ReadCode>())
        .chain(codes_of::<PinCode>())
        .chain(codes_of::<DescriptorCode>())
        .chain(codes_of::<PrepareCode>())
        .chain(codes_of::<crate::source::oci::code::DistributionCode>())
        .chain(codes_of::<RuntimeCode>())
        .collect();
    // The MCP server's codes exist only in a build with the server.
    #[cfg(feature = "mcp")]
    codes.extend(codes_of::<crate::mcp::code::ServeCode>());
    codes.extend(codes_of::<ToolCode>());
    codes.extend(codes_of::<SpecCode>());
    codes.extend(codes_of::<AllowedToolsCode>());
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
