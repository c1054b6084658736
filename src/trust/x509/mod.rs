//! A bounded reader of the X.509 certificates Sigstore uses (RFC 5280, DER): the fields the
//! trusted root and the Fulcio checks need (validity, names, key, extensions), read without
//! trusting a length or a count. The chain's signatures and its path rules are checked by
//! rustls-webpki (see [`crate::trust::x509::certificate`]); this reader only tells
//! what a certificate says.
//!
//! Rules: DER only (definite, minimal lengths; one-byte tags), a certificate of at most
//! [`MAX_CERTIFICATE`] bytes, a version 3 `TBSCertificate` with its fields in order, at most
//! [`MAX_EXTENSIONS`] extensions (each OID once), at most [`MAX_NAMES`] subject alternative
//! names; times as `UTCTime` (`YYMMDDHHMMSSZ`, years 1950–2049) or `GeneralizedTime`
//! (`YYYYMMDDHHMMSSZ`).
//!
//! Beside the reader: [`trusted_root`], the Sigstore trusted root's certificate authorities and
//! log keys; [`certificate`], a Fulcio certificate chained to that root at the signing time, its
//! identity and its SCTs; [`error`], why the reader refuses.

pub mod certificate;
pub mod error;
pub mod trusted_root;

use error::{IntegerRule, TimeRule, X509Error};

/// The largest certificate read (a Fulcio leaf is about 1–3 KiB).
pub const MAX_CERTIFICATE: usize = 64 * 1024;
/// The most extensions one certificate may carry.
pub const MAX_EXTENSIONS: usize = 64;
/// The most subject alternative names read.
pub const MAX_NAMES: usize = 16;

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const BOOLEAN: u8 = 0x01;
const INTEGER: u8 = 0x02;
const BIT_STRING: u8 = 0x03;
const OCTET_STRING: u8 = 0x04;
const OID: u8 = 0x06;
const UTF8_STRING: u8 = 0x0c;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;
const VERSION_TAG: u8 = 0xa0;
const EXTENSIONS_TAG: u8 = 0xa3;

/// `id-ce-basicConstraints` (2.5.29.19).
pub const OID_BASIC_CONSTRAINTS: &[u8] = &[0x55, 0x1d, 0x13];
/// `id-ce-keyUsage` (2.5.29.15).
pub const OID_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x0f];
/// `id-ce-extKeyUsage` (2.5.29.37).
pub const OID_EXTENDED_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x25];
/// `id-ce-subjectAltName` (2.5.29.17).
pub const OID_SUBJECT_ALT_NAME: &[u8] = &[0x55, 0x1d, 0x11];
/// `id-kp-codeSigning` (1.3.6.1.5.5.7.3.3).
pub const OID_CODE_SIGNING: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x03];
/// Fulcio's OIDC issuer, legacy form (1.3.6.1.4.1.57264.1.1): the raw string as the value.
pub const OID_FULCIO_ISSUER_V1: &[u8] =
    &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x83, 0xbf, 0x30, 0x01, 0x01];
/// Fulcio's OIDC issuer (1.3.6.1.4.1.57264.1.8): a DER `UTF8String`.
pub const OID_FULCIO_ISSUER_V2: &[u8] =
    &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x83, 0xbf, 0x30, 0x01, 0x08];
/// Fulcio's `otherName` SAN type for a username (1.3.6.1.4.1.57264.1.7).
pub const OID_FULCIO_USERNAME: &[u8] =
    &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x83, 0xbf, 0x30, 0x01, 0x07];

/// One DER element: its tag and content.
#[derive(Debug, Clone, Copy)]
struct Element<'a> {
    tag: u8,
    content: &'a [u8],
}

