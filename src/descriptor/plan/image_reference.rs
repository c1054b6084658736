//! The grammar of an OCI image reference as a descriptor writes it:
//! `REGISTRY/REPOSITORY@sha256:<64 hex>` ([`ImageReference::parse`]) — the registry host first,
//! a lowercase repository path, and a digest, never a tag: a tag is not a pin. A tag is what an
//! OCI source may follow (`track`, [`check_tag`]).

/// `REGISTRY/REPOSITORY@sha256:<64 hex>`, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageReference {
    /// `host[:port]`.
    pub registry: String,
    /// The repository path.
    pub repository: String,
    /// `sha256:<64 hex>`.
    pub digest: String,
}

impl std::fmt::Display for ImageReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}@{}", self.registry, self.repository, self.digest)
    }
}

/// Whether `value` is `sha256:` and 64 lowercase hex digits: how OCI content is named.
pub fn is_sha256_digest(value: &str) -> bool {
    value
        .strip_prefix("sha256:")
        .and_then(crate::support::hex::decode_lower_32)
        .is_some()
}

/// The OCI tag grammar (distribution-spec): `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`.
pub const TAG_RULE: &str = "a tag is 1 to 128 characters `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`: ASCII letters, digits and `_` first, then also `.` and `-`";

/// Whether `value` is an OCI tag (the distribution-spec grammar, [`TAG_RULE`]); the rule when it
/// is not.
pub fn check_tag(value: &str) -> Result<(), &'static str> {
    let first_ok = value
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
    let rest_ok = value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if first_ok && rest_ok && value.len() <= 128 {
        Ok(())
    } else {
        Err(TAG_RULE)
    }
}

/// Why an image reference is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReferenceError {
    /// Not the shape of a reference.
    Invalid(String),
    /// A tag, or no digest.
    NotPinned(String),
}

impl ImageReference {
    /// Parses `REGISTRY/REPOSITORY@sha256:<64 hex>`: the registry host first (with a `.` or a
    /// port, or `localhost`), a lowercase repository path, and a digest — never a tag.
    pub fn parse(value: &str) -> Result<ImageReference, ReferenceError> {
        let invalid = |why: &str| ReferenceError::Invalid(why.to_owned());
        let Some((name, digest)) = value.split_once('@') else {
            return Err(ReferenceError::NotPinned(
                "no digest: pin the image by `@sha256:<64 hex>` (what `skillfold push` printed)"
                    .to_owned(),
            ));
        };
        let (registry, repository) = name
            .split_once('/')
            .ok_or_else(|| invalid("expected REGISTRY/REPOSITORY@sha256:<64 hex>"))?;
        let host_like = registry.contains('.') || registry.contains(':') || registry == "localhost";
        let registry_ok = host_like
            && registry.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']')
            });
        if !registry_ok {
            return Err(invalid(
                "the registry host comes first (with a `.` or a port, or `localhost`)",
            ));
        }
        if let Some((_, tag)) = repository.rsplit_once(':')
            && !tag.contains('/')
        {
            return Err(ReferenceError::NotPinned(
                "a tag is not a pin: give the digest alone".to_owned(),
            ));
        }
        let component_ok = |c: &str| {
            !c.is_empty()
                && c.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
                })
                && c.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
                && c.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric())
        };
        if repository.len() > 255 || !repository.split('/').all(component_ok) {
            return Err(invalid(
                "the repository is lowercase letters, digits and `._-`, in `/`-separated parts",
            ));
        }
        if !is_sha256_digest(digest) {
            return Err(invalid(
                "the digest is `sha256:` and 64 lowercase hex digits",
            ));
        }
        Ok(ImageReference {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            digest: digest.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::check_tag;

    #[test]
    fn tags_follow_the_distribution_grammar() {
        for tag in ["stable", "v1.2.3", "_x", "A-b_c.d", &"a".repeat(128), "0"] {
            assert_eq!(check_tag(tag), Ok(()), "{tag}");
        }
        for tag in [
            "",
            ".hidden",
            "-x",
            "a/b",
            "a:b",
            "a@b",
            "sha256:00",
            "caf\u{e9}",
            "a b",
            "a\nb",
            &"a".repeat(129),
        ] {
            assert!(check_tag(tag).is_err(), "{tag:?}");
        }
    }
}
