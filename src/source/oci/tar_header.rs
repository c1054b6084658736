//! The tar headers of a layer that came from a registry, read as every reader reads them or
//! refused (the rules are listed in [`super::unpack`]'s documentation): one 512-byte header
//! block checked (`check_header`: magic, checksum, NUL-terminated text fields, plain octal
//! numbers), the path it names, the records of a PAX extended header, the path grammar of an
//! entry, and the padding after an entry's data.

use std::collections::BTreeSet;

use super::code::DistributionCode;
use super::layer_error::{LayerError, malformed, refuse};

/// A tar block: a header, or a unit of an entry's data.
pub(super) const BLOCK: usize = 512;

/// The records of a PAX extended header that this reader applies to the entry that follows.
pub(super) struct Pax {
    /// Where its header is.
    pub(super) at: u64,
    /// The `path` record.
    pub(super) path: Option<String>,
    /// The `size` record.
    pub(super) size: Option<u64>,
}

/// The zero bytes after `size` bytes of data, to the next block.
pub(super) fn padding(size: u64) -> u64 {
    (BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64
}

/// The path of an entry, relative, without a trailing `/` or one leading `./`; refused when it is
/// absolute or holds an empty, `.` or `..` segment.
pub(super) fn checked_path(raw: &str, shown: &str) -> Result<String, LayerError> {
    if raw.starts_with('/') {
        return Err(refuse(
            DistributionCode::UnsafePathInLayer,
            format!("`{shown}` is an absolute path"),
        ));
    }
    let trimmed = raw.strip_prefix("./").unwrap_or(raw);
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    if trimmed.is_empty()
        || trimmed
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Err(refuse(
            DistributionCode::UnsafePathInLayer,
            format!("`{shown}` has an empty, `.` or `..` segment"),
        ));
    }
    Ok(trimmed.to_owned())
}

/// The POSIX ustar magic and version.
pub(super) const USTAR: &[u8; 8] = b"ustar\x0000";
/// The GNU tar magic and version.
pub(super) const GNU: &[u8; 8] = b"ustar  \0";

/// Checks what every reader must read alike in a header (see the module documentation) and
/// returns its size field.
pub(super) fn check_header(header: &[u8; BLOCK], at: u64) -> Result<u64, LayerError> {
    check_checksum(header, at)?;
    let bad = |what: &str| malformed(format!("entry at byte {at}: {what}"));
    match &header[257..265] {
        magic if magic == USTAR => {}
        magic if magic == GNU => {
            if header[345..500].iter().any(|&b| b != 0) {
                return Err(bad(
                    "a GNU header with data where ustar keeps a name prefix (readers disagree \
                     whether it is part of the name)",
                ));
            }
        }
        _ => return Err(bad("neither a POSIX ustar nor a GNU tar header")),
    }
    for (range, field) in [
        (0..100, "name"),
        (157..257, "link name"),
        (265..297, "user name"),
        (297..329, "group name"),
        (345..500, "name prefix"),
    ] {
        let bytes = &header[range];
        if let Some(nul) = bytes.iter().position(|&b| b == 0)
            && bytes[nul..].iter().any(|&b| b != 0)
        {
            return Err(bad(&format!("a {field} field with bytes after its NUL")));
        }
    }
    for (range, field) in [
        (100..108, "mode"),
        (108..116, "owner"),
        (116..124, "group"),
        (136..148, "time"),
        (329..337, "device major"),
        (337..345, "device minor"),
    ] {
        let bytes = &header[range];
        if !bytes.iter().all(|&b| b == 0) && octal(bytes).is_none() {
            return Err(bad(&format!("a {field} field that is not octal digits")));
        }
    }
    octal(&header[124..136]).ok_or_else(|| bad("a bad size field"))
}

/// Whether the (checked) `header` gives its entry an execute bit: the image digest pins the
/// mode as it pins the bytes.
pub(super) fn executable(header: &[u8; BLOCK]) -> bool {
    octal(&header[100..108]).is_some_and(|mode| mode & 0o111 != 0)
}

fn check_checksum(header: &[u8], at: u64) -> Result<(), LayerError> {
    let stored = octal(&header[148..156]);
    let sum: u64 = header
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                u64::from(b' ')
            } else {
                u64::from(b)
            }
        })
        .sum();
    if stored != Some(sum) {
        return Err(malformed(format!(
            "entry at byte {at}: a bad header checksum"
        )));
    }
    Ok(())
}

