//! What `serve --listen` answers without an endpoint or an MCP session: `GET /healthz` (200 while
//! the process runs), `GET /readyz` (200 when every catalogue holds all the bundles it approves
//! and, with `--oauth`, the issuer's keys are in; 503 with a JSON reason otherwise), `GET /metrics`
//! (the Prometheus exposition, [`super::metrics`], behind `--metrics-tokens` when given) and, with
//! `--oauth`, the RFC 9728 documents ([`super::oauth::metadata`]). A connection admitted over the
//! connection caps for probes only ([`super::connections`]) is answered here too.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use hyper::{Method, Request, Response, StatusCode, header};

use super::body::{Body, Incoming};
use super::replies::{full, json, no_such_metadata, plain, probes_only, unauthorized};
use super::route::Step;
use super::state::Server;
use super::{limits, metrics, oauth};

impl Server {
    /// A request on a connection admitted for probes only: `GET /healthz` and `GET /readyz`
    /// are answered (behind the same checks), anything else gets 503.
    pub(super) async fn probe(&self, request: Request<hyper::body::Incoming>) -> Response<Body> {
        let is_probe = request.method() == Method::GET
            && matches!(request.uri().path(), "/healthz" | "/readyz");
        if is_probe {
            let timed_out = Arc::new(AtomicBool::new(false));
            let limit = self.body_timeout;
            return self
                .handle(request.map(|body| limits::Deadline::new(body, limit, timed_out)))
                .await;
        }
        self.metrics
            .http_request(StatusCode::SERVICE_UNAVAILABLE.as_u16());
        probes_only()
    }

    /// 2. The route's step for what needs no endpoint: a `GET` of `/healthz`, `/readyz`,
    ///    `/metrics` or (with `--oauth`) an RFC 9728 document is answered here (`Err` holds the
    ///    answer); anything else goes on.
    pub(super) async fn answer_probe(&self, request: &Request<Incoming>) -> Step<()> {
        if request.method() != Method::GET {
            return Ok(());
        }
        let path = request.uri().path();
        match path {
            "/healthz" => return Err(plain(StatusCode::OK, "ok\n")),
            "/readyz" => return Err(self.readiness()),
            "/metrics" => {
                if !self.may_read_metrics(request.headers()) {
                    return Err(unauthorized());
                }
                return Err(self.exposition().await);
            }
            _ => {}
        }
        if let Some(oauth) = &self.oauth
            && let Some(endpoint_path) = oauth::metadata::endpoint_path(path)
        {
            return Err(
                match self.endpoints.iter().find(|e| e.path == endpoint_path) {
                    Some(e) => json(
                        StatusCode::OK,
                        oauth::metadata::document(oauth, &e.path, e.agent.as_deref()),
                    ),
                    None => no_such_metadata(),
                },
            );
        }
        Ok(())
    }

    /// `GET /metrics`: the exposition, with the live sessions and each endpoint's skills.
    async fn exposition(&self) -> Response<Body> {
        let sessions = self.live_sessions().await;
        let skills: Vec<(Option<&str>, usize)> = self
            .endpoints
            .iter()
            .map(|e| {
                (
                    e.agent.as_deref(),
                    e.live.current().catalogue().skills().count(),
                )
            })
            .collect();
        let mut response = Response::new(full(self.metrics.render(sessions, &skills)));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static(metrics::CONTENT_TYPE),
        );
        response
    }

    /// `GET /readyz`.
    fn readiness(&self) -> Response<Body> {
        if let Some(oauth) = &self.oauth
            && oauth.keys().keys().is_none()
        {
            return json(
                StatusCode::SERVICE_UNAVAILABLE,
                serde_json::json!({
                    "ready": false,
                    "reason": "the identity provider's keys (--oauth) are not fetched yet",
                    "detail": oauth.keys().last_error(),
                }),
            );
        }
        let waiting: Vec<String> = self
            .endpoints
            .iter()
            .filter(|e| !e.live.current().missing().is_empty())
            .map(|e| e.path.clone())
            .collect();
        if waiting.is_empty() {
            json(
                StatusCode::OK,
                serde_json::json!({"ready": true, "endpoints": self.endpoints.len()}),
            )
        } else {
            json(
                StatusCode::SERVICE_UNAVAILABLE,
                serde_json::json!({
                    "ready": false,
                    "reason": "approved bundles failed to load; the server serves the rest and retries with --watch",
                    "endpoints": waiting,
                }),
            )
        }
    }
}