/// Reads DER elements one after another from a slice.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(input: &'a [u8]) -> Reader<'a> {
        Reader { rest: input }
    }

    fn at_end(&self) -> bool {
        self.rest.is_empty()
    }

    fn peek_tag(&self) -> Option<u8> {
        self.rest.first().copied()
    }

    /// The next element (any tag), its length checked against what is left.
    fn any(&mut self) -> Result<Element<'a>, X509Error> {
        let (&tag, after_tag) = self.rest.split_first().ok_or(X509Error::ElementCut)?;
        if tag & 0x1f == 0x1f {
            return Err(X509Error::HighTag);
        }
        let (&first, after_first) = after_tag.split_first().ok_or(X509Error::LengthCut)?;
        let (length, after_length) = if first < 0x80 {
            (usize::from(first), after_first)
        } else {
            let count = usize::from(first & 0x7f);
            if count == 0 || count > 4 {
                return Err(X509Error::LengthForm);
            }
            let bytes = after_first.get(..count).ok_or(X509Error::LengthCut)?;
            if bytes[0] == 0 {
                return Err(X509Error::LengthNotMinimal);
            }
            let length = bytes
                .iter()
                .fold(0usize, |sum, &b| (sum << 8) | usize::from(b));
            if length < 0x80 {
                return Err(X509Error::LengthNotMinimal);
            }
            (length, &after_first[count..])
        };
        if length > after_length.len() {
            return Err(X509Error::PastContainer);
        }
        let (content, rest) = after_length.split_at(length);
        self.rest = rest;
        Ok(Element { tag, content })
    }

    /// The next element, which must have tag `tag`.
    fn expect(&mut self, tag: u8, what: &str) -> Result<&'a [u8], X509Error> {
        let element = self.any()?;
        if element.tag != tag {
            return Err(X509Error::Tag {
                what: what.to_owned(),
                expected: tag,
                found: element.tag,
            });
        }
        Ok(element.content)
    }

    /// The next element if it has tag `tag`.
    fn optional(&mut self, tag: u8) -> Result<Option<&'a [u8]>, X509Error> {
        if self.peek_tag() == Some(tag) {
            Ok(Some(self.any()?.content))
        } else {
            Ok(None)
        }
    }

    /// Nothing may follow.
    fn finish(&self, what: &str) -> Result<(), X509Error> {
        if self.at_end() {
            Ok(())
        } else {
            Err(X509Error::Trailing {
                what: what.to_owned(),
            })
        }
    }
}

/// The content of the single element `input` holds, which must have tag `tag` and nothing after.
fn only(input: &[u8], tag: u8, what: &str) -> Result<Vec<u8>, X509Error> {
    let mut reader = Reader::new(input);
    let content = reader.expect(tag, what)?;
    reader.finish(what)?;
    Ok(content.to_vec())
}

/// One extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extension {
    /// Its OID, DER content bytes.
    pub oid: Vec<u8>,
    /// Whether it is critical.
    pub critical: bool,
    /// Its value (the OCTET STRING's content).
    pub value: Vec<u8>,
}

/// A subject alternative name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AltName {
    /// `rfc822Name`.
    Email(String),
    /// `uniformResourceIdentifier`.
    Uri(String),
    /// `otherName` of this type OID, with this UTF-8 value (if it is a `UTF8String`).
    Other {
        /// The type OID.
        type_oid: Vec<u8>,
        /// The value, if a `UTF8String`.
        value: Option<String>,
    },
    /// Any other kind (DNS name, IP address, directory name, …), by its context tag number.
    Unsupported(u8),
}

/// What a certificate says, read (its names are checked to be well formed, not kept: the
/// chain's names are webpki's to match).
#[derive(Debug, Clone)]
pub struct Certificate {
    /// Not valid before (Unix seconds).
    pub not_before: i64,
    /// Not valid after (Unix seconds).
    pub not_after: i64,
    /// The `SubjectPublicKeyInfo`, DER (the whole element).
    pub spki: Vec<u8>,
    /// The extensions, in order.
    pub extensions: Vec<Extension>,
}

