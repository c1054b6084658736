//! What `outdated` and `update` share: both look at another commit or image than a source's pin
//! (the head of its tracked branch or tag, or `update --to`) and report, per source, the same
//! things under the same names. [`SourceId`] is the part of each source's entry that names the
//! source (`location`, `kind`, `url`, first in both reports); [`Taken`] is what the other commit
//! or image holds of an approved bundle; [`Images`] the tags resolved and images pulled so far,
//! shared by the sources of one repository. The rest of the two reports differ because they
//! report different things: `outdated` what a head offers (`tracking`, `pinned`, `head`, each
//! bundle's pinned `version` and `hash`, `available`), `update` what a re-pin would write
//! (`target`, `from`, `to`, `signer`, each bundle's `old_`/`new_` pair and its file changes);
//! those field names are the `--json` contract of each command (docs/cli.md).

use serde::Serialize;

use crate::descriptor::kind::SourceKind;
use crate::descriptor::plan::{GitSource, OciSource};
use crate::format::bundle::Bundle;
use crate::source::error::SourceError;
use crate::source::git::commit::TakeError;
use crate::source::oci::candidate::{self as image, ImageCandidate, ImageTakeError, PulledImage};
use crate::source::oci::publisher;
use crate::trust::image::material::SignatureMaterial;
use crate::trust::verdict::Publisher;

/// Which source an entry of the `outdated` or `update` report is about (flattened into it).
#[derive(Debug, Clone, Serialize)]
pub struct SourceId {
    /// Where it is written in the descriptor.
    pub location: String,
    /// `git` or `oci`.
    pub kind: SourceKind,
    /// The repository URL without credentials (`REGISTRY/REPOSITORY` for an image).
    pub url: String,
}

impl SourceId {
    /// A Git source.
    pub fn git(git: &GitSource) -> SourceId {
        SourceId {
            location: git.location.clone(),
            kind: SourceKind::Git,
            url: git.shown.as_str().to_owned(),
        }
    }

    /// An OCI source.
    pub fn oci(oci: &OciSource) -> SourceId {
        SourceId {
            location: oci.location.clone(),
            kind: SourceKind::Oci,
            url: oci.repository(),
        }
    }
}

/// The tags resolved and the images pulled so far, by repository: sources of one repository and
/// tag share one look-up, and of one image one pull, which brings the layers every source
/// that shares it approves ([`Images::share`]).
#[derive(Default)]
pub(crate) struct Images {
    /// `(registry, repository, plain_http, tag)` and the digest it names.
    tags: Vec<(ImageKey, String, Result<String, SourceError>)>,
    /// `(registry, repository, plain_http)`, the digest, and the sources its pull serves.
    sharing: Vec<(ImageKey, String, image::Sharing)>,
    /// `(registry, repository, plain_http)`, the digest, and the image.
    pulled: Vec<(ImageKey, String, Result<PulledImage, SourceError>)>,
    /// `(registry, repository, plain_http)`, the digest, and its signature material.
    material: Vec<(ImageKey, String, Result<SignatureMaterial, SourceError>)>,
}

/// Which repository, spoken to how.
type ImageKey = (String, String, bool);

fn image_key(oci: &OciSource) -> ImageKey {
    (
        oci.reference.registry.clone(),
        oci.reference.repository.clone(),
        oci.plain_http,
    )
}

impl Images {
    /// The digest `tag` of `oci`'s repository names now, looked up on first use.
    pub(crate) fn resolve(
        &mut self,
        oci: &OciSource,
        tag: &str,
        deadline: std::time::Duration,
    ) -> Result<String, SourceError> {
        let key = image_key(oci);
        if let Some((_, _, found)) = self.tags.iter().find(|(k, t, _)| *k == key && t == tag) {
            return found.clone();
        }
        let found = image::resolve(oci, tag, deadline).map_err(|e| SourceError::from_error(&e));
        self.tags.push((key, tag.to_owned(), found.clone()));
        found
    }

    /// Records that `oci` will read the image `digest` of its repository: its pull brings the
    /// layers `oci` approves too, within `oci`'s pull bound more (call before [`pull`](Self::pull)).
    pub(crate) fn share(&mut self, oci: &OciSource, digest: &str) {
        let key = image_key(oci);
        match self
            .sharing
            .iter_mut()
            .find(|(k, d, _)| *k == key && d == digest)
        {
            Some((_, _, sharing)) => sharing.add(oci),
            None => {
                let mut sharing = image::Sharing::default();
                sharing.add(oci);
                self.sharing.push((key, digest.to_owned(), sharing));
            }
        }
    }

