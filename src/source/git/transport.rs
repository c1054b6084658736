//! The connection of every fetch: over HTTP(S), gix's own smart-HTTP transport on gix's own
//! reqwest client, with each answer body read through [`super::answer::Answer`] — bounded in
//! lines before its pack and cut off at the fetch's deadline before gix holds any of it. gix
//! reads the advertisement and the ref listing inside its transport, so the bound sits below
//! it, in the one [`Http`] implementation it is given; any other scheme (`file://`, `ssh://`)
//! connects as gix connects it, unbounded here (those answers come from a local process or an
//! authenticated peer).

use std::time::Instant;

use gix::protocol::transport::client::blocking_io::http::{
    self, GetResponse, Http, PostBodyDataKind, PostResponse,
};

use super::answer::{Answer, AnswerKind, AnswerRefusalSlot};

/// A transport as gix's own connections hold it.
pub(super) type Transport =
    Box<dyn gix::protocol::transport::client::blocking_io::Transport + Send>;

/// A connection to a remote for fetching.
pub(super) type Connection<'remote, 'repo> =
    gix::remote::Connection<'remote, 'static, 'repo, Transport>;

/// Connects to `remote`'s fetch URL as [`gix::Remote::connect`] does (the same URL checks and
/// protocol version), every HTTP(S) answer read under its bounds and before `until`; a refusal
/// is also kept in `refused`.
pub(super) fn connect<'remote, 'repo>(
    remote: &'remote gix::Remote<'repo>,
    until: Instant,
    refused: &AnswerRefusalSlot,
) -> gix::Result<Connection<'remote, 'repo>> {
    let direction = gix::remote::Direction::Fetch;
    let (url, version) = remote.sanitized_url_and_version(direction)?;
    if !matches!(url.scheme, gix::url::Scheme::Http | gix::url::Scheme::Https) {
        return remote.connect(direction);
    }
    let answers = BoundedHttp {
        inner: http::reqwest::Remote::default(),
        until,
        refused: refused.clone(),
    };
    let transport: Transport = Box::new(http::connect_http(answers, url, version, false));
    Ok(remote.to_connection_with_transport(transport))
}

/// How much of a request body is handed to gix's HTTP thread at once. gix writes a request one
/// packet line at a time into a pipe whose every write waits for that thread to take it (a
/// rendezvous): unbuffered, the request for 2,942 blobs by id was ~3,000 thread hand-offs
/// (9,300 `futex` and 7,400 `sched_yield` calls, 18 % of a cold `prepare`'s CPU). gix flushes
/// the body before it reads the answer, so nothing waits in this buffer while it does.
const REQUEST_BUFFER_BYTES: usize = 64 * 1024;

/// gix's reqwest client, each answer body wrapped in an [`Answer`] and each request body
/// buffered ([`REQUEST_BUFFER_BYTES`]).
struct BoundedHttp {
    inner: http::reqwest::Remote,
    until: Instant,
    refused: AnswerRefusalSlot,
}

impl BoundedHttp {
    fn answer<R: std::io::Read>(&self, body: R, kind: AnswerKind) -> Answer<R> {
        Answer::new(body, kind, self.until, self.refused.clone())
    }
}

/// Whether a request's headers ask for protocol v2 (gix sends `Git-Protocol: version=2` with
/// every v2 command).
fn asks_v2<S: AsRef<str>>(headers: &[S]) -> bool {
    headers.iter().any(|line| {
        line.as_ref().split_once(':').is_some_and(|(name, value)| {
            name.trim().eq_ignore_ascii_case("git-protocol")
                && value.split(':').any(|p| p.trim() == "version=2")
        })
    })
}

impl Http for BoundedHttp {
    type Headers = <http::reqwest::Remote as Http>::Headers;
    type ResponseBody = Answer<<http::reqwest::Remote as Http>::ResponseBody>;
    type PostBody = std::io::BufWriter<<http::reqwest::Remote as Http>::PostBody>;

    fn get(
        &mut self,
        url: &str,
        base_url: &str,
        headers: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> gix::Result<GetResponse<Self::Headers, Self::ResponseBody>> {
        let GetResponse { headers, body } = self.inner.get(url, base_url, headers)?;
        Ok(GetResponse {
            headers,
            body: self.answer(body, AnswerKind::Advertisement),
        })
    }

    fn post(
        &mut self,
        url: &str,
        base_url: &str,
        headers: impl IntoIterator<Item = impl AsRef<str>>,
        body: PostBodyDataKind,
    ) -> gix::Result<PostResponse<Self::Headers, Self::ResponseBody, Self::PostBody>> {
        let headers: Vec<String> = headers
            .into_iter()
            .map(|line| line.as_ref().to_owned())
            .collect();
        let kind = if asks_v2(&headers) {
            AnswerKind::Command
        } else {
            AnswerKind::Fetch
        };
        let PostResponse {
            post_body,
            headers,
            body,
        } = self.inner.post(url, base_url, headers, body)?;
        Ok(PostResponse {
            post_body: std::io::BufWriter::with_capacity(REQUEST_BUFFER_BYTES, post_body),
            headers,
            body: self.answer(body, kind),
        })
    }

    fn configure(&mut self, config: &dyn std::any::Any) -> gix::Result {
        self.inner.configure(config)
    }

    fn redirected_base_url(&self) -> Option<String> {
        self.inner.redirected_base_url()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_v2_protocol_header_makes_an_answer_a_v2_command() {
        assert!(asks_v2(&["Git-Protocol: version=2"]));
        assert!(asks_v2(&["git-protocol:version=2"]));
        assert!(!asks_v2(&["Git-Protocol: version=1"]));
        assert!(!asks_v2(&["X-Git-Protocol: version=2", "Accept: */*"]));
        assert!(!asks_v2::<&str>(&[]));
    }
}