impl Certificate {
    /// Reads a DER certificate; the error says which rule it breaks.
    pub fn parse(der: &[u8]) -> Result<Certificate, X509Error> {
        if der.len() > MAX_CERTIFICATE {
            return Err(X509Error::TooLarge {
                bytes: der.len(),
                max: MAX_CERTIFICATE,
            });
        }
        let mut outer = Reader::new(der);
        let certificate = outer.expect(SEQUENCE, "the certificate")?;
        outer.finish("the certificate")?;
        let mut parts = Reader::new(certificate);
        let tbs = parts.expect(SEQUENCE, "tbsCertificate")?;
        parts.expect(SEQUENCE, "signatureAlgorithm")?;
        parts.expect(BIT_STRING, "signatureValue")?;
        parts.finish("the certificate")?;

        let mut fields = Reader::new(tbs);
        let version = fields.optional(VERSION_TAG)?.ok_or(X509Error::NoVersion)?;
        if only(version, INTEGER, "version")? != [2] {
            return Err(X509Error::NotV3);
        }
        fields.expect(INTEGER, "serialNumber")?;
        fields.expect(SEQUENCE, "signature")?;
        let issuer = fields.expect(SEQUENCE, "issuer")?;
        let validity = fields.expect(SEQUENCE, "validity")?;
        let subject = fields.expect(SEQUENCE, "subject")?;
        let spki_start = fields.rest;
        fields.expect(SEQUENCE, "subjectPublicKeyInfo")?;
        let spki = &spki_start[..spki_start.len() - fields.rest.len()];
        // issuerUniqueID [1] and subjectUniqueID [2] (RFC 5280 forbids them for CAs that conform;
        // read past like every verifier does).
        fields.optional(0x81)?;
        fields.optional(0x82)?;
        let extensions = match fields.optional(EXTENSIONS_TAG)? {
            Some(wrapped) => read_extensions(wrapped)?,
            None => Vec::new(),
        };
        fields.finish("tbsCertificate")?;
        for name in [issuer, subject] {
            check_name(name)?;
        }

        let mut times = Reader::new(validity);
        let not_before = read_time(&mut times, "notBefore")?;
        let not_after = read_time(&mut times, "notAfter")?;
        times.finish("validity")?;

        Ok(Certificate {
            not_before,
            not_after,
            spki: spki.to_vec(),
            extensions,
        })
    }

    /// The extension with OID `oid`, if present.
    pub fn extension(&self, oid: &[u8]) -> Option<&Extension> {
        self.extensions.iter().find(|e| e.oid == oid)
    }

    /// Whether it is valid at `time` (Unix seconds; both ends included).
    pub fn valid_at(&self, time: i64) -> bool {
        self.not_before <= time && time <= self.not_after
    }

    /// `basicConstraints`: (cA, pathLenConstraint), if the extension is present.
    pub fn basic_constraints(&self) -> Result<Option<(bool, Option<u64>)>, X509Error> {
        let Some(extension) = self.extension(OID_BASIC_CONSTRAINTS) else {
            return Ok(None);
        };
        let mut outer = Reader::new(&extension.value);
        let sequence = outer.expect(SEQUENCE, "basicConstraints")?;
        outer.finish("basicConstraints")?;
        let mut fields = Reader::new(sequence);
        let ca = match fields.optional(BOOLEAN)? {
            Some([0xff]) => true,
            Some(_) => {
                return Err(X509Error::CaNotTrue);
            }
            None => false,
        };
        let path_length = match fields.optional(INTEGER)? {
            Some(bytes) => Some(small_unsigned(bytes, "basicConstraints pathLenConstraint")?),
            None => None,
        };
        fields.finish("basicConstraints")?;
        Ok(Some((ca, path_length)))
    }

    /// Whether `keyUsage` is present with the bit `bit` set (0: digitalSignature, 5:
    /// keyCertSign); `None` when the extension is absent.
    pub fn key_usage(&self, bit: u8) -> Result<Option<bool>, X509Error> {
        let Some(extension) = self.extension(OID_KEY_USAGE) else {
            return Ok(None);
        };
        let bits = only(&extension.value, BIT_STRING, "keyUsage")?;
        let (&unused, flags) = bits.split_first().ok_or(X509Error::KeyUsageEmpty)?;
        if unused > 7 || (flags.is_empty() && unused != 0) {
            return Err(X509Error::KeyUsageMalformed);
        }
        let byte = usize::from(bit / 8);
        Ok(Some(
            flags
                .get(byte)
                .is_some_and(|b| b & (0x80 >> (bit % 8)) != 0),
        ))
    }

