//! The referrers of the pinned digest as the signature fetch ([`super`]) lists them: the
//! referrers API, every page its `Link` header names (RFC 8288) on the registry's origin, or the
//! `sha256-<hex>` tag index when the registry answers that it has no referrers API; each answer
//! bounded, the descriptors of all pages together within [`MAX_REFERRER_DESCRIPTORS`].

use reqwest::header::{CONTENT_TYPE, HeaderMap, LINK};
use reqwest::{Method, StatusCode, Url};
use serde_json::Value;

use super::{
    Fetcher, MAX_REFERRER_DESCRIPTORS, MAX_REFERRERS_INDEX_BYTES, MAX_REFERRERS_PAGES,
    optional_string,
};
use crate::source::oci::MEDIA_INDEX;
use crate::source::oci::pull_error::PullError;
use crate::source::origin::Origin;
use crate::support::escape;

impl Fetcher<'_> {
    /// The descriptors the referrers API lists for the pinned digest, every page; `None` when
    /// the registry has no referrers API.
    pub(super) async fn referrers_api(&mut self) -> Result<Option<Vec<Value>>, PullError> {
        let what = "the referrers index";
        let mut url = format!("{}/referrers/{}", self.session.base, self.reference.digest);
        let mut descriptors = Vec::new();
        for page in 0..MAX_REFERRERS_PAGES {
            let response = self
                .session
                .answer(&Method::GET, &url, Some(MEDIA_INDEX), what)
                .await?;
            if page == 0 && no_referrers_api(response.status(), response.headers()) {
                return Ok(None);
            }
            let response = self
                .session
                .judge(response, MAX_REFERRERS_INDEX_BYTES, what)?;
            let next = self.next_page(&url, response.headers())?;
            let body = self
                .session
                .read_body(response, MAX_REFERRERS_INDEX_BYTES, what)
                .await?;
            self.index_descriptors(&body, what, &mut descriptors)?;
            match next {
                Some(next) => url = next,
                None => return Ok(Some(descriptors)),
            }
        }
        Err(self.too_large(format!(
            "{what} has more than {MAX_REFERRERS_PAGES} pages, the most read"
        )))
    }

    /// The descriptors the `sha256-<hex>` tag index lists (none when there is no such tag).
    pub(super) async fn referrers_tag(&mut self) -> Result<Vec<Value>, PullError> {
        let tag = format!("sha256-{}", self.hex);
        let what = format!("the referrers tag index `{tag}`");
        let mut descriptors = Vec::new();
        if let Some(body) = self
            .at_tag(&tag, MEDIA_INDEX, MAX_REFERRERS_INDEX_BYTES, &what)
            .await?
        {
            self.index_descriptors(&body, &what, &mut descriptors)?;
        }
        Ok(descriptors)
    }

    /// The URL of the next page of the referrers index, from the answer's `Link` header(s) (at
    /// `url`; RFC 8288): the one link whose `rel` is `next`, on the registry's origin; other
    /// links (`prev`, …) are ignored.
    fn next_page(&self, url: &str, headers: &HeaderMap) -> Result<Option<String>, PullError> {
        let malformed = || {
            self.malformed(
                "the referrers index's `Link` header is not `<URL>; rel=\"next\"` on the registry's origin, once"
                    .to_owned(),
            )
        };
        let mut next = None;
        for value in headers.get_all(LINK) {
            let value = value.to_str().map_err(|_| malformed())?;
            for Link { target, params } in links(value).ok_or_else(malformed)? {
                if !params.iter().any(|(name, value)| {
                    name.eq_ignore_ascii_case("rel")
                        && value
                            .split_ascii_whitespace()
                            .any(|rel| rel.eq_ignore_ascii_case("next"))
                }) {
                    continue;
                }
                if next.replace(target).is_some() {
                    return Err(malformed());
                }
            }
        }
        let Some(target) = next else {
            return Ok(None);
        };
        let here = Url::parse(url).map_err(|_| malformed())?;
        let next = here.join(target).map_err(|_| malformed())?;
        if Origin::of(&next).is_none() || Origin::of(&next) != Origin::of(&here) {
            return Err(malformed());
        }
        Ok(Some(next.to_string()))
    }

    /// Appends the descriptors of the image index `body` to `descriptors`, within
    /// [`MAX_REFERRER_DESCRIPTORS`] all together.
    fn index_descriptors(
        &self,
        body: &[u8],
        what: &str,
        descriptors: &mut Vec<Value>,
    ) -> Result<(), PullError> {
        let mut index = self.json_object(body, what)?;
        let media_type = optional_string(&index, "mediaType")
            .map_err(|()| self.malformed(format!("{what} has a `mediaType` that is not a string")))?
            .unwrap_or(MEDIA_INDEX);
        if media_type != MEDIA_INDEX {
            return Err(self.malformed(format!(
                "{what} has media type `{}`, not an OCI image index",
                escape::text(media_type)
            )));
        }
        let Some(Value::Array(manifests)) = index.remove("manifests") else {
            return Err(self.malformed(format!("{what} has no `manifests` list")));
        };
        if descriptors.len() + manifests.len() > MAX_REFERRER_DESCRIPTORS {
            return Err(self.too_large(format!(
                "{what} lists {} descriptors, over the bound of {MAX_REFERRER_DESCRIPTORS}",
                descriptors.len() + manifests.len()
            )));
        }
        descriptors.extend(manifests);
        Ok(())
    }
}

/// One link of a `Link` header (RFC 8288).
struct Link<'a> {
    /// Between `<` and `>`.
    target: &'a str,
    /// Its parameters: name, value unquoted.
    params: Vec<(&'a str, &'a str)>,
}

/// The links of one `Link` header value; `None` when it is not of that form.
fn links(value: &str) -> Option<Vec<Link<'_>>> {
    let mut found = Vec::new();
    let mut rest = value.trim();
    while !rest.is_empty() {
        let (target, after) = rest.strip_prefix('<')?.split_once('>')?;
        // The parameters run to the next link (`, <`) or the end.
        let (params, next) = match after.find(", <").or_else(|| after.find(",<")) {
            Some(at) => (&after[..at], &after[at + 1..]),
            None => (after, ""),
        };
        let mut parsed = Vec::new();
        for param in params.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = param.split_once('=')?;
            parsed.push((name.trim(), value.trim().trim_matches('"')));
        }
        found.push(Link {
            target,
            params: parsed,
        });
        rest = next.trim();
    }
    Some(found)
}

/// Whether an answer of the referrers API says the registry has none: 404 (the distribution
/// spec's signal), and as go-containerregistry also reads them, 400, 406, or a 200 that is not an
/// OCI image index.
fn no_referrers_api(status: StatusCode, headers: &HeaderMap) -> bool {
    match status {
        StatusCode::NOT_FOUND | StatusCode::BAD_REQUEST | StatusCode::NOT_ACCEPTABLE => true,
        StatusCode::OK => {
            let content_type = headers
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let media_type = content_type.split(';').next().unwrap_or_default().trim();
            !media_type.eq_ignore_ascii_case(MEDIA_INDEX)
        }
        _ => false,
    }
}
