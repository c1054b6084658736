//! Which sources an update looks at and what each moves to: the selectors name sources by
//! location, URL or approved bundle, and `--to` is read as the target of each (a commit, branch or
//! tag for Git; a digest or tag for OCI) and checked against every selected source before
//! anything is fetched.

use crate::descriptor::plan::{GitSource, OciSource, Plan, Source};
use crate::format::pin::Pin;
use crate::source::git::candidate::CandidateTarget;
use crate::support::escape;

use super::error::UpdateError;

/// A selected source and what it moves to.
pub(super) enum Selected<'p> {
    Git(&'p GitSource, CandidateTarget),
    Oci(&'p OciSource, ImageTarget),
}

impl Selected<'_> {
    pub(super) fn location(&self) -> &str {
        match self {
            Selected::Git(git, _) => &git.location,
            Selected::Oci(oci, _) => &oci.location,
        }
    }
}

/// The image an OCI source moves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ImageTarget {
    /// The image this tag names now (resolved once).
    Tag(String),
    /// This manifest digest.
    Digest(String),
}

impl ImageTarget {
    /// `--to`'s value for an OCI source: `sha256:` and 64 lowercase hex digits, or an OCI tag.
    // A String: the caller gives it the one code of an invalid `--to`; only shown.
    fn parse(value: &str) -> Result<ImageTarget, String> {
        if let Some(hex) = value.strip_prefix("sha256:") {
            return crate::support::hex::decode_lower_32(hex)
                .map(|_| ImageTarget::Digest(value.to_owned()))
                .ok_or_else(|| {
                    format!(
                        "`{}` is not a digest: `sha256:` and 64 lowercase hex digits",
                        escape::text(value)
                    )
                });
        }
        crate::descriptor::plan::check_tag(value)
            .map(|()| ImageTarget::Tag(value.to_owned()))
            .map_err(|rule| {
                format!(
                    "`{}` is neither a `sha256:` digest nor an OCI tag: {rule}",
                    escape::text(value)
                )
            })
    }

    pub(super) fn describe(&self) -> String {
        match self {
            ImageTarget::Tag(tag) | ImageTarget::Digest(tag) => tag.clone(),
        }
    }
}

/// The sources `selectors` name (every Git source and every tracked OCI source when there are
/// none), in descriptor order, each with the target `to` names for it (its tracked branch or tag
/// without `to`). `to` is checked against every selected source before anything is fetched.
pub(super) fn select<'p>(
    plan: &'p Plan,
    selectors: &[String],
    to: Option<&str>,
) -> Result<Vec<Selected<'p>>, UpdateError> {
    let matches = |location: &str, url: &str, approved: &[Pin], selector: &str| {
        location == selector
            || url == selector
            || approved.iter().any(|p| p.name.as_str() == selector)
    };
    let named = |source: &Source, selector: &str| match source {
        Source::Git(git) => matches(&git.location, git.shown.as_str(), &git.approved, selector),
        Source::Oci(oci) => matches(&oci.location, &oci.repository(), &oci.approved, selector),
        Source::Local(_) => false,
    };
    if let Some(unknown) = selectors
        .iter()
        .find(|s| !plan.sources.iter().any(|source| named(source, s)))
    {
        return Err(UpdateError::UnknownSource(unknown.clone()));
    }
    let invalid = |location: &str| {
        let location = location.to_owned();
        move |message| UpdateError::InvalidTarget { location, message }
    };
    let mut selected = Vec::new();
    for source in &plan.sources {
        if !selectors.is_empty() && !selectors.iter().any(|s| named(source, s)) {
            continue;
        }
        match source {
            Source::Git(git) => {
                let target = match to {
                    None => CandidateTarget::Tracked,
                    Some(to) => CandidateTarget::parse(to).map_err(invalid(&git.location))?,
                };
                selected.push(Selected::Git(git, target));
            }
            Source::Oci(oci) => {
                let target = match (to, &oci.track) {
                    (Some(to), _) => ImageTarget::parse(to).map_err(invalid(&oci.location))?,
                    (None, Some(tag)) => ImageTarget::Tag(tag.clone()),
                    // Nothing to follow: left out unless it was named.
                    (None, None) if selectors.is_empty() => continue,
                    (None, None) => return Err(UpdateError::NotTracked(oci.location.clone())),
                };
                selected.push(Selected::Oci(oci, target));
            }
            Source::Local(_) => {}
        }
    }
    Ok(selected)
}
