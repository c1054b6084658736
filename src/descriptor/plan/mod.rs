//! Static checks of a descriptor (`skillfold check`): everything that can be known without the
//! network or the corpus, every problem listed.
//!
//! Per entry: URLs carry no credentials; revisions are full commit ids; names, version labels and
//! hashes follow their grammars; `root` is a relative path inside the repository (hidden folders
//! allowed: [`RootPath`](crate::format::root_path::RootPath)); a Git source approves at least
//! one bundle and each name once. Across the file: Git corpora use distinct, non-nested
//! directories. Per *effective selection* — the defaults alone, and each agent's defaults plus
//! its extras — a name has one pin (two agents may each pin their own) and there are at most 16
//! unique names, or the descriptor's `selection.max_skills` (16 to 1,024).
//!
//! One concept per file: `types.rs` the checked plan ([`Plan`], its [`Source`]s and
//! [`DescriptorProblem`]), `checker.rs` the rules above ([`check`]), `across.rs` those
//! across entries (run on what every entry holds, valid or not), `selection.rs` those of an
//! effective selection, and one file per grammar a
//! value must follow: `image_reference.rs` ([`ImageReference`], an OCI image pinned by digest) and
//! `branch_name.rs` ([`check_branch`], a branch `track` may follow); `scans.rs` the scanner
//! keys and the policy that requires verdicts (`scan_missing`); `unknown_agent.rs` the one
//! wording of an agent the plan does not name ([`UnknownAgent`]). Their items are re-exported
//! here.

mod across;
mod branch_name;
mod checker;
mod image_reference;
pub(crate) mod scans;
mod selection;
mod types;
mod unknown_agent;

pub use self::branch_name::check_branch;
pub use self::checker::check;
#[cfg(feature = "git")]
pub use self::checker::valid_agent_name;
#[cfg(feature = "oci")]
pub use self::image_reference::is_sha256_digest;
pub use self::image_reference::{ImageReference, ReferenceError, check_tag};
// Only `pin --scan` (built with the Git fetcher) resolves the scanners outside `check`.
#[cfg(any(feature = "git", test))]
pub use self::scans::resolve_scanners;
#[cfg(feature = "git")]
pub use self::scans::without_scan_policy;
pub use self::types::{
    CorpusRef, DescriptorProblem, GitSource, LocalSource, MAX_SKILLS_CEILING, OciSource, Plan,
    Source, worst_code,
};
pub use self::unknown_agent::UnknownAgent;
