//! The checker ([`check`]): every static rule of the descriptor (see [the module](super)),
//! applied entry by entry and then across the file, every problem listed. The grammars it applies
//! are its siblings ([`super::ImageReference`], [`super::check_branch`]); its result is a
//! [`Plan`].

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use super::across::{Entries, EntryFacts};
use super::{
    DescriptorProblem, GitSource, ImageReference, LocalSource, OciSource, Plan, ReferenceError,
    Source, check_branch,
};
use crate::descriptor::code::DescriptorCode;
use crate::descriptor::content::ContentSpec;
use crate::descriptor::redact::RedactedUrl;
use crate::descriptor::runner::{Blocklist, RunnerConfig, ScriptPolicy};
use crate::descriptor::{
    Descriptor, GitSpec, LimitsSpec, LocalSpec, OciSpec, PinSpec, PublisherSpec, SigstoreSpec,
    SkillSource, VerifySpec,
};
use crate::format::bundle_path::BundlePath;
use crate::format::limits::{self, Limits};
use crate::format::pin::{CommitId, Pin};
use crate::format::root_path::RootPath;
use crate::format::skill_name::SkillName;
use crate::format::version::VersionLabel;
use crate::support::escape;
use crate::trust::commit::policy::{self as commit_policy, TrustPolicy};
use crate::trust::image::policy::{PublisherPolicy, SigstoreIdentity, SigstorePolicy};
#[cfg(feature = "signatures")]
use crate::trust::keys::{allowed_signers::AllowedSigners, key_file::SignersError};
use crate::trust::{keys::public_key::PublicKey, x509::trusted_root::TrustedRoot};

/// Checks a descriptor; relative directories are resolved against `base`.
pub fn check(descriptor: &Descriptor, base: &Path) -> Result<Plan, Vec<DescriptorProblem>> {
    check_in_build(descriptor, base, commit_policy::SUPPORTED)
}

/// [`check`] as a build that verifies commit signatures (`signatures`) or not would: without
/// them every `verify` is refused (`signatures_not_built`), its key files unread. `check` passes
/// what this build is; the tests of the default build pass `false` to test the refusal.
pub(crate) fn check_in_build(
    descriptor: &Descriptor,
    base: &Path,
    signatures: bool,
) -> Result<Plan, Vec<DescriptorProblem>> {
    let mut c = PlanChecker {
        base,
        signatures,
        problems: Vec::new(),
        plan: Plan::default(),
        entries: Entries::default(),
        current: EntryFacts::default(),
    };
    for (i, entry) in descriptor.skills.iter().enumerate() {
        let (index, facts) = c.entry(entry, &format!("skills[{i}]"));
        c.entries.defaults.push(facts);
        if let Some(index) = index {
            c.plan.defaults.push(index);
        }
    }
    for (agent, spec) in &descriptor.agents {
        if !valid_agent_name(agent) {
            c.problem(
                DescriptorCode::InvalidAgentName,
                format!("agents.{agent}"),
                "an agent name is 1-64 characters of `A-Z a-z 0-9 . _ -`, starting with a letter or digit",
            );
        }
        let mut extras = Vec::new();
        let mut facts = Vec::new();
        for (i, entry) in spec.skills.iter().enumerate() {
            let (index, fact) = c.entry(entry, &format!("agents.{agent}.skills[{i}]"));
            facts.push(fact);
            extras.extend(index);
        }
        c.plan.agents.insert(agent.clone(), extras);
        c.entries.agents.insert(agent.clone(), facts);
    }
    if let Some(scripts) = &descriptor.scripts {
        c.scripts(scripts);
    }
    if let Some(guides) = &descriptor.guides {
        c.plan.guides = c.directory(guides, "guides".to_owned());
    }
    match super::selection::bound(descriptor.selection.as_ref()) {
        Ok(max) => c.plan.max_skills = max,
        Err(problem) => {
            // The bound the operator meant is unknown: only the ceiling is counted against.
            c.plan.max_skills = super::MAX_SKILLS_CEILING;
            c.problems.push(problem);
        }
    }
    // Across entries, on the facts of every entry, valid or not: one pass lists every problem.
    let across = super::across::problems(&c.entries);
    let selections = super::selection::problems(&c.entries, c.plan.max_skills);
    c.problems.extend(across.into_iter().chain(selections));
    c.problems.extend(super::scans::problems(descriptor, base));
    if c.problems.is_empty() {
        Ok(c.plan)
    } else {
        Err(c.problems)
    }
}