    /// The `extendedKeyUsage` purposes (OID contents); `None` when the extension is absent.
    pub fn extended_key_usage(&self) -> Result<Option<Vec<Vec<u8>>>, X509Error> {
        let Some(extension) = self.extension(OID_EXTENDED_KEY_USAGE) else {
            return Ok(None);
        };
        let sequence = only(&extension.value, SEQUENCE, "extendedKeyUsage")?;
        let mut reader = Reader::new(&sequence);
        let mut purposes = Vec::new();
        while !reader.at_end() {
            if purposes.len() == MAX_EXTENSIONS {
                return Err(X509Error::TooManyPurposes {
                    max: MAX_EXTENSIONS,
                });
            }
            purposes.push(reader.expect(OID, "extendedKeyUsage purpose")?.to_vec());
        }
        Ok(Some(purposes))
    }

    /// The subject alternative names; empty when the extension is absent.
    pub fn alt_names(&self) -> Result<Vec<AltName>, X509Error> {
        let Some(extension) = self.extension(OID_SUBJECT_ALT_NAME) else {
            return Ok(Vec::new());
        };
        let sequence = only(&extension.value, SEQUENCE, "subjectAltName")?;
        let mut reader = Reader::new(&sequence);
        let mut names = Vec::new();
        while !reader.at_end() {
            if names.len() == MAX_NAMES {
                return Err(X509Error::TooManyNames { max: MAX_NAMES });
            }
            let element = reader.any()?;
            let name = match element.tag {
                // rfc822Name [1] IMPLICIT IA5String
                0x81 => AltName::Email(ia5(element.content, "an rfc822Name")?),
                // uniformResourceIdentifier [6] IMPLICIT IA5String
                0x86 => AltName::Uri(ia5(element.content, "a URI name")?),
                // otherName [0] IMPLICIT SEQUENCE { type-id OID, value [0] EXPLICIT ANY }
                0xa0 => {
                    let mut fields = Reader::new(element.content);
                    let type_oid = fields.expect(OID, "otherName type-id")?.to_vec();
                    let explicit = fields.expect(0xa0, "otherName value")?;
                    fields.finish("otherName")?;
                    let mut inner = Reader::new(explicit);
                    let value = inner.any()?;
                    inner.finish("otherName value")?;
                    let value = (value.tag == UTF8_STRING)
                        .then(|| std::str::from_utf8(value.content).ok().map(str::to_owned))
                        .flatten();
                    AltName::Other { type_oid, value }
                }
                tag => AltName::Unsupported(tag & 0x1f),
            };
            names.push(name);
        }
        Ok(names)
    }
}

fn read_extensions(wrapped: &[u8]) -> Result<Vec<Extension>, X509Error> {
    let list = only(wrapped, SEQUENCE, "extensions")?;
    let mut reader = Reader::new(&list);
    let mut extensions: Vec<Extension> = Vec::new();
    while !reader.at_end() {
        if extensions.len() == MAX_EXTENSIONS {
            return Err(X509Error::TooManyExtensions {
                max: MAX_EXTENSIONS,
            });
        }
        let mut fields = Reader::new(reader.expect(SEQUENCE, "an extension")?);
        let oid = fields.expect(OID, "an extension's extnID")?.to_vec();
        let critical = match fields.optional(BOOLEAN)? {
            Some([0xff]) => true,
            Some(_) => {
                return Err(X509Error::CriticalNotTrue);
            }
            None => false,
        };
        let value = fields
            .expect(OCTET_STRING, "an extension's extnValue")?
            .to_vec();
        fields.finish("an extension")?;
        if extensions.iter().any(|e| e.oid == oid) {
            return Err(X509Error::ExtensionTwice {
                oid: oid_text(&oid),
            });
        }
        extensions.push(Extension {
            oid,
            critical,
            value,
        });
    }
    Ok(extensions)
}

/// The content of `value`, which must be one DER OCTET STRING and nothing after (an extension
/// whose value wraps an OCTET STRING, as the SCT list's does).
pub fn octet_string(value: &[u8], what: &str) -> Result<Vec<u8>, X509Error> {
    only(value, OCTET_STRING, what)
}