/// An octal field: optional leading spaces, octal digits, then only NULs and spaces. Anything
/// else (base-256, a sign, a leading NUL, which Python's `tarfile` reads as an empty field and Go
/// skips) is `None`.
fn octal(field: &[u8]) -> Option<u64> {
    let start = field.iter().position(|&b| b != b' ')?;
    let digits = &field[start..];
    let end = digits
        .iter()
        .position(|&b| b == 0 || b == b' ')
        .unwrap_or(digits.len());
    let (digits, rest) = digits.split_at(end);
    if digits.is_empty()
        || !digits.iter().all(|b| (b'0'..=b'7').contains(b))
        || !rest.iter().all(|&b| b == 0 || b == b' ')
    {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(digits).ok()?, 8).ok()
}

/// The header's path: `prefix/name` (the prefix of a POSIX ustar header only), UTF-8.
pub(super) fn header_path(header: &[u8], at: u64) -> Result<String, LayerError> {
    let field = |range: std::ops::Range<usize>| {
        let bytes = &header[range];
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        std::str::from_utf8(&bytes[..end])
            .map(str::to_owned)
            .map_err(|_| malformed(format!("entry at byte {at}: a path that is not UTF-8")))
    };
    let name = field(0..100)?;
    let prefix = if &header[257..265] == USTAR {
        field(345..500)?
    } else {
        String::new()
    };
    Ok(if prefix.is_empty() {
        name
    } else {
        format!("{prefix}/{name}")
    })
}

/// The records of a PAX extended header: `path` and `size` are applied, the times, owners and
/// extended attributes ignored; a `linkpath` or a sparse file refuses the layer, as does any other
/// record, a record twice or a NUL in one.
pub(super) fn pax(data: &[u8], at: u64) -> Result<Pax, LayerError> {
    let bad = |why: &str| malformed(format!("entry at byte {at}: a malformed PAX header: {why}"));
    let mut rest = data;
    let mut found = Pax {
        at,
        path: None,
        size: None,
    };
    let mut keys = BTreeSet::new();
    while !rest.is_empty() {
        let space = rest
            .iter()
            .position(|&b| b == b' ')
            .ok_or_else(|| bad("a record without a length"))?;
        let digits = &rest[..space];
        let len: usize = (!digits.is_empty() && digits.iter().all(u8::is_ascii_digit))
            .then(|| std::str::from_utf8(digits).ok()?.parse().ok())
            .flatten()
            .ok_or_else(|| bad("a record length that is not decimal digits"))?;
        if len <= space + 1 || len > rest.len() || rest[len - 1] != b'\n' {
            return Err(bad("a record length that does not end at a newline"));
        }
        let record = &rest[space + 1..len - 1];
        if record.contains(&0) {
            return Err(bad("a NUL in a record"));
        }
        let record = std::str::from_utf8(record).map_err(|_| bad("a record that is not UTF-8"))?;
        let (key, value) = record
            .split_once('=')
            .ok_or_else(|| bad("a record without `=`"))?;
        if !keys.insert(key.to_owned()) {
            return Err(bad(&format!(
                "the record `{}` twice",
                crate::support::escape::text(key)
            )));
        }
        match key {
            "path" => found.path = Some(value.to_owned()),
            "size" => {
                found.size = Some(
                    (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()))
                        .then(|| value.parse().ok())
                        .flatten()
                        .ok_or_else(|| bad("a size that is not decimal digits"))?,
                );
            }
            "linkpath" => {
                return Err(refuse(
                    DistributionCode::LinkInLayer,
                    format!("entry at byte {at}: a PAX link target"),
                ));
            }
            k if k.starts_with("GNU.sparse") => {
                return Err(refuse(
                    DistributionCode::SpecialFileInLayer,
                    format!("entry at byte {at}: a sparse file"),
                ));
            }
            "mtime" | "atime" | "ctime" | "uid" | "gid" | "uname" | "gname" => {}
            k if k.starts_with("SCHILY.xattr.") || k.starts_with("LIBARCHIVE.xattr.") => {}
            other => {
                return Err(bad(&format!(
                    "the record `{}`, which this reader does not take (other readers may apply \
                     it)",
                    crate::support::escape::text(other)
                )));
            }
        }
        rest = &rest[len..];
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_fields_are_plain_octal_digits() {
        assert_eq!(octal(b"00000000012\0"), Some(10));
        assert_eq!(octal(b"12 \0"), Some(10));
        assert_eq!(octal(b"  12\0"), Some(10));
        for bad in [
            &b"+0000000012"[..],
            b"0000000009\0",
            b"\0\0\0",
            b"-1",
            b"0x10",
            // Python's `tarfile` reads a field that starts with NUL as empty (0), Go skips it.
            b"\x0012\0",
            b"12\x007",
            b"\x80\0\0\x05",
        ] {
            assert_eq!(octal(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
