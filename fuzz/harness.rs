//! The bodies of the fuzz targets under `fuzz/`, shared with the unit test that replays their
//! committed seeds and crash reproducers on stable ([`harness_seeds.rs`](seeds)). Compiled into the
//! library only for the fuzz targets (`cfg(fuzzing)`) and its unit tests: not part of the API.
//!
//! Each function takes the raw bytes a fuzzer produced, feeds them to one parser through its
//! public entry point, and asserts the invariants that are cheap to state: nothing panics, a
//! refusal always says why, an accepted value satisfies the rule that accepted it, and what
//! round-trips does so exactly. A failed assertion is a finding, exactly like a crash.
//!
//! - [`frontmatter`]: `SKILL.md` in the bundle dialect, cross-checked with [`Bundle::check`](crate::format::bundle::Bundle::check).
//! - [`skills_ref`]: `SKILL.md` in the skills-ref dialect (decoding, fences, strict YAML,
//!   `validate_metadata`, the JSON printer).
//! - [`bundle_path()`]: the path grammar.
//! - [`descriptor`]: `skillfold.yaml` parsed, re-serialised and checked.
//! - [`ToolHarness`]: the three tools on a catalogue built once from in-memory bundles and a
//!   small discovered-skills folder.
//! - [`bundle`]: a whole bundle from an in-memory file set, its check and its digest.
//! - [`mcp_framing`] (feature `mcp`): one line from an MCP client, judged by the stdio framing.
//! - [`oci_layer`]: an image layer's tar, read by the strict reader of `oci:` sources.
//! - [`signers`]: an allowed-signers file (`verify.allowed_signers`).
//! - [`signature`]: a raw commit object: Git's header split and the signature verdict.
//! - [`image_signature`]: one signature of an image (a cosign ≤ v2 layer or a Sigstore bundle),
//!   judged offline against a fixed publisher policy.
//! - [`descriptor_edit`]: the in-place editor of `update --write`.
//! - [`tokens`] (feature `http`): the tokens file of `serve --listen` and the bearer verdicts.
//! - [`oci_pull`] (feature `oci`): a manifest and its blobs, pulled from a registry on 127.0.0.1.
//! - [`oci_tag`] (feature `oci`): the answers of a registry on 127.0.0.1 to the `HEAD` and `GET`
//!   of a tag's manifest, as `outdated` and `update` resolve a tag.
//! - [`http_request`] (feature `http`): raw bytes to a `serve --listen` server on 127.0.0.1.
//! - [`oauth_documents`] (feature `http`): an identity provider's discovery document, key set
//!   and an access token, as `serve --listen --oauth` reads them.
//! - [`git_answer`] (feature `git`): a Git server's answer, read through the bounded pkt-line
//!   reader of the fetcher.
//!
//! One file per area under `fuzz/harness/`, each holding its targets' bodies and the oracles
//! only they use; [`common`] holds the oracles several areas share. The targets' entry points
//! are re-exported here, so `skillfold::fuzz_entry::<target>` is the one path a target names.

#[path = "harness/common.rs"]
mod common;

#[path = "harness/skill_md.rs"]
mod skill_md;
pub use skill_md::{frontmatter, skills_ref};

#[path = "harness/bundles.rs"]
mod bundles;
pub use bundles::{bundle, bundle_path, encode_entries, file_entries};

#[path = "harness/descriptors.rs"]
mod descriptors;
pub use descriptors::{descriptor, descriptor_edit};

#[path = "harness/tools.rs"]
mod tools;
pub use tools::ToolHarness;

#[cfg(feature = "mcp")]
#[path = "harness/framing.rs"]
mod framing;
#[cfg(feature = "mcp")]
pub use framing::mcp_framing;

#[path = "harness/oci_images.rs"]
mod oci_images;
#[cfg(feature = "oci")]
pub use oci_images::oci_pull;
pub use oci_images::{oci_layer, oci_manifest_and_blobs};

#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
#[path = "harness/oci_tags.rs"]
mod oci_tags;
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
pub use oci_tags::{TagAnswer, oci_tag, oci_tag_answers};

#[cfg(feature = "signatures")]
#[path = "harness/signatures.rs"]
mod signatures;
// The seeds test checks the seed commits against the same policy.
#[cfg(all(feature = "signatures", test))]
pub(crate) use signatures::fuzz_trust_policy;
#[cfg(feature = "signatures")]
pub use signatures::{signature, signers};

#[path = "harness/image_signatures.rs"]
mod image_signatures;
pub use image_signatures::image_signature;
#[cfg(test)]
pub(crate) use image_signatures::{FUZZ_PINNED, fuzz_material, fuzz_publisher_policy};

#[cfg(feature = "http")]
#[path = "harness/tokens.rs"]
mod tokens;
#[cfg(feature = "http")]
pub use tokens::tokens;

#[cfg(feature = "http")]
#[path = "harness/http_server.rs"]
mod http_server;
#[cfg(feature = "http")]
pub use http_server::{HttpAnswer, HttpWorld, http_answers, http_request};

#[cfg(feature = "http")]
#[path = "harness/oauth.rs"]
mod oauth;
#[cfg(feature = "http")]
pub use oauth::oauth_documents;

#[cfg(feature = "git")]
#[path = "harness/git_answers.rs"]
mod git_answers;
#[cfg(feature = "git")]
pub use git_answers::git_answer;

#[cfg(test)]
#[path = "harness_seeds.rs"]
mod seeds;
