//! The way of one request through `serve --listen`, as a list of named steps in the order they
//! run ([`Server::route`]): refuse a foreign `Host` or `Origin`, answer a probe, find the
//! endpoint, authenticate, count the connection for its token, check the session binding, enter
//! the in-flight count, answer a body call on the direct lane or forward to rmcp, bind a new
//! session, note a session ready, forget a deleted one. Each step either goes on or ends the
//! request with its answer ([`Step`]); the answers are [`super::replies`].

// A step's `Err` is the answer itself (as `jsonrpc::screen` and `authenticate` give it), built
// only when the request ends there; boxing it would allocate on every refusal.
#![expect(
    clippy::result_large_err,
    reason = "a step's Err is the response sent, moved once"
)]

use http_body_util::BodyExt as _;
use hyper::body::Bytes;
use hyper::{HeaderMap, Method, Request, Response, StatusCode, header};

use super::body::{Body, Incoming};
use super::replies::{
    busy, foreign_session, full, guard_refusal, no_place, no_such_endpoint, no_such_session,
    too_many_connections, too_many_in_flight_for_token, too_many_sessions,
};
use super::sessions::Found;
use super::state::{Binding, Endpoint, Server};
use super::{connections, direct, jsonrpc, limits, splice};

/// What a step gives: `Ok` to go on, with what it found; `Err` with the answer that ends the
/// request there (a refusal, or a probe's answer).
pub(super) type Step<T> = Result<T, Response<Body>>;

