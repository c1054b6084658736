//! The body types of `serve --listen`: what the server answers with (one boxed body type for
//! rmcp's answers, the splice's and its own replies) and a request's body as the server reads it.

use std::convert::Infallible;

use http_body_util::combinators::BoxBody;
use hyper::body::Bytes;

use super::limits;

pub(super) type Body = BoxBody<Bytes, Infallible>;

/// A request's body as the server reads it: whole within the body timeout.
pub(super) type Incoming = limits::Deadline<hyper::body::Incoming>;
