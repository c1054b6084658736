//! The answers `serve --listen` writes itself, rather than rmcp: each refusal of the route
//! ([`super::route`]) with its status, its JSON `{"error": …}` body and the headers it needs
//! (`Retry-After` on a full bound, `WWW-Authenticate` on a missing or refused token,
//! `Connection: close` when the connection ends after it), and the body builders the other
//! modules answer with (plain text for the probes, JSON for the rest).

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::{Response, StatusCode, header};

use super::body::Body;
use super::guard;

/// A whole body of `bytes`.
pub(super) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// `status` with a plain-text body.
pub(super) fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(full(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// `status` with a JSON body.
pub(super) fn json(status: StatusCode, value: serde_json::Value) -> Response<Body> {
    let mut response = Response::new(full(value.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// `status` with the JSON body `{"error": message}`.
fn error(status: StatusCode, message: &str) -> Response<Body> {
    json(status, serde_json::json!({ "error": message }))
}

/// `response` with `Retry-After: seconds`.
fn retry_after(mut response: Response<Body>, seconds: &'static str) -> Response<Body> {
    response.headers_mut().insert(
        header::RETRY_AFTER,
        header::HeaderValue::from_static(seconds),
    );
    response
}

/// `response` with `Connection: close`: the connection ends after it.
fn closing(mut response: Response<Body>) -> Response<Body> {
    response.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    response
}

/// 503 with `Retry-After`: a bound is full.
pub(super) fn busy(message: &str) -> Response<Body> {
    retry_after(error(StatusCode::SERVICE_UNAVAILABLE, message), "1")
}

/// 400 or 403: the `Host` or `Origin` checks ([`guard`]) refused the request.
pub(super) fn guard_refusal(refusal: guard::GuardRefusal) -> Response<Body> {
    let status = match refusal {
        guard::GuardRefusal::BadHost | guard::GuardRefusal::Repeated => StatusCode::BAD_REQUEST,
        guard::GuardRefusal::ForeignHost | guard::GuardRefusal::ForeignOrigin => {
            StatusCode::FORBIDDEN
        }
    };
    error(status, refusal.message())
}

/// 503, the connection closed: a connection admitted for probes only asked for something else.
pub(super) fn probes_only() -> Response<Body> {
    closing(busy(
        "too many connections; try again later (this one only answers /healthz and /readyz)",
    ))
}

/// 404 for the RFC 9728 document of an endpoint that does not exist.
pub(super) fn no_such_metadata() -> Response<Body> {
    error(StatusCode::NOT_FOUND, "no MCP endpoint has this metadata")
}

/// 404 for a path that is no endpoint.
pub(super) fn no_such_endpoint() -> Response<Body> {
    error(
        StatusCode::NOT_FOUND,
        "no MCP endpoint here: /mcp, or /agents/<name>/mcp for an agent the descriptor names",
    )
}

/// 429 with `Retry-After`, the connection closed: a token is at `--max-connections-per-token`.
pub(super) fn too_many_connections() -> Response<Body> {
    closing(retry_after(
        error(
            StatusCode::TOO_MANY_REQUESTS,
            "too many open connections for this token; try again later",
        ),
        "1",
    ))
}

/// 503 with `Retry-After`, the connection closed: a connection that waited for a place found
/// none (its address at `--max-connections-per-client`, or every place taken).
pub(super) fn no_place() -> Response<Body> {
    closing(retry_after(
        error(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many open connections; try again later",
        ),
        "1",
    ))
}

/// 404 for a session id that names no live session of this server.
pub(super) fn no_such_session() -> Response<Body> {
    error(
        StatusCode::NOT_FOUND,
        "no such session (it expired, was closed, or never existed): initialize again",
    )
}

/// 403 for a session id used at another endpoint, or with another token, than the one that
/// opened it.
pub(super) fn foreign_session() -> Response<Body> {
    error(
        StatusCode::FORBIDDEN,
        "this session was opened at another endpoint or with another token",
    )
}

/// 429 with `Retry-After`: a token is at `--max-in-flight-per-token`.
pub(super) fn too_many_in_flight_for_token() -> Response<Body> {
    retry_after(
        error(
            StatusCode::TOO_MANY_REQUESTS,
            "too many requests in flight for this token; try again later",
        ),
        "1",
    )
}

/// 503 with `Retry-After: 30`: a new session beyond `--max-sessions` (closed again).
pub(super) fn too_many_sessions() -> Response<Body> {
    retry_after(
        error(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many live sessions; try again later",
        ),
        "30",
    )
}

/// The answer to a body that did not arrive in time; the connection is closed after it.
pub(super) fn body_timed_out() -> Response<Body> {
    closing(error(
        StatusCode::REQUEST_TIMEOUT,
        "the request body did not arrive in time",
    ))
}

/// 401 with `WWW-Authenticate: Bearer`: no static token (and no `--oauth`) accepts the request.
pub(super) fn unauthorized() -> Response<Body> {
    let mut response = error(
        StatusCode::UNAUTHORIZED,
        "a bearer token for this endpoint is required",
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer realm=\"skillfold\""),
    );
    response
}

/// 403: a static token listed for another endpoint.
pub(super) fn token_for_another_endpoint() -> Response<Body> {
    error(StatusCode::FORBIDDEN, "this token is for another endpoint")
}

/// The answer to a request `--oauth` refuses: 401 or 403 with `challenge`
/// ([`super::oauth::ResourceServer::challenge`]) in `WWW-Authenticate`; `given`: a token was
/// given.
pub(super) fn oauth_refusal(status: StatusCode, challenge: &str, given: bool) -> Response<Body> {
    let message = match status {
        StatusCode::FORBIDDEN => {
            "this token opens another endpoint (no rule of --oauth gives it this one)"
        }
        _ if given => {
            "the bearer token is not valid here (expired, another issuer or audience, or a bad signature)"
        }
        _ => "a bearer token for this endpoint is required",
    };
    let mut response = error(status, message);
    if let Ok(value) = header::HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}