/// The DER `tbsCertificate` of the certificate `der` with the one extension of OID `oid`
/// removed, re-encoded: the extensions SEQUENCE, its `[3]` wrapper (left out when no extension
/// remains, as DER's encoders do) and the TBS SEQUENCE get their lengths recomputed; every other
/// byte is the certificate's own. What RFC 6962 §3.2 signs for a precertificate. The certificate
/// must hold that extension exactly once.
pub fn tbs_without_extension(der: &[u8], oid: &[u8]) -> Result<Vec<u8>, X509Error> {
    if der.len() > MAX_CERTIFICATE {
        return Err(X509Error::TooLarge {
            bytes: der.len(),
            max: MAX_CERTIFICATE,
        });
    }
    let mut outer = Reader::new(der);
    let certificate = outer.expect(SEQUENCE, "the certificate")?;
    outer.finish("the certificate")?;
    let tbs = Reader::new(certificate).expect(SEQUENCE, "tbsCertificate")?;
    let mut fields = Reader::new(tbs);
    let mut before_extensions = None;
    let mut kept = Vec::new();
    let mut removed = 0usize;
    while !fields.at_end() {
        let start = tbs.len() - fields.rest.len();
        let element = fields.any()?;
        if element.tag != EXTENSIONS_TAG {
            continue;
        }
        fields.finish("tbsCertificate")?;
        before_extensions = Some(&tbs[..start]);
        let list = only(element.content, SEQUENCE, "extensions")?;
        let mut extensions = Reader::new(&list);
        let mut count = 0usize;
        while !extensions.at_end() {
            count += 1;
            if count > MAX_EXTENSIONS {
                return Err(X509Error::TooManyExtensions {
                    max: MAX_EXTENSIONS,
                });
            }
            let rest_before = extensions.rest;
            let content = extensions.expect(SEQUENCE, "an extension")?;
            let whole = &rest_before[..rest_before.len() - extensions.rest.len()];
            if Reader::new(content).expect(OID, "an extension's extnID")? == oid {
                removed += 1;
            } else {
                kept.extend_from_slice(whole);
            }
        }
    }
    let before_extensions = before_extensions.ok_or(X509Error::NoExtensions)?;
    if removed != 1 {
        return Err(X509Error::ExtensionCount {
            oid: oid_text(oid),
            count: removed,
        });
    }
    let mut content = before_extensions.to_vec();
    if !kept.is_empty() {
        content.extend(der_wrap(EXTENSIONS_TAG, &der_wrap(SEQUENCE, &kept)));
    }
    Ok(der_wrap(SEQUENCE, &content))
}

/// A DER element of tag `tag` around `content`, its length in the minimal form.
fn der_wrap(tag: u8, content: &[u8]) -> Vec<u8> {
    let length = content.len();
    let mut out = vec![tag];
    if length < 0x80 {
        out.push(length as u8);
    } else {
        let bytes = length.to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

/// A `Name` is a SEQUENCE OF SET OF AttributeTypeAndValue: checked to be well formed.
fn check_name(name: &[u8]) -> Result<(), X509Error> {
    let mut sets = Reader::new(name);
    while !sets.at_end() {
        let mut attributes = Reader::new(sets.expect(SET, "a distinguished name's RDN")?);
        while !attributes.at_end() {
            let mut pair = Reader::new(attributes.expect(SEQUENCE, "a name attribute")?);
            pair.expect(OID, "a name attribute's type")?;
            pair.any()?;
            pair.finish("a name attribute")?;
        }
    }
    Ok(())
}

fn ia5(content: &[u8], what: &str) -> Result<String, X509Error> {
    if !content.is_ascii() {
        return Err(X509Error::NotIa5 {
            what: what.to_owned(),
        });
    }
    String::from_utf8(content.to_vec()).map_err(|_| X509Error::NotAscii {
        what: what.to_owned(),
    })
}

/// A non-negative DER INTEGER of at most 8 bytes of value.
fn small_unsigned(bytes: &[u8], what: &str) -> Result<u64, X509Error> {
    let integer = |rule: IntegerRule| X509Error::Integer {
        what: what.to_owned(),
        rule,
    };
    let (&first, _) = bytes
        .split_first()
        .ok_or_else(|| integer(IntegerRule::Empty))?;
    if first & 0x80 != 0 {
        return Err(integer(IntegerRule::Negative));
    }
    let digits = if first == 0 && bytes.len() > 1 {
        &bytes[1..]
    } else {
        bytes
    };
    if digits.len() > 8 {
        return Err(integer(IntegerRule::TooLarge));
    }
    Ok(digits
        .iter()
        .fold(0u64, |sum, &b| (sum << 8) | u64::from(b)))
}

fn read_time(reader: &mut Reader<'_>, what: &str) -> Result<i64, X509Error> {
    let time = |rule: TimeRule| X509Error::Time {
        what: what.to_owned(),
        rule,
    };
    let element = reader.any()?;
    let text = std::str::from_utf8(element.content)
        .ok()
        .filter(|t| t.is_ascii())
        .ok_or_else(|| time(TimeRule::NotAscii))?;
    let (year, rest) = match (element.tag, text.len()) {
        (UTC_TIME, 13) => {
            let yy = digits(&text[..2], what)?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, &text[2..])
        }
        (GENERALIZED_TIME, 15) => (digits(&text[..4], what)?, &text[4..]),
        _ => {
            return Err(time(TimeRule::Form));
        }
    };
    if !rest.ends_with('Z') {
        return Err(time(TimeRule::NotUtc));
    }
    let month = digits(&rest[0..2], what)?;
    let day = digits(&rest[2..4], what)?;
    let hour = digits(&rest[4..6], what)?;
    let minute = digits(&rest[6..8], what)?;
    let second = digits(&rest[8..10], what)?;
    unix_time(year, month, day, hour, minute, second).ok_or_else(|| time(TimeRule::Invalid))
}

fn digits(text: &str, what: &str) -> Result<i64, X509Error> {
    let not_digits = || X509Error::Time {
        what: what.to_owned(),
        rule: TimeRule::NotDigits,
    };
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_digits());
    }
    text.parse().map_err(|_| not_digits())
}