impl Server {
    /// Answers one request and counts its status for the metrics.
    pub(super) async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        let response = match self.route(request).await {
            Ok(response) | Err(response) => response,
        };
        self.metrics.http_request(response.status().as_u16());
        response
    }

    /// The steps of a request, in order; the first that answers ends it.
    async fn route(&self, mut request: Request<Incoming>) -> Step<Response<Body>> {
        self.refuse_foreign_origin(request.headers())?;
        self.answer_probe(&request).await?;
        let index = self.find_endpoint(request.uri().path())?;
        let endpoint = &self.endpoints[index];
        let (token, caller) = self.authenticate(request.headers(), endpoint).await?;
        count_connection(&request, token).await?;
        if let Some(caller) = caller {
            // For the audit record: who the access token named (never the token).
            request.extensions_mut().insert(caller);
        }
        let binding = Binding {
            endpoint: index,
            token,
        };
        let session = self.check_session(&request, binding)?;
        let method = request.method().clone();
        let flight = self.enter_in_flight(session.as_ref().map(|s| s.id.as_str()), token)?;
        let request = jsonrpc::screen(request).await?;
        if let Some(answer) = self
            .answer_directly(endpoint, session.as_ref(), &request)
            .await
        {
            return Ok(answer);
        }
        let initialized = request.is_initialized_notification();
        let mut response = self.forward(endpoint, request).await;
        match &session {
            None => self.bind_new_session(endpoint, &response, binding).await?,
            Some(session) => self.note_ready(session, initialized, &response),
        }
        self.forget_deleted_session(&method, session.as_ref(), &mut response);
        Ok(hold_in_flight(response, flight))
    }

    /// 1. The `Host` and `Origin` checks ([`super::guard`]), on every path, the probes and
    ///    `/metrics` included: a page that rebinds a name to this address reads nothing.
    fn refuse_foreign_origin(&self, headers: &HeaderMap) -> Step<()> {
        self.guard.check(headers).map_err(guard_refusal)
    }

    // 2. The probes: `answer_probe`, in `probes.rs`.

    /// 3. The endpoint at the request's path (its index), else 404.
    fn find_endpoint(&self, path: &str) -> Step<usize> {
        self.endpoints
            .iter()
            .position(|e| e.path == path)
            .ok_or_else(no_such_endpoint)
    }

    // 4. Authentication: `authenticate`, in `auth.rs`.

    /// 6. The session binding: a request naming a session (`Mcp-Session-Id`) must come to the
    ///    endpoint and with the token that opened it (else 403). Every session is bound when it
    ///    opens: an id that is not bound is no session of this server, or one that is gone (404).
    ///    `Ok` with the session, if the request names one.
    fn check_session(
        &self,
        request: &Request<Incoming>,
        binding: Binding,
    ) -> Step<Option<NamedSession>> {
        let Some(id) = request.headers().get("mcp-session-id") else {
            return Ok(None);
        };
        let Ok(id) = id.to_str() else {
            return Err(no_such_session());
        };
        match self.session(id, binding) {
            Found::Bound { ready } => Ok(Some(NamedSession {
                id: id.to_owned(),
                ready,
            })),
            Found::Foreign => Err(foreign_session()),
            Found::Unknown => Err(no_such_session()),
        }
    }

    /// 7. A request without a session (the stateless 2026-07-28 path, or an `initialize`)
    ///    holds a place in flight until its answer has been sent (429 over its token's bound,
    ///    503 over the server's).
    fn enter_in_flight(
        &self,
        session: Option<&str>,
        token: Option<[u8; 32]>,
    ) -> Step<Option<limits::Flight>> {
        match session {
            Some(_) => Ok(None),
            None => match self.in_flight.enter(token) {
                Ok(flight) => Ok(Some(flight)),
                Err(limits::InFlightFull::Token) => Err(too_many_in_flight_for_token()),
                Err(limits::InFlightFull::Server) => {
                    Err(busy("too many requests in flight; try again later"))
                }
            },
        }
    }

    /// 8. A `tools/call` of `load_skill` for a body on a ready session is answered on the
    ///    direct lane ([`direct`]), without rmcp; every POST body has been judged as stdio judges
    ///    a line ([`jsonrpc`]) before, within the request's place in flight (a body still
    ///    arriving holds it).
    async fn answer_directly(
        &self,
        endpoint: &Endpoint,
        session: Option<&NamedSession>,
        request: &jsonrpc::Screened<Incoming>,
    ) -> Option<Response<Body>> {
        let (Some(splicer), Some(session), jsonrpc::Screened::Post(parts, body)) =
            (&self.splicer, session, request)
        else {
            return None;
        };
        if !session.ready {
            return None;
        }
        direct::answer(endpoint, splicer, &session.id, parts, body).await
    }

    /// 9. Anything else goes to the endpoint's rmcp service; skill bodies are spliced into its
    ///    answer ([`splice`]).
    async fn forward(
        &self,
        endpoint: &Endpoint,
        request: jsonrpc::Screened<Incoming>,
    ) -> Response<Body> {
        let response = endpoint.service.handle(request.for_rmcp()).await;
        match &self.splicer {
            Some(splicer) => splice::response(splicer, response).await,
            None => response,
        }
    }

    /// 10. For a request that named no session: rmcp opened a session, whatever headers asked for
    ///     it: counted and bound here, or closed again (503).
    async fn bind_new_session(
        &self,
        endpoint: &Endpoint,
        response: &Response<Body>,
        binding: Binding,
    ) -> Step<()> {
        if let Some(id) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            && !self.admit(endpoint, id, binding).await
        {
            return Err(too_many_sessions());
        }
        Ok(())
    }

    /// 11. A session whose client said `notifications/initialized`, which rmcp took (202), is
    ///     ready: the direct lane answers on it from now on.
    fn note_ready(&self, session: &NamedSession, initialized: bool, response: &Response<Body>) {
        if initialized && !session.ready && response.status() == StatusCode::ACCEPTED {
            self.session_ready(&session.id);
        }
    }

    /// 12. A `DELETE` that closed its session: its binding is forgotten.
    fn forget_deleted_session(
        &self,
        method: &Method,
        session: Option<&NamedSession>,
        response: &mut Response<Body>,
    ) {
        if *method == Method::DELETE
            && let Some(session) = session
            && response.status().is_success()
        {
            self.forget_session(&session.id);
            // The session is gone: 204 (clients accept 200 or 204, not rmcp's 202).
            if response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
                *response.body_mut() = full(Bytes::new());
                response.headers_mut().remove(header::CONTENT_LENGTH);
            }
        }
    }
}

/// The session a request names, bound as the request came.
struct NamedSession {
    id: String,
    /// Initialised: the direct lane may answer on it.
    ready: bool,
}

/// 5. Its connection counts for the token from now on, within the token's bound (else 429, and
///    the connection closed) and, if it was waiting for a place, within the total (else 503, and
///    closed). A request without a token on a connection still waiting needs a place of its
///    address: it waits for one, up to the connection's time to wait (else 503, and closed).
async fn count_connection(request: &Request<Incoming>, token: Option<[u8; 32]>) -> Step<()> {
    let Some(link) = request.extensions().get::<connections::Link>() else {
        return Ok(());
    };
    let placed = match token {
        Some(key) => link.authenticated(key),
        None => link.placed().await,
    };
    placed.map_err(|refusal| match refusal {
        connections::NoPlace::Key => too_many_connections(),
        connections::NoPlace::Server | connections::NoPlace::Client => no_place(),
    })
}

/// The answer holds the request's place in flight, if it took one, until its last byte.
fn hold_in_flight(response: Response<Body>, flight: Option<limits::Flight>) -> Response<Body> {
    match flight {
        None => response,
        Some(flight) => response.map(|body| limits::Holding::new(body, flight).boxed()),
    }
}
