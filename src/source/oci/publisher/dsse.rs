//! DSSE envelopes (a Sigstore bundle's `dsseEnvelope`): the pre-authentication encoding a
//! signature covers, and the in-toto statement subject a cosign v3 image signature binds.

/// `DSSEv1 <len(type)> <type> <len(payload)> <payload>`: the bytes a DSSE signature signs.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}
