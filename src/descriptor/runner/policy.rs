//! The approval policy of the script runner: which exact helper bytes the operator approved.
//!
//! The policy is a list of `{skill, script, sha256}` entries — exactly these keys, `sha256` 64
//! lowercase hex digits — from the descriptor (`scripts.allowlist`) or from the environment
//! (`SKILLFOLD_SKILL_SCRIPT_ALLOWLIST`, a JSON array, which replaces the descriptor's list when
//! set). It fails closed as a whole: a malformed entry, or the same skill and script approved
//! twice, denies every script, since a policy that is partly wrong cannot be trusted to be
//! partly right. Nothing else grants approval — not frontmatter, not the prompt, not model
//! arguments, and there is no "allow everything" switch.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::support::escape;

/// The environment variable holding a JSON allowlist.
pub const ENV: &str = "SKILLFOLD_SKILL_SCRIPT_ALLOWLIST";

/// One approval as written.
// The example is for rustdoc only: schemars turns doc comments into schema descriptions.
#[cfg_attr(
    doc,
    doc = r#"
```
use skillfold::ApprovalSpec;
# let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
let built = skillfold::Runtime::builder()
    .local("commit-message", "1.0.0", skills.join("commit-message"), "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e")
    .runner(vec![ApprovalSpec {
        skill: "commit-message".into(),
        script: "scripts/lint.py".into(),
        sha256: "0".repeat(64), // sha256sum of the reviewed helper
    }])
    .build()
    .unwrap();
# let _ = built;
```"#
)]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalSpec {
    /// The skill the helper belongs to.
    pub skill: String,
    /// The helper's path inside the skill, e.g. `scripts/fetch.py`.
    pub script: String,
    /// SHA-256 of the approved bytes, 64 lowercase hex digits.
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub sha256: String,
}

/// The effective policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptPolicy {
    /// Exactly these `(skill, script, sha256)` triples are approved.
    Allow(Vec<ApprovalSpec>),
    /// Every script is denied, for this reason.
    DenyAll(String),
}

impl Default for ScriptPolicy {
    fn default() -> Self {
        ScriptPolicy::Allow(Vec::new())
    }
}

impl ScriptPolicy {
    /// Checks parsed entries: every hash well formed, no skill and script approved twice.
    pub fn from_specs(specs: Vec<ApprovalSpec>) -> ScriptPolicy {
        let mut seen = BTreeSet::new();
        for spec in &specs {
            let hex = spec.sha256.len() == 64
                && spec
                    .sha256
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
            if !hex {
                return ScriptPolicy::DenyAll(format!(
                    "the approval of `{}` `{}` has a malformed sha256 (64 lowercase hex digits expected)",
                    escape::text(&spec.skill),
                    escape::text(&spec.script)
                ));
            }
            if spec.skill.is_empty() || spec.script.is_empty() {
                return ScriptPolicy::DenyAll("an approval has an empty skill or script".into());
            }
            if !seen.insert((spec.skill.clone(), spec.script.clone())) {
                return ScriptPolicy::DenyAll(format!(
                    "`{}` `{}` is approved twice",
                    escape::text(&spec.skill),
                    escape::text(&spec.script)
                ));
            }
        }
        ScriptPolicy::Allow(specs)
    }

    /// Parses a JSON array of approvals (the environment form).
    pub fn from_json(text: &str) -> ScriptPolicy {
        match serde_json::from_str::<Vec<ApprovalSpec>>(text) {
            Ok(specs) => ScriptPolicy::from_specs(specs),
            Err(e) => ScriptPolicy::DenyAll(format!(
                "{ENV} is not a JSON array of {{skill, script, sha256}}: {}",
                escape::text(&e.to_string())
            )),
        }
    }

    /// The policy in force: the environment's when `SKILLFOLD_SKILL_SCRIPT_ALLOWLIST` is set,
    /// else the descriptor's.
    pub fn effective(descriptor: &ScriptPolicy) -> ScriptPolicy {
        match std::env::var(ENV) {
            Ok(text) => ScriptPolicy::from_json(&text),
            Err(std::env::VarError::NotUnicode(_)) => {
                ScriptPolicy::DenyAll(format!("{ENV} is not valid UTF-8"))
            }
            Err(std::env::VarError::NotPresent) => descriptor.clone(),
        }
    }

    /// Whether `sha256` of `skill`'s `script` is approved.
    pub fn approves(&self, skill: &str, script: &str, sha256: &str) -> bool {
        match self {
            ScriptPolicy::Allow(specs) => specs
                .iter()
                .any(|s| s.skill == skill && s.script == script && s.sha256 == sha256),
            ScriptPolicy::DenyAll(_) => false,
        }
    }

    /// The scripts approved for `skill` (for refusals).
    pub fn approved_for(&self, skill: &str) -> Vec<String> {
        match self {
            ScriptPolicy::Allow(specs) => specs
                .iter()
                .filter(|s| s.skill == skill)
                .map(|s| s.script.clone())
                .collect(),
            ScriptPolicy::DenyAll(_) => Vec::new(),
        }
    }

    /// The entries, if the policy is usable.
    pub fn entries(&self) -> &[ApprovalSpec] {
        match self {
            ScriptPolicy::Allow(specs) => specs,
            ScriptPolicy::DenyAll(_) => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "b1d8c946d509b363d23994be959c67faa485f55b336be7543eb6097b2a7e08f9";

    #[test]
    fn a_good_list_approves_exactly_its_entries() {
        let p = ScriptPolicy::from_json(&format!(
            r#"[{{"skill":"a","script":"scripts/x.py","sha256":"{H}"}}]"#
        ));
        assert!(p.approves("a", "scripts/x.py", H));
        assert!(!p.approves("b", "scripts/x.py", H));
        assert!(!p.approves("a", "scripts/y.py", H));
        assert!(!p.approves("a", "scripts/x.py", &H.replace('b', "c")));
        assert_eq!(p.approved_for("a"), ["scripts/x.py"]);
    }

    #[test]
    fn malformed_or_duplicate_entries_deny_everything() {
        let good = format!(r#"{{"skill":"a","script":"scripts/x.py","sha256":"{H}"}}"#);
        for bad in [
            format!(r#"[{good}, {{"skill":"b","script":"scripts/y.py","sha256":"XYZ"}}]"#),
            format!(
                r#"[{good}, {{"skill":"b","script":"scripts/y.py","sha256":"{}"}}]"#,
                H.to_uppercase()
            ),
            format!(r#"[{good}, {{"skill":"b","script":"scripts/y.py"}}]"#),
            format!(
                r#"[{good}, {{"skill":"b","script":"scripts/y.py","sha256":"{H}","allow":true}}]"#
            ),
            format!(r#"[{good}, {good}]"#),
            "{}".to_owned(),
            "not json".to_owned(),
        ] {
            let p = ScriptPolicy::from_json(&bad);
            assert!(matches!(p, ScriptPolicy::DenyAll(_)), "{bad}");
            assert!(!p.approves("a", "scripts/x.py", H), "{bad}");
        }
    }

    // An approval naming no skill, or no script, denies everything on its own.
    #[test]
    fn an_empty_skill_or_script_alone_denies_everything() {
        for (skill, script) in [("", "scripts/x.py"), ("a", "")] {
            let p = ScriptPolicy::from_json(&format!(
                r#"[{{"skill":"{skill}","script":"{script}","sha256":"{H}"}}]"#
            ));
            assert!(
                matches!(p, ScriptPolicy::DenyAll(_)),
                "{skill:?} {script:?}"
            );
        }
    }
}