/// Unix seconds of a UTC date and time, if it is a valid one (seconds 0–59).
pub fn unix_time(
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
) -> Option<i64> {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month)
        || day < 1
        || day > month_days[usize::try_from(month - 1).ok()?]
        || !(0..24).contains(&hour)
        || !(0..60).contains(&minute)
        || !(0..60).contains(&second)
    {
        return None;
    }
    // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3600 + minute * 60 + second)
}

/// The dotted form of an OID's DER content (for messages).
pub fn oid_text(oid: &[u8]) -> String {
    let mut arcs: Vec<u64> = Vec::new();
    let mut value: u64 = 0;
    for &byte in oid {
        value = (value << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            if arcs.is_empty() {
                let first = (value / 40).min(2);
                arcs.push(first);
                arcs.push(value - first * 40);
            } else {
                arcs.push(value);
            }
            value = 0;
        }
        if value > u64::MAX >> 8 {
            return "(an OID too long to show)".to_owned();
        }
    }
    arcs.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// The single DER `UTF8String` in `value`.
pub fn utf8_string(value: &[u8]) -> Result<String, X509Error> {
    let content = only(value, UTF8_STRING, "a UTF8String")?;
    String::from_utf8(content).map_err(|_| X509Error::NotUtf8String)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_convert_to_unix_seconds() {
        assert_eq!(unix_time(1970, 1, 1, 0, 0, 0), Some(0));
        assert_eq!(unix_time(2000, 2, 29, 0, 0, 0), Some(951_782_400));
        assert_eq!(unix_time(2026, 12, 31, 0, 0, 0), Some(1_798_675_200));
        assert_eq!(unix_time(2001, 2, 29, 0, 0, 0), None);
        assert_eq!(unix_time(2001, 13, 1, 0, 0, 0), None);
        assert_eq!(unix_time(2001, 1, 1, 24, 0, 0), None);
    }

    #[test]
    fn oids_show_dotted() {
        assert_eq!(oid_text(OID_FULCIO_ISSUER_V2), "1.3.6.1.4.1.57264.1.8");
        assert_eq!(oid_text(OID_CODE_SIGNING), "1.3.6.1.5.5.7.3.3");
        assert_eq!(oid_text(OID_BASIC_CONSTRAINTS), "2.5.29.19");
    }

    #[test]
    fn lengths_are_bounded_and_minimal() {
        // A length that runs past the input.
        assert!(Reader::new(&[0x30, 0x05, 0x00]).any().is_err());
        // Indefinite length.
        assert!(Reader::new(&[0x30, 0x80, 0x00, 0x00]).any().is_err());
        // A long form for a short length.
        assert!(Reader::new(&[0x30, 0x81, 0x01, 0x00]).any().is_err());
        // A leading zero in a long form.
        assert!(Reader::new(&[0x30, 0x82, 0x00, 0x80]).any().is_err());
        // Over four length bytes.
        assert!(Reader::new(&[0x30, 0x85, 1, 0, 0, 0, 0]).any().is_err());
        // A high-number tag.
        assert!(Reader::new(&[0x1f, 0x01, 0x00]).any().is_err());
        assert!(Reader::new(&[0x04, 0x01, 0x07]).any().is_ok());
    }

    #[test]
    fn wrapped_elements_read_back_with_minimal_lengths() {
        for size in [0usize, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x1_0000] {
            let content = vec![0x5a; size];
            let wrapped = der_wrap(SEQUENCE, &content);
            let mut reader = Reader::new(&wrapped);
            assert_eq!(reader.expect(SEQUENCE, "it").unwrap(), content.as_slice());
            assert!(reader.at_end(), "{size}");
        }
    }

    #[test]
    fn removing_an_extension_keeps_every_other_byte() {
        // tbsCertificate: version, serial, [3] { SEQUENCE { ext A, ext B } }.
        let extension = |oid: u8, value: &[u8]| {
            let mut body = der_wrap(OID, &[oid]);
            body.extend(der_wrap(OCTET_STRING, value));
            der_wrap(SEQUENCE, &body)
        };
        let (a, b) = (extension(1, &[0xaa; 200]), extension(2, &[0xbb]));
        let head = [
            der_wrap(VERSION_TAG, &der_wrap(INTEGER, &[2])),
            der_wrap(INTEGER, &[7]),
        ]
        .concat();
        let tbs_of = |extensions: &[u8]| {
            let mut content = head.clone();
            if !extensions.is_empty() {
                content.extend(der_wrap(EXTENSIONS_TAG, &der_wrap(SEQUENCE, extensions)));
            }
            der_wrap(SEQUENCE, &content)
        };
        let certificate_of = |tbs: Vec<u8>| der_wrap(SEQUENCE, &tbs);
        let both = certificate_of(tbs_of(&[a.clone(), b.clone()].concat()));
        assert_eq!(tbs_without_extension(&both, &[1]).unwrap(), tbs_of(&b));
        assert_eq!(tbs_without_extension(&both, &[2]).unwrap(), tbs_of(&a));
        // The last one removed: no empty [3] left behind.
        let one = certificate_of(tbs_of(&b));
        assert_eq!(tbs_without_extension(&one, &[2]).unwrap(), tbs_of(&[]));
        // Absent, twice, or no extensions at all: refused.
        assert!(matches!(
            tbs_without_extension(&both, &[3]).unwrap_err(),
            X509Error::ExtensionCount { count: 0, .. }
        ));
        let twice = certificate_of(tbs_of(&[b.clone(), b.clone()].concat()));
        assert!(matches!(
            tbs_without_extension(&twice, &[2]).unwrap_err(),
            X509Error::ExtensionCount { count: 2, .. }
        ));
        let none = certificate_of(tbs_of(&[]));
        assert_eq!(
            tbs_without_extension(&none, &[2]).unwrap_err(),
            X509Error::NoExtensions
        );
        // Something after the extensions, or not a certificate.
        let mut after = tbs_of(&b)[..].to_vec();
        after = [after[2..].to_vec(), der_wrap(INTEGER, &[1])].concat();
        assert!(tbs_without_extension(&certificate_of(der_wrap(SEQUENCE, &after)), &[2]).is_err());
        assert!(tbs_without_extension(b"junk", &[2]).is_err());
    }

    #[test]
    fn not_a_certificate_is_refused() {
        for input in [
            &b""[..],
            b"\x30\x00",
            b"not DER at all",
            &[0x30, 0x03, 0x30, 0x01, 0x00],
        ] {
            assert!(Certificate::parse(input).is_err(), "{input:?}");
        }
        assert_eq!(
            Certificate::parse(&vec![0u8; MAX_CERTIFICATE + 1]).unwrap_err(),
            X509Error::TooLarge {
                bytes: MAX_CERTIFICATE + 1,
                max: MAX_CERTIFICATE
            }
        );
    }
}
