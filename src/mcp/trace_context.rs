//! W3C Trace Context (`traceparent`, <https://www.w3.org/TR/trace-context/>) as the audit log
//! reads it: which trace and which caller's span a request belongs to, so that a platform that
//! traces its agents with OpenTelemetry can join an audit line to its trace. skillfold starts no
//! span and exports nothing; it only records the ids a client sent.
//!
//! A request carries the context in its `params._meta.traceparent` (MCP, SEP-414) or, over HTTP,
//! in the `traceparent` header. `_meta` wins: the header describes the HTTP hop, `_meta` the MCP
//! request itself (a client may batch or proxy). When `_meta`'s value is malformed, the header's is
//! used if it is valid; a request with two `traceparent` headers has none.
//!
//! The value is parsed strictly; anything else is ignored, never echoed (the audit line then
//! has no ids):
//!
//! - at most [`MAX_LEN`] bytes, all ASCII;
//! - `version-traceid-parentid-flags`: 2, 32, 16 and 2 lowercase hex digits joined by `-`;
//! - version `ff` is invalid; version `00` is exactly 55 characters; a later version may append
//!   fields after a `-` at character 55, which are not read (the spec's rule for versions it does
//!   not know yet);
//! - a trace id or parent id of all zeros is invalid.

/// The longest `traceparent` value read (version 00 is 55 bytes; later versions may be longer).
pub const MAX_LEN: usize = 512;

/// The ids of a valid `traceparent`: lowercase hex, as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace id: 32 lowercase hex digits, not all zero.
    pub trace_id: String,
    /// The caller's span id (`parent-id`): 16 lowercase hex digits, not all zero.
    pub span_id: String,
}

impl TraceParent {
    /// Parses `value` strictly (see [the module](self)); `None` when it is malformed.
    pub fn parse(value: &str) -> Option<TraceParent> {
        if value.len() > MAX_LEN || !value.is_ascii() {
            return None;
        }
        let head = value.get(..55)?;
        let rest = &value[55..];
        let mut fields = head.split('-');
        let (version, trace_id, span_id, flags) = (
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
        );
        let shaped = [(version, 2), (trace_id, 32), (span_id, 16), (flags, 2)]
            .iter()
            .all(|(field, len)| field.len() == *len && is_lower_hex(field));
        if !shaped || fields.next().is_some() || version == "ff" {
            return None;
        }
        // Version 00 has exactly four fields; a later one may add more after a dash.
        if (version == "00" && !rest.is_empty()) || (!rest.is_empty() && !rest.starts_with('-')) {
            return None;
        }
        if is_zero(trace_id) || is_zero(span_id) {
            return None;
        }
        Some(TraceParent {
            trace_id: trace_id.to_owned(),
            span_id: span_id.to_owned(),
        })
    }

    /// The context of a request: its `_meta.traceparent` if valid, else its one `traceparent`
    /// header if valid (`headers`: every value of that header, in order).
    pub fn of_request<'a>(
        meta: Option<&str>,
        headers: impl IntoIterator<Item = &'a [u8]>,
    ) -> Option<TraceParent> {
        if let Some(found) = meta.and_then(TraceParent::parse) {
            return Some(found);
        }
        let mut headers = headers.into_iter();
        let only = headers.next()?;
        if headers.next().is_some() {
            return None;
        }
        std::str::from_utf8(only).ok().and_then(TraceParent::parse)
    }
}

fn is_lower_hex(field: &str) -> bool {
    field
        .bytes()
        .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn is_zero(field: &str) -> bool {
    field.bytes().all(|b| b == b'0')
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const SPAN: &str = "00f067aa0ba902b7";

    fn valid() -> String {
        format!("00-{TRACE}-{SPAN}-01")
    }

    #[test]
    fn a_valid_version_00_value_gives_its_ids() {
        let parsed = TraceParent::parse(&valid()).expect("valid");
        assert_eq!(
            (parsed.trace_id.as_str(), parsed.span_id.as_str()),
            (TRACE, SPAN)
        );
        assert!(TraceParent::parse(&format!("00-{TRACE}-{SPAN}-00")).is_some());
    }

    #[test]
    fn later_versions_are_read_by_the_rules_of_the_spec() {
        assert!(TraceParent::parse(&format!("01-{TRACE}-{SPAN}-01")).is_some());
        assert!(
            TraceParent::parse(&format!("cc-{TRACE}-{SPAN}-01-what-the-future-holds")).is_some()
        );
        // After character 55 a later version needs a dash; version 00 allows nothing.
        assert!(TraceParent::parse(&format!("cc-{TRACE}-{SPAN}-01x")).is_none());
        assert!(TraceParent::parse(&format!("00-{TRACE}-{SPAN}-01-extra")).is_none());
        assert!(TraceParent::parse(&format!("ff-{TRACE}-{SPAN}-01")).is_none());
    }

    #[test]
    fn malformed_and_hostile_values_are_ignored() {
        let long = format!("cc-{TRACE}-{SPAN}-01-{}", "a".repeat(MAX_LEN));
        let cases = [
            String::new(),
            "00".to_owned(),
            valid().to_uppercase(),
            format!("00-{}-{SPAN}-01", TRACE.to_uppercase()),
            format!("00-{TRACE}-{}-01", SPAN.to_uppercase()),
            format!("00-{}-{SPAN}-01", "0".repeat(32)),
            format!("00-{TRACE}-{}-01", "0".repeat(16)),
            format!("00-{TRACE}-{SPAN}-0"),
            format!("0-{TRACE}-{SPAN}-011"),
            format!("00-{TRACE}x-{SPAN}-1"),
            format!("00_{TRACE}_{SPAN}_01"),
            format!("00-{TRACE}-{SPAN}-01\n"),
            format!("00-{TRACE}-{SPAN}-\u{1b}1"),
            format!("00-{}\u{0}-{SPAN}-01", &TRACE[..31]),
            format!("00-{}é-{SPAN}-01", &TRACE[..30]),
            format!(" 00-{TRACE}-{SPAN}-01"),
            format!("00-{TRACE}-{SPAN}-zz"),
            long,
        ];
        for case in cases {
            assert_eq!(TraceParent::parse(&case), None, "{case:?}");
        }
    }

    #[test]
    fn meta_wins_over_the_header_and_two_headers_are_none() {
        let other = format!("00-{}-{SPAN}-01", "1".repeat(32));
        let from = |meta: Option<&str>, headers: &[&str]| {
            TraceParent::of_request(meta, headers.iter().map(|h| h.as_bytes())).map(|t| t.trace_id)
        };
        assert_eq!(from(Some(&valid()), &[&other]), Some(TRACE.to_owned()));
        assert_eq!(from(Some("bogus"), &[&other]), Some("1".repeat(32)));
        assert_eq!(from(None, &[&other]), Some("1".repeat(32)));
        assert_eq!(from(None, &[&other, &valid()]), None);
        assert_eq!(from(None, &[]), None);
        assert_eq!(from(Some("bogus"), &["bogus"]), None);
    }
}