    /// The image `digest` of `oci`'s repository, pulled on first use for every source that
    /// [`share`](Self::share)s it (for `oci` alone when none did).
    pub(crate) fn pull(
        &mut self,
        oci: &OciSource,
        digest: &str,
        deadline: std::time::Duration,
    ) -> &Result<PulledImage, SourceError> {
        let key = image_key(oci);
        let index = match self
            .pulled
            .iter()
            .position(|(k, d, _)| *k == key && d == digest)
        {
            Some(index) => index,
            None => {
                let sharing = match self
                    .sharing
                    .iter()
                    .find(|(k, d, _)| *k == key && d == digest)
                {
                    Some((_, _, sharing)) => sharing.clone(),
                    None => {
                        let mut alone = image::Sharing::default();
                        alone.add(oci);
                        alone
                    }
                };
                let pulled = image::pull(oci, digest, &sharing, deadline)
                    .map_err(|e| SourceError::from_error(&e));
                self.pulled.push((key, digest.to_owned(), pulled));
                self.pulled.len() - 1
            }
        };
        &self.pulled[index].2
    }

    /// Who published the image `digest` of `oci`'s repository, judged under `oci`'s publisher
    /// policy as `prepare` judges its pin (`None` when the source does not check it); the
    /// signature material is fetched once per image for every source that shares it. A
    /// candidate no configured key or identity signed is refused (`image_unsigned`,
    /// `image_signature_refused`): a signer change is a reviewed change of `verify`.
    pub(crate) fn publisher(
        &mut self,
        oci: &OciSource,
        digest: &str,
        deadline: std::time::Duration,
    ) -> Result<Option<Publisher>, SourceError> {
        let Some(policy) = &oci.publisher else {
            return Ok(None);
        };
        let key = image_key(oci);
        let index = match self
            .material
            .iter()
            .position(|(k, d, _)| *k == key && d == digest)
        {
            Some(index) => index,
            None => {
                let mut reference = oci.reference.clone();
                reference.digest = digest.to_owned();
                let material = publisher::fetch_material(&reference, oci.plain_http, deadline)
                    .map_err(|(code, message)| SourceError {
                        code: code.into(),
                        message,
                    });
                self.material.push((key, digest.to_owned(), material));
                self.material.len() - 1
            }
        };
        let material = self.material[index].2.as_ref().map_err(Clone::clone)?;
        crate::trust::image::verify(material, digest, policy)
            .map(|verified| Some(verified.signer))
            .map_err(|rejected| {
                let image = format!("{}@{digest}", oci.repository());
                let refusal = publisher::Refusal::of(&image, &rejected);
                let mut message = refusal.message;
                for detail in refusal.details {
                    message.push_str("; ");
                    message.push_str(&detail);
                }
                SourceError {
                    code: refusal.code.into(),
                    message,
                }
            })
    }

    /// `oci`'s approved bundles of the image `digest` of its repository, read as `prepare`
    /// reads them (the image pulled on first use).
    pub(crate) fn read(
        &mut self,
        oci: &OciSource,
        digest: &str,
        deadline: std::time::Duration,
    ) -> Result<ImageCandidate, SourceError> {
        match self.pull(oci, digest, deadline) {
            Ok(image) => image.read(oci).map_err(|e| SourceError::from_error(&e)),
            Err(error) => Err(error.clone()),
        }
    }
}

/// What the head (or a target) holds of an approved bundle.
pub(crate) enum Taken {
    /// A bundle that passes the bundle rules.
    Bundle(Box<Bundle>),
    /// No folder of that name.
    Missing,
    /// It breaks a rule: each problem with its code, and the bundle problems behind them with
    /// their places (none when it is refused for another reason).
    Invalid(Vec<String>, Vec<crate::format::problem::Problem>),
}

/// The bundle problems behind a take error, errors and warnings with their places: an `Invalid`
/// bundle's; none for the other refusals.
pub(crate) fn take_problems(e: &TakeError) -> &[crate::format::problem::Problem] {
    match e {
        TakeError::Invalid { problems, .. } => problems.as_slice(),
        _ => &[],
    }
}

impl From<Result<Bundle, TakeError>> for Taken {
    fn from(taken: Result<Bundle, TakeError>) -> Taken {
        match taken {
            Ok(bundle) => Taken::Bundle(Box::new(bundle)),
            Err(TakeError::Missing { .. }) => Taken::Missing,
            Err(e) => Taken::Invalid(e.lines(), take_problems(&e).to_vec()),
        }
    }
}

impl From<Result<Bundle, ImageTakeError>> for Taken {
    fn from(taken: Result<Bundle, ImageTakeError>) -> Taken {
        match taken {
            Ok(bundle) => Taken::Bundle(Box::new(bundle)),
            Err(ImageTakeError::Missing { .. }) => Taken::Missing,
            Err(e) => Taken::Invalid(e.lines(), e.problems().to_vec()),
        }
    }
}