/// Whether `name` may name an agent: 1-64 characters of `A-Z a-z 0-9 . _ -`, starting with a
/// letter or digit.
pub fn valid_agent_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

struct PlanChecker<'a> {
    base: &'a Path,
    /// Whether commit signatures can be verified ([`check_in_build`]).
    signatures: bool,
    problems: Vec<DescriptorProblem>,
    plan: Plan,
    /// What the checks across entries need of every entry, valid or not.
    entries: Entries,
    /// The facts of the entry being checked.
    current: EntryFacts,
}

impl PlanChecker<'_> {
    fn problem(
        &mut self,
        code: DescriptorCode,
        location: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.problems
            .push(DescriptorProblem::new(code, location, message));
    }

    /// Checks one entry: its index in the plan when it is valid, and the index of its facts
    /// (recorded either way).
    fn entry(&mut self, entry: &SkillSource, location: &str) -> (Option<usize>, usize) {
        let at = match entry {
            SkillSource::Git(_) => format!("{location}.git"),
            SkillSource::Local(_) => format!("{location}.local"),
            SkillSource::Oci(_) => format!("{location}.oci"),
        };
        self.current = EntryFacts {
            location: at.clone(),
            ..EntryFacts::default()
        };
        let source = match entry {
            SkillSource::Git(spec) => self.git(spec, &at).map(Source::Git),
            SkillSource::Local(spec) => self.local(spec, &at).map(Source::Local),
            SkillSource::Oci(spec) => self.oci(spec, &at).map(Source::Oci),
        };
        self.entries.entries.push(std::mem::take(&mut self.current));
        let facts = self.entries.entries.len() - 1;
        let Some(source) = source else {
            return (None, facts);
        };
        self.plan.sources.push(source);
        (Some(self.plan.sources.len() - 1), facts)
    }

    pub(super) fn directory(&mut self, dir: &Path, location: String) -> Option<PathBuf> {
        if dir.as_os_str().is_empty() {
            self.problem(
                DescriptorCode::InvalidDirectory,
                location,
                "the directory is empty",
            );
            return None;
        }
        let joined = self.base.join(dir);
        // Lexically normalised, so `a/../b` and `b` compare equal; no file system access.
        let mut out = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other),
            }
        }
        Some(out)
    }

    /// The `directory` of a corpus `prepare` manages: as [`Self::directory`], and its last
    /// component must name a folder of its own (`/srv/x/..` is `/srv`, `.` the descriptor's
    /// folder, whose other entries `prepare` would take for its own).
    fn corpus_directory(&mut self, dir: &Path, location: String) -> Option<PathBuf> {
        let text = dir.as_os_str().as_encoded_bytes();
        let last = text
            .rsplit(|b| *b == b'/')
            .find(|segment| !segment.is_empty());
        if matches!(last, Some(b"." | b"..")) {
            self.problem(
                DescriptorCode::InvalidDirectory,
                location,
                format!(
                    "`{}` ends in `.` or `..`: a corpus is a folder of its own, named last",
                    escape::path(dir)
                ),
            );
            return None;
        }
        self.directory(dir, location)
    }

    /// A plain relative path (no scheme, not `host:path`) names a repository relative to the
    /// descriptor's folder, like every other path in the file.
    fn source_url(&self, source: &str) -> String {
        let scp_like = source
            .split_once(':')
            .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'));
        if source.contains("://") || scp_like || Path::new(source).is_absolute() {
            return source.to_owned();
        }
        self.base.join(source).display().to_string()
    }

    fn git(&mut self, spec: &GitSpec, location: &str) -> Option<GitSource> {
        let before = self.problems.len();
        let shown = RedactedUrl::new(&spec.source);
        if spec.source.trim().is_empty() {
            self.problem(
                DescriptorCode::InvalidSource,
                format!("{location}.source"),
                "the source URL is empty",
            );
        } else if shown.had_credentials() {
            self.problem(
                DescriptorCode::CredentialsInUrl,
                format!("{location}.source"),
                format!(
                    "`{}` carries credentials; remove them and provide them through the \
                     environment or a credential helper",
                    escape::text(shown.as_str())
                ),
            );
        }
        let revision = CommitId::parse(&spec.revision)
            .map_err(|e| {
                self.problem(
                    DescriptorCode::RevisionNotCommit,
                    format!("{location}.revision"),
                    e.to_string(),
                )
            })
            .ok();
        let directory = self.corpus_directory(&spec.directory, format!("{location}.directory"));
        self.current.corpus.clone_from(&directory);
        let root = match spec.root.as_deref().map(|r| r.trim_end_matches('/')) {
            None | Some("") => None,
            Some(root) => match RootPath::parse(root) {
                Ok(p) => Some(p),
                Err(refusal) => {
                    self.problem(
                        DescriptorCode::InvalidRoot,
                        format!("{location}.root"),
                        format!("`{}`: {}", escape::text(root), refusal.reason),
                    );
                    None
                }
            },
        };
        let approved = self.approved(&spec.approved, location, "a Git source");
        let limits = self.limits(spec.limits.as_ref(), spec.content.as_ref(), location);
        let trust = self.trust(spec.verify.as_ref(), location);
        if let Some(track) = &spec.track
            && let Err(why) = check_branch(track)
        {
            self.problem(
                DescriptorCode::InvalidTrack,
                format!("{location}.track"),
                format!("`{}` is not a branch name: {why}", escape::text(track)),
            );
        }
        if self.problems.len() > before {
            return None;
        }
        Some(GitSource {
            url: self.source_url(&spec.source),
            shown,
            revision: revision?,
            directory: directory?,
            root,
            approved,
            limits: limits?,
            track: spec.track.clone(),
            links: spec.links.unwrap_or_default(),
            trust: trust?,
            location: location.to_owned(),
        })
    }

    /// The trust policy a Git source's `verify` names, its key files read and parsed now; in a
    /// build without signature support, a refusal (the source's commit could not be checked).
    fn trust(
        &mut self,
        spec: Option<&VerifySpec>,
        location: &str,
    ) -> Option<Option<std::sync::Arc<TrustPolicy>>> {
        let Some(spec) = spec else {
            return Some(None);
        };
        let at = format!("{location}.verify");
        #[cfg(feature = "signatures")]
        if self.signatures {
            return self.read_trust(spec, at);
        }
        // Without the feature there is nothing to read the keys with, whatever `signatures` says.
        let _ = (spec, self.signatures);
        self.problem(
            DescriptorCode::SignaturesNotBuilt,
            at,
            commit_policy::unsupported("`verify`"),
        );
        None
    }

    /// The trust policy of `verify`, its key files read and parsed now.
    #[cfg(feature = "signatures")]
    fn read_trust(
        &mut self,
        spec: &VerifySpec,
        at: String,
    ) -> Option<Option<std::sync::Arc<TrustPolicy>>> {
        if spec.allowed_signers.is_none() && spec.openpgp_keys.is_none() {
            self.problem(
                DescriptorCode::InvalidTrustPolicy,
                at,
                "`verify` needs `allowed_signers`, `openpgp_keys` or both",
            );
            return None;
        }
        let ssh = self.key_file(
            spec.allowed_signers.as_deref(),
            format!("{at}.allowed_signers"),
            AllowedSigners::read,
        )?;
        let openpgp = self.key_file(
            spec.openpgp_keys.as_deref(),
            format!("{at}.openpgp_keys"),
            commit_policy::OpenPgpKeys::read,
        )?;
        Some(Some(std::sync::Arc::new(TrustPolicy { ssh, openpgp })))
    }

    /// Reads the key file `path` (when given) with `read`; `None` when it is refused.
    #[cfg(feature = "signatures")]
    fn key_file<T>(
        &mut self,
        path: Option<&Path>,
        location: String,
        read: impl Fn(&Path) -> Result<T, SignersError>,
    ) -> Option<Option<T>> {
        let Some(path) = path else {
            return Some(None);
        };
        let path = self.directory(path, location.clone())?;
        match read(&path) {
            Ok(keys) => Some(Some(keys)),
            Err(e) => {
                self.problem(DescriptorCode::InvalidTrustPolicy, location, e.to_string());
                None
            }
        }
    }

    fn oci(&mut self, spec: &OciSpec, location: &str) -> Option<OciSource> {
        let before = self.problems.len();
        let reference = ImageReference::parse(&spec.reference)
            .map_err(|e| {
                let (code, why) = match e {
                    ReferenceError::Invalid(why) => (DescriptorCode::InvalidReference, why),
                    ReferenceError::NotPinned(why) => (DescriptorCode::ReferenceNotPinned, why),
                };
                self.problem(
                    code,
                    format!("{location}.reference"),
                    format!("`{}`: {why}", escape::text(&spec.reference)),
                );
            })
            .ok();
        let directory = self.corpus_directory(&spec.directory, format!("{location}.directory"));
        self.current.corpus.clone_from(&directory);
        let approved = self.approved(&spec.approved, location, "an OCI source");
        let limits = self.limits(spec.limits.as_ref(), spec.content.as_ref(), location);
        let publisher = self.publisher(spec.verify.as_ref(), location);
        if let Some(track) = &spec.track
            && let Err(why) = super::check_tag(track)
        {
            self.problem(
                DescriptorCode::InvalidTrack,
                format!("{location}.track"),
                format!("`{}` is not an OCI tag: {why}", escape::text(track)),
            );
        }
        if self.problems.len() > before {
            return None;
        }
        Some(OciSource {
            reference: reference?,
            plain_http: spec.plain_http,
            directory: directory?,
            approved,
            limits: limits?,
            track: spec.track.clone(),
            publisher: publisher?,
            location: location.to_owned(),
        })
    }

    /// The publisher policy an OCI source's `verify` names, its key and trusted root read and
    /// parsed now.
    fn publisher(
        &mut self,
        spec: Option<&PublisherSpec>,
        location: &str,
    ) -> Option<Option<std::sync::Arc<PublisherPolicy>>> {
        let Some(spec) = spec else {
            return Some(None);
        };
        let at = format!("{location}.verify");
        if spec.cosign_key.is_none() && spec.sigstore.is_none() {
            self.problem(
                DescriptorCode::InvalidTrustPolicy,
                at,
                "`verify` needs `cosign_key`, `sigstore` or both",
            );
            return None;
        }
        let keys = match &spec.cosign_key {
            None => Some(Vec::new()),
            Some(path) => self
                .policy_file(path, format!("{at}.cosign_key"), PublicKey::read)
                .map(|key| vec![key]),
        };
        let sigstore = match &spec.sigstore {
            None => Some(None),
            Some(sigstore) => self.sigstore(sigstore, &format!("{at}.sigstore")).map(Some),
        };
        Some(Some(std::sync::Arc::new(PublisherPolicy {
            keys: keys?,
            sigstore: sigstore?,
        })))
    }

    /// The keyless part of a publisher policy: the trusted root read, the identities checked.
    fn sigstore(&mut self, spec: &SigstoreSpec, at: &str) -> Option<SigstorePolicy> {
        let root = self.policy_file(
            &spec.trusted_root,
            format!("{at}.trusted_root"),
            TrustedRoot::read,
        );
        if spec.identities.is_empty() {
            self.problem(
                DescriptorCode::InvalidTrustPolicy,
                format!("{at}.identities"),
                "list at least one identity (`issuer` and `subject`)",
            );
        }
        let mut identities = Vec::new();
        for (i, identity) in spec.identities.iter().enumerate() {
            let here = format!("{at}.identities[{i}]");
            let issuer = identity.issuer.as_str();
            if !issuer.starts_with("https://") || issuer.len() <= "https://".len() {
                self.problem(
                    DescriptorCode::InvalidTrustPolicy,
                    format!("{here}.issuer"),
                    format!(
                        "`{}` is not an `https://` OIDC issuer URL",
                        escape::text(issuer)
                    ),
                );
            }
            if identity.subject.is_empty() || identity.subject.chars().any(char::is_control) {
                self.problem(
                    DescriptorCode::InvalidTrustPolicy,
                    format!("{here}.subject"),
                    "the subject is empty or holds a control character",
                );
            }
            let identity = SigstoreIdentity {
                issuer: identity.issuer.clone(),
                subject: identity.subject.clone(),
            };
            if identities.contains(&identity) {
                self.problem(
                    DescriptorCode::InvalidTrustPolicy,
                    here,
                    "this identity is listed twice",
                );
            }
            identities.push(identity);
        }
        Some(SigstorePolicy {
            root: root?,
            identities,
        })
    }

    /// Reads the policy file `path` (relative to the descriptor's folder) with `read`; `None`,
    /// and a problem naming the file and the rule, when it is refused.
    fn policy_file<T, E: std::fmt::Display>(
        &mut self,
        path: &Path,
        location: String,
        read: impl Fn(&Path) -> Result<T, E>,
    ) -> Option<T> {
        let path = self.directory(path, location.clone())?;
        read(&path)
            .map_err(|e| self.problem(DescriptorCode::InvalidTrustPolicy, location, e.to_string()))
            .ok()
    }

    /// The approved pins of a corpus source, each checked, names unique within the source.
    fn approved(&mut self, specs: &[PinSpec], location: &str, kind: &str) -> Vec<Pin> {
        if specs.is_empty() {
            self.problem(
                DescriptorCode::NoApprovedBundles,
                format!("{location}.approved"),
                format!("{kind} must approve at least one bundle"),
            );
        }
        let mut approved = Vec::new();
        let mut names = BTreeSet::new();
        for (i, pin) in specs.iter().enumerate() {
            let at = format!("{location}.approved[{i}]");
            if let Some(pin) = self.pin(&pin.name, &pin.version, &pin.hash, &at) {
                self.current.pin(&pin, at.clone());
                if !names.insert(pin.name.clone()) {
                    self.problem(
                        DescriptorCode::DuplicateName,
                        format!("{at}.name"),
                        format!("`{}` is approved twice in this source", pin.name),
                    );
                }
                approved.push(pin);
            }
        }
        approved
    }

    fn local(&mut self, spec: &LocalSpec, location: &str) -> Option<LocalSource> {
        let pin = self.pin(&spec.name, &spec.version, &spec.hash, location);
        if let Some(pin) = &pin {
            self.current.pin(pin, location.to_owned());
        }
        let directory = self.directory(&spec.directory, format!("{location}.directory"));
        let limits = self.limits(spec.limits.as_ref(), spec.content.as_ref(), location);
        Some(LocalSource {
            pin: pin?,
            directory: directory?,
            limits: limits?,
            location: location.to_owned(),
        })
    }

    /// The profile a source names (`chamvi` when it names none), carrying its content policy
    /// (the defaults when it names none).
    fn limits(
        &mut self,
        spec: Option<&LimitsSpec>,
        content: Option<&ContentSpec>,
        location: &str,
    ) -> Option<Limits> {
        let content = match content.map(ContentSpec::resolve).transpose() {
            Ok(policy) => Some(policy.unwrap_or_default()),
            Err(e) => {
                self.problem(
                    DescriptorCode::InvalidContentPolicy,
                    format!("{location}.content"),
                    e.to_string(),
                );
                None
            }
        };
        let limits = match spec {
            None => Some(limits::CHAMVI),
            Some(spec) => spec
                .resolve()
                .map_err(|e| self.problem(e.code(), format!("{location}.limits"), e.to_string()))
                .ok(),
        };
        Some(limits?.with_content(content?))
    }

    fn pin(&mut self, name: &str, version: &str, hash: &str, location: &str) -> Option<Pin> {
        let name = SkillName::parse(name)
            .map_err(|e| {
                self.problem(
                    DescriptorCode::InvalidName,
                    format!("{location}.name"),
                    e.to_string(),
                )
            })
            .ok();
        let version = if version == crate::descriptor::VERSION_PLACEHOLDER {
            // `pin`'s placeholder is no label a reviewer gave: its own refusal, naming the option
            // that fills it.
            self.problem(
                DescriptorCode::VersionPlaceholder,
                format!("{location}.version"),
                format!(
                    "the version is still `pin`'s placeholder `{}`: write the release label you \
                     reviewed (or give `pin --write` a `--version LABEL`)",
                    crate::descriptor::VERSION_PLACEHOLDER
                ),
            );
            None
        } else {
            VersionLabel::parse(version)
                .map_err(|e| {
                    self.problem(
                        DescriptorCode::InvalidVersion,
                        format!("{location}.version"),
                        e.to_string(),
                    )
                })
                .ok()
        };
        let hash = hash
            .parse()
            .map_err(|e: crate::format::digest::DigestParseError| {
                self.problem(
                    DescriptorCode::InvalidHash,
                    format!("{location}.hash"),
                    e.to_string(),
                )
            })
            .ok();
        Some(Pin {
            name: name?,
            version: version?,
            hash: hash?,
        })
    }

    fn scripts(&mut self, spec: &crate::descriptor::ScriptsSpec) {
        let policy = ScriptPolicy::from_specs(spec.allowlist.clone());
        if let ScriptPolicy::DenyAll(reason) = &policy {
            self.problem(
                DescriptorCode::InvalidScriptAllowlist,
                "scripts.allowlist",
                format!("{reason}; every script would be denied"),
            );
        }
        for (i, entry) in spec.allowlist.iter().enumerate() {
            if SkillName::parse(&entry.skill).is_err() {
                self.problem(
                    DescriptorCode::InvalidName,
                    format!("scripts.allowlist[{i}].skill"),
                    format!("`{}` is not a skill name", escape::text(&entry.skill)),
                );
            }
            let path_ok = BundlePath::parse(&entry.script).is_ok()
                && entry.script.starts_with("scripts/")
                && entry.script.ends_with(".py");
            if !path_ok {
                self.problem(
                    DescriptorCode::InvalidScriptPath,
                    format!("scripts.allowlist[{i}].script"),
                    format!(
                        "`{}` is not a `scripts/*.py` path",
                        escape::text(&entry.script)
                    ),
                );
            }
        }
        let mut runner = RunnerConfig::with_policy(policy);
        if let Some(names) = &spec.blocklist {
            runner.blocklist = Blocklist::new(names.iter().map(String::as_str));
        }
        if let Some(python) = &spec.python {
            // A bare name is looked up on PATH; a path is relative to the descriptor.
            runner.python = if python.components().count() > 1 {
                self.base.join(python)
            } else {
                python.clone()
            };
        }
        match spec.timeout_seconds {
            Some(secs @ 1..=30) => runner.timeout = std::time::Duration::from_secs(u64::from(secs)),
            Some(other) => self.problem(
                DescriptorCode::InvalidTimeout,
                "scripts.timeout_seconds",
                format!("{other} is not between 1 and 30"),
            ),
            None => {}
        }
        self.plan.runner = runner;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::parse;

    const H: &str = "8a531fcd108297bda8aa470d42f427779daad537bb2a31addef29087b5ab9f9e";
    const C: &str = "0123456789abcdef0123456789abcdef01234567";

    fn codes(yaml: &str) -> Vec<&'static str> {
        let d = parse(yaml).expect("parses");
        match check(&d, Path::new("/base")) {
            Ok(_) => vec![],
            Err(p) => p.into_iter().map(|p| p.code.as_str()).collect(),
        }
    }

    fn git(name: &str, dir: &str) -> String {
        format!(
            "  - git:\n      source: https://example.com/s.git\n      revision: {C}\n      directory: {dir}\n      approved:\n        - {{ name: {name}, version: 1.0.0, hash: {H} }}\n"
        )
    }

    #[test]
    fn a_root_may_name_hidden_folders_and_nothing_that_leaves_the_repository() {
        let with_root = |root: &str| {
            let quoted = serde_json::to_string(root).expect("json");
            format!(
                "skills:\n{}",
                git("a", "/d").replace(
                    "      approved:",
                    &format!("      root: {quoted}\n      approved:")
                )
            )
        };
        for ok in [
            "skills/.curated",
            ".agents/skills",
            "skills/.system/",
            "skills",
        ] {
            let plan = check(&parse(&with_root(ok)).expect("parses"), Path::new("/base"))
                .unwrap_or_else(|p| panic!("{ok}: {p:?}"));
            let Source::Git(git) = &plan.sources[0] else {
                panic!("a git source");
            };
            let root = git.root.as_ref().map(RootPath::as_str);
            assert_eq!(root, Some(ok.trim_end_matches('/')));
        }
        for refused in [
            "../up",
            "skills/..",
            "a//b",
            "./a",
            "/abs",
            "a\\b",
            "a\u{1}b",
        ] {
            assert_eq!(codes(&with_root(refused)), ["invalid_root"], "{refused:?}");
        }
    }

    #[test]
    fn a_build_without_signatures_refuses_verify_and_reads_no_key() {
        let verified = format!(
            "skills:\n{}      verify: {{ allowed_signers: /nowhere/allowed_signers }}\n",
            git("a", "/d")
        );
        let descriptor = parse(&verified).expect("parses");
        let problems = check_in_build(&descriptor, Path::new("/base"), false).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        let p = &problems[0];
        assert_eq!(
            (p.code, p.location.as_str()),
            (DescriptorCode::SignaturesNotBuilt, "skills[0].git.verify")
        );
        assert!(p.message.contains("lacks") && p.message.contains("`signatures`"));
        // A configuration error (exit 2), and the line `check` prints names the descriptor.
        assert_eq!(
            p.code.exit(),
            crate::support::error_code::ExitClass::Invalid
        );
        let refused = crate::ops::check::CheckError::Problems {
            path: "/base/skillfold.yaml".into(),
            problems: problems.clone(),
        };
        let lines = refused.lines();
        assert!(
            lines[0].starts_with("/base/skillfold.yaml: skills[0].git.verify: ")
                && lines[0].ends_with("[signatures_not_built]"),
            "{lines:?}"
        );
        // A build with the feature reads the key file instead (here: there is none); one
        // without it refuses whatever it is asked.
        let with = check_in_build(&descriptor, Path::new("/base"), true).unwrap_err();
        let codes: Vec<_> = with.iter().map(|p| p.code).collect();
        let read = if cfg!(feature = "signatures") {
            DescriptorCode::InvalidTrustPolicy
        } else {
            DescriptorCode::SignaturesNotBuilt
        };
        assert_eq!(codes, [read], "{with:?}");
        // A source without `verify` needs no signature support.
        let unsigned = parse(&format!("skills:\n{}", git("a", "/d"))).expect("parses");
        assert!(check_in_build(&unsigned, Path::new("/base"), false).is_ok());
    }

    #[test]
    fn this_build_s_check_is_the_one_its_features_say() {
        let verified = format!(
            "skills:\n{}      verify: {{ allowed_signers: /nowhere/allowed_signers }}\n",
            git("a", "/d")
        );
        let expected = if cfg!(feature = "signatures") {
            "invalid_trust_policy"
        } else {
            "signatures_not_built"
        };
        assert_eq!(codes(&verified), [expected]);
    }

    #[test]
    fn a_good_descriptor_checks() {
        let yaml = format!(
            "skills:\n{}  - local: {{ name: b, version: '2', directory: rel/b, hash: {H} }}\nagents:\n  sec:\n    skills:\n{}",
            git("a", "/srv/one"),
            git("c", "/srv/two")
                .replace("  - ", "      - ")
                .replace("\n      ", "\n          ")
        );
        let d = parse(&yaml).expect("parse");
        let plan = check(&d, Path::new("/base")).expect("valid");
        assert_eq!(plan.sources.len(), 3);
        let Source::Git(g) = &plan.sources[0] else {
            panic!()
        };
        assert_eq!(g.url, "https://example.com/s.git");
        assert_eq!(plan.sources_for(Some("sec")).len(), 3);
        assert_eq!(plan.sources_for(None).len(), 2);
        let Source::Local(l) = &plan.sources[1] else {
            panic!()
        };
        assert_eq!(l.directory, Path::new("/base/rel/b"));
    }

    #[test]
    fn relative_repository_paths_are_resolved_against_the_descriptor() {
        let yaml = format!(
            "skills:\n{}",
            git("a", "/d").replace("https://example.com/s.git", "../repos/s.git")
        );
        let plan = check(&parse(&yaml).unwrap(), Path::new("/base/conf")).unwrap();
        let Source::Git(g) = &plan.sources[0] else {
            panic!()
        };
        assert_eq!(g.url, "/base/conf/../repos/s.git");
        for kept in ["git@host:org/s.git", "/abs/s.git", "ssh://h/s.git"] {
            let yaml = format!(
                "skills:\n{}",
                git("a", "/d").replace("https://example.com/s.git", kept)
            );
            let plan = check(&parse(&yaml).unwrap(), Path::new("/base")).unwrap();
            let Source::Git(g) = &plan.sources[0] else {
                panic!()
            };
            assert_eq!(g.url, kept);
        }
    }

    #[test]
    fn unknown_keys_are_errors() {
        assert!(parse("skills: []\nextra: 1\n").is_err());
        assert!(
            parse(&format!(
                "skills:\n  - local: {{ name: a, version: '1', directory: d, hash: {H}, x: 1 }}\n"
            ))
            .is_err()
        );
    }

    #[test]
    fn each_static_rule_refuses() {
        let cases: Vec<(String, &str)> = vec![
            (
                format!("skills:\n{}", git("a", "/d").replace(C, "main")),
                "revision_not_commit",
            ),
            (
                format!("skills:\n{}", git("a", "/d").replace(C, &C[..12])),
                "revision_not_commit",
            ),
            (
                format!("skills:\n{}", git("a", "/d").replace(H, "abc")),
                "invalid_hash",
            ),
            (
                format!("skills:\n{}", git("a", "/d").replace("1.0.0", "latest")),
                "invalid_version",
            ),
            (
                format!("skills:\n{}", git("a", "/d").replace("1.0.0", "^1.0")),
                "invalid_version",
            ),
            (format!("skills:\n{}", git("Bad", "/d")), "invalid_name"),
            (
                format!(
                    "skills:\n{}",
                    git("a", "/d").replace("https://", "https://u:p@")
                ),
                "credentials_in_url",
            ),
            (
                format!("skills:\n{}{}", git("a", "/d"), git("b", "/d")),
                "shared_directory",
            ),
            (
                format!("skills:\n{}{}", git("a", "/d"), git("b", "/d/sub")),
                "shared_directory",
            ),
            (
                format!(
                    "skills:\n{}{}",
                    git("a", "/d"),
                    git("a", "/e").replace(H, &H.replace('8', "9"))
                ),
                "conflicting_pins",
            ),
            (
                "skills:\n  - git:\n      source: x\n      revision: ".to_owned()
                    + C
                    + "\n      directory: /d\n      approved: []\n",
                "no_approved_bundles",
            ),
            (
                format!(
                    "skills:\n{}",
                    git("a", "/d").replace("      approved:", "      root: ../up\n      approved:")
                ),
                "invalid_root",
            ),
            (
                "agents:\n  'bad name':\n    skills: []\n".to_owned(),
                "invalid_agent_name",
            ),
        ];
        for (yaml, want) in cases {
            let got = codes(&yaml);
            assert!(got.contains(&want), "{yaml}\nwant {want}, got {got:?}");
        }
    }

    #[test]
    fn seventeen_names_for_one_agent_are_refused_sixteen_accepted() {
        let locals = |n: usize| -> String {
            (0..n)
                .map(|i| format!("      - local: {{ name: s{i}, version: '1', directory: /l/{i}, hash: {H} }}\n"))
                .collect()
        };
        let sixteen = format!(
            "skills:\n{}agents:\n  a:\n    skills:\n{}",
            locals(15).replace("      - ", "  - "),
            locals(1).replace("s0", "extra")
        );
        assert_eq!(codes(&sixteen), Vec::<&str>::new());
        let seventeen = format!(
            "skills:\n{}agents:\n  a:\n    skills:\n{}",
            locals(16).replace("      - ", "  - "),
            locals(1).replace("s0", "extra")
        );
        assert_eq!(codes(&seventeen), ["too_many_skills"]);
    }

    #[test]
    fn problems_show_hostile_values_escaped_on_one_line() {
        let hostile = "x\nok: forged\u{1b}[8m\\";
        let q = serde_json::to_string(hostile).expect("json");
        let yaml = format!(
            "skills:\n  - local: {{ name: {q}, version: {q}, directory: /l, hash: {q} }}\n{}\
             scripts:\n  allowlist:\n    - {{ skill: {q}, script: {q}, sha256: {q} }}\n\
             agents:\n  {q}:\n    skills: []\n",
            git("a", "/d").replace(C, &q).replace(
                "      approved:",
                &format!("      root: {q}\n      approved:")
            )
        );
        let problems = check(&parse(&yaml).expect("parses"), Path::new("/base")).unwrap_err();
        assert!(problems.len() >= 8, "{problems:?}");
        for p in &problems {
            let shown = p.to_string();
            assert!(!shown.contains(['\n', '\u{1b}']), "{shown}");
        }
        let all: Vec<String> = problems.iter().map(ToString::to_string).collect();
        let escaped = "x\\nok: forged\\u{1b}[8m\\\\";
        for code in [
            "invalid_name",
            "invalid_version",
            "invalid_hash",
            "revision_not_commit",
            "invalid_root",
            "invalid_agent_name",
            "invalid_script_path",
            "invalid_script_allowlist",
        ] {
            assert!(
                all.iter()
                    .any(|line| line.ends_with(&format!("[{code}]")) && line.contains(escaped)),
                "{code}: {all:#?}"
            );
        }
    }

    #[test]
    fn every_problem_is_listed() {
        let yaml = format!(
            "skills:\n{}",
            git("Bad", "/d").replace(C, "main").replace(H, "x")
        );
        let got = codes(&yaml);
        assert_eq!(got, ["revision_not_commit", "invalid_name", "invalid_hash"]);
    }
}
