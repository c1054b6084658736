//! The direct lane: `tools/call` of `load_skill` for a body, on a ready session, answered here
//! rather than through rmcp.
//!
//! Such a call only reads a snapshot in memory, yet through rmcp it costs a trip through the
//! session's worker task and back, a response stream and an SSE event per call (the profile of
//! issue 37: rmcp's per-request machinery was the largest share of the server's own CPU). Here
//! the request is read with rmcp's own message types, the call made by the endpoint's handler
//! ([`SkillsServer::call_body_spliced`], the same code, observers and audit as through rmcp),
//! the result shaped as rmcp shapes it for a session of a revision before 2026-07-28, serialised
//! with rmcp's types, and the snapshot's prebuilt bytes spliced in ([`super::splice`]). The
//! answer is one JSON object (`application/json`, which the transport lets a server answer any
//! request with), byte for byte the JSON-RPC message stdio sends for the same request.
//!
//! The lane takes a request only when rmcp would answer it the same way: a POST that accepts
//! JSON and event streams, with a JSON body, on a session that is bound to the request's
//! endpoint and token, initialised, and still open in rmcp, at a known revision before
//! 2026-07-28 (header and `_meta` alike), without the 2026-07-28 `Mcp-Method`/`Mcp-Name` headers,
//! and a call that asks for a body. Anything else goes to rmcp unchanged.

use hyper::body::Bytes;
use hyper::http::request::Parts;
use hyper::{HeaderMap, Method, Response, StatusCode, header};
use rmcp::model::{
    CallToolResponse, ClientJsonRpcMessage, ClientRequest, GetMeta as _, ProtocolVersion,
    ServerJsonRpcMessage, ServerResult,
};

use super::body::Body;
use super::replies::plain;
use super::splice::{Pieces, Splicer, gone};
use super::state::Endpoint;
use crate::mcp::handler::Origin;
use crate::mcp::observe::Caller;
use crate::mcp::trace_context::TraceParent;

/// The answer to the request of `parts` and `body` on the ready session `session`, when it is a
/// call the lane takes; `None` to hand the request to rmcp.
pub(super) async fn answer(
    endpoint: &Endpoint,
    splicer: &Splicer,
    session: &str,
    parts: &Parts,
    body: &Bytes,
) -> Option<Response<Body>> {
    if parts.method != Method::POST || !acceptable(&parts.headers) {
        return None;
    }
    let Ok(ClientJsonRpcMessage::Request(request)) = serde_json::from_slice(body) else {
        return None;
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return None;
    };
    if request.request.get_meta().protocol_version().is_some() {
        return None;
    }
    // Still open in rmcp (it may have ended the session on its own).
    if !endpoint
        .sessions
        .sessions
        .read()
        .await
        .contains_key(session)
    {
        return None;
    }
    let origin = Origin {
        session: Some(session),
        caller: parts.extensions.get::<Caller>(),
        trace: TraceParent::of_request(
            request.request.get_meta().get_traceparent(),
            parts
                .headers
                .get_all("traceparent")
                .iter()
                .map(|v| v.as_bytes()),
        ),
        request_id: &request.id,
    };
    let answered = endpoint.handler.call_body_spliced(
        &call.params.name,
        call.params.arguments.as_ref(),
        &origin,
    )?;
    let message = match answered {
        Ok(result) => {
            let mut result = ServerResult::from(CallToolResponse::Complete(result));
            // As rmcp answers a session of a revision before 2026-07-28.
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
            ServerJsonRpcMessage::response(result, request.id.clone())
        }
        Err(error) => ServerJsonRpcMessage::error(error, Some(request.id.clone())),
    };
    // The call is made (and observed): from here on it is answered here, whatever happens.
    let Ok(serialised) = serde_json::to_vec(&message) else {
        return Some(plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the answer could not be written\n",
        ));
    };
    let serialised = Bytes::from(serialised);
    let pieces = match splicer.splice(&serialised) {
        Ok(Some(pieces)) => pieces,
        Ok(None) => vec![serialised],
        Err(_) => return Some(gone()),
    };
    let mut response = Response::new(http_body_util::BodyExt::boxed(Pieces::new(pieces)));
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Some(response)
}

/// The headers rmcp asks of a request on a session and answers the same way for every known
/// revision before 2026-07-28: `Accept` of JSON and event streams, a JSON `Content-Type`, a
/// known `MCP-Protocol-Version` before 2026-07-28 (or none: 2025-03-26), and neither of the
/// 2026-07-28 headers that rmcp checks against the body.
fn acceptable(headers: &HeaderMap) -> bool {
    let accepts = |wanted: &str| {
        headers.get_all(header::ACCEPT).iter().any(|value| {
            value.to_str().is_ok_and(|list| {
                list.split(',').any(|item| {
                    let essence = item.split(';').next().unwrap_or_default().trim();
                    essence.eq_ignore_ascii_case(wanted)
                })
            })
        })
    };
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .eq_ignore_ascii_case("application/json")
        });
    let revision = match headers.get("mcp-protocol-version") {
        None => true,
        Some(value) => value.to_str().is_ok_and(|version| {
            version < ProtocolVersion::V_2026_07_28.as_str()
                && ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .any(|known| known.as_str() == version)
        }),
    };
    accepts("application/json")
        && accepts("text/event-stream")
        && json_body
        && revision
        && !headers.contains_key("mcp-method")
        && !headers.contains_key("mcp-name")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, header::HeaderValue::from_static(value));
        }
        map
    }

    const BASE: [(&str, &str); 3] = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2025-06-18"),
    ];

    #[test]
    fn the_lane_takes_only_the_headers_rmcp_answers_alike() {
        assert!(acceptable(&headers(&BASE)));
        assert!(acceptable(&headers(&BASE[..2])), "no revision: 2025-03-26");
        assert!(acceptable(&headers(&[
            ("accept", "text/event-stream"),
            ("accept", "application/json;q=0.9"),
            ("content-type", "Application/JSON; charset=utf-8"),
            ("mcp-protocol-version", "2025-11-25"),
        ])));
        for refused in [
            [BASE[0], BASE[1], ("mcp-protocol-version", "2026-07-28")],
            [BASE[0], BASE[1], ("mcp-protocol-version", "2031-01-01")],
            [BASE[0], BASE[1], ("mcp-protocol-version", "garbage")],
            [("accept", "application/json"), BASE[1], BASE[2]],
            [("accept", "text/event-stream"), BASE[1], BASE[2]],
            [BASE[0], ("content-type", "text/plain"), BASE[2]],
        ] {
            assert!(!acceptable(&headers(&refused)), "{refused:?}");
        }
        let mut with_method = headers(&BASE);
        with_method.insert("mcp-method", header::HeaderValue::from_static("tools/call"));
        assert!(!acceptable(&with_method));
        let mut with_name = headers(&BASE);
        with_name.insert("mcp-name", header::HeaderValue::from_static("load_skill"));
        assert!(!acceptable(&with_name));
    }
}
