//! The names most hosts use, for a glob import: `use skillfold::prelude::*;` brings the runtime,
//! its builder, catalogues, the tool formats and the results of a call.
//!
//! ```
//! use skillfold::prelude::*;
//!
//! fn serve(catalogue: &Catalogue, input: &serde_json::Value) -> Result<(serde_json::Value, Record), ToolError> {
//!     catalogue.call("load_skill", input)
//! }
//! # let _ = serve;
//! ```

pub use crate::runtime::Runtime;
pub use crate::runtime::builder::{Built, GitCorpus};
pub use crate::runtime::catalogue::Catalogue;
pub use crate::runtime::tools::export::ToolFormat;
pub use crate::runtime::tools::{Access, Record, ToolError};
