//! Reading an image layer that came from a registry — hostile input — into the file sets of the
//! bundles it holds, under the rules Git trees get. The gzip stream is inflated with a bound on
//! the tar's size (a small layer cannot inflate into a tar bomb); every header's checksum, size
//! and type is checked; only directories and regular files are admitted: a symbolic or hard link,
//! a device, a FIFO, any other entry type, an absolute path, a `.` or `..` segment, and the same
//! path twice or in two spellings that differ only in case refuse the whole layer, wherever they
//! are — not only inside the bundles being taken. Entries are `<name>/<path>`; the files of the
//! wanted bundles go through [`FileSetBuilder`] (the path grammar and the bounds of the source's
//! limits profile, a file over its bound never read into memory), the rest is only checked.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

use crate::format::file_set::{FileSet, FileSetBuilder};
use crate::format::limits::{self, Limits};
use crate::format::problem::Problems;

use super::code::DistributionCode;

const BLOCK: usize = 512;

/// The largest tar a layer may inflate to: the largest bundle the hard ceiling admits, plus a
/// header and a PAX record block for each entry it may hold, plus the end blocks (128 MiB).
pub const MAX_LAYER_TAR_BYTES: u64 = limits::CEILING.bundle_bytes()
    + (limits::CEILING.entries() as u64) * 2 * BLOCK as u64
    + 2 * BLOCK as u64;

/// Why a layer is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LayerError {
    /// The stable code.
    pub code: DistributionCode,
    /// What is wrong, naming the entry (escaped).
    pub message: String,
}

fn refuse(code: DistributionCode, message: impl Into<String>) -> LayerError {
    LayerError {
        code,
        message: message.into(),
    }
}

/// The bundles of one layer: each wanted name found, with its files and the problems the rules
/// found in them.
pub type Bundles = BTreeMap<String, (FileSet, Problems)>;

/// Reads the gzip-compressed tar `layer`, keeping the bundles named in `wanted`.
pub fn unpack(
    layer: impl Read,
    wanted: &BTreeSet<String>,
    limits: Limits,
) -> Result<Bundles, LayerError> {
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(layer)
        .take(MAX_LAYER_TAR_BYTES + 1)
        .read_to_end(&mut tar)
        .map_err(|e| {
            refuse(
                DistributionCode::MalformedLayer,
                format!("not a gzip stream: {e}"),
            )
        })?;
    if tar.len() as u64 > MAX_LAYER_TAR_BYTES {
        return Err(refuse(
            DistributionCode::LayerTooLarge,
            format!("the layer inflates to more than {MAX_LAYER_TAR_BYTES} bytes"),
        ));
    }
    read_tar(&tar, wanted, limits)
}

/// The entries of an uncompressed tar, checked; see the module documentation.
pub fn read_tar(
    tar: &[u8],
    wanted: &BTreeSet<String>,
    limits: Limits,
) -> Result<Bundles, LayerError> {
    let mut builders: BTreeMap<String, FileSetBuilder> = BTreeMap::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut folded: BTreeMap<String, String> = BTreeMap::new();
    let mut at = 0usize;
    let mut pax_path: Option<String> = None;
    let mut pax_size: Option<u64> = None;
    loop {
        let Some(header) = tar.get(at..at + BLOCK) else {
            return Err(refuse(
                DistributionCode::MalformedLayer,
                "the tar ends without its end blocks",
            ));
        };
        if header.iter().all(|&b| b == 0) {
            break;
        }
        check_checksum(header, at)?;
        let kind = header[156];
        let declared = match pax_size.take() {
            Some(size) => size,
            None => octal(&header[124..136]).ok_or_else(|| {
                refuse(
                    DistributionCode::MalformedLayer,
                    format!("entry at byte {at}: a bad size field"),
                )
            })?,
        };
        let data_start = at + BLOCK;
        let data_end = usize::try_from(declared)
            .ok()
            .and_then(|n| data_start.checked_add(n))
            .filter(|&end| end <= tar.len())
            .ok_or_else(|| {
                refuse(
                    DistributionCode::MalformedLayer,
                    format!("entry at byte {at}: its data runs past the end"),
                )
            })?;
        let next = data_end.div_ceil(BLOCK) * BLOCK;
        let data = &tar[data_start..data_end];
        if kind == b'x' {
            (pax_path, pax_size) = pax(data, at)?;
            at = next;
            continue;
        }
        let raw = match pax_path.take() {
            Some(path) => path,
            None => header_path(header, at)?,
        };
        let shown = crate::format::escape::text(&raw).to_string();
        match kind {
            b'0' | 0 | b'5' => {}
            b'1' | b'2' => {
                return Err(refuse(
                    DistributionCode::LinkInLayer,
                    format!(
                        "`{shown}` is a {} link; links are never unpacked",
                        if kind == b'1' { "hard" } else { "symbolic" }
                    ),
                ));
            }
            b'3' | b'4' | b'6' => {
                return Err(refuse(
                    DistributionCode::SpecialFileInLayer,
                    format!(
                        "`{shown}` is a device or FIFO; only files and directories are unpacked"
                    ),
                ));
            }
            other => {
                return Err(refuse(
                    DistributionCode::SpecialFileInLayer,
                    format!(
                        "`{shown}` has entry type {:?}; only files and directories are unpacked",
                        other as char
                    ),
                ));
            }
        }
        let path = checked_path(&raw, &shown)?;
        let is_dir = kind == b'5';
        if !seen.insert(path.clone()) {
            return Err(refuse(
                DistributionCode::DuplicateInLayer,
                format!("`{shown}` appears twice"),
            ));
        }
        if let Some(other) = folded.insert(path.to_lowercase(), path.clone()) {
            return Err(refuse(
                DistributionCode::DuplicateInLayer,
                format!(
                    "`{shown}` and `{}` differ only in case",
                    crate::format::escape::text(&other)
                ),
            ));
        }
        if let Some((bundle, rest)) = path.split_once('/')
            && wanted.contains(bundle)
        {
            let builder = builders
                .entry(bundle.to_owned())
                .or_insert_with(|| FileSetBuilder::with_limits(limits));
            if is_dir {
                builder.count_entry();
            } else if declared > builder.limits().max_file_bytes(rest) {
                builder.insert_oversized(rest, declared);
            } else {
                builder.insert(rest, data.to_vec());
            }
        } else if !path.contains('/') && !is_dir {
            return Err(refuse(
                DistributionCode::UnsafePathInLayer,
                format!("`{shown}` is a file outside any bundle folder"),
            ));
        }
        at = next;
    }
    Ok(builders
        .into_iter()
        .map(|(name, builder)| (name, builder.finish()))
        .collect())
}

/// The path of an entry, relative, without a trailing `/` or one leading `./`; refused when it is
/// absolute or holds an empty, `.` or `..` segment.
fn checked_path(raw: &str, shown: &str) -> Result<String, LayerError> {
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

fn check_checksum(header: &[u8], at: usize) -> Result<(), LayerError> {
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
        return Err(refuse(
            DistributionCode::MalformedLayer,
            format!("entry at byte {at}: a bad header checksum"),
        ));
    }
    Ok(())
}

/// A NUL- or space-terminated octal field.
fn octal(field: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(field).ok()?;
    let digits = text.trim_matches(|c: char| c == '\0' || c == ' ');
    if digits.is_empty() || !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return None;
    }
    u64::from_str_radix(digits, 8).ok()
}

/// The ustar path: `prefix/name`, UTF-8.
fn header_path(header: &[u8], at: usize) -> Result<String, LayerError> {
    let field = |range: std::ops::Range<usize>| {
        let bytes = &header[range];
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        std::str::from_utf8(&bytes[..end])
            .map(str::to_owned)
            .map_err(|_| {
                refuse(
                    DistributionCode::MalformedLayer,
                    format!("entry at byte {at}: a path that is not UTF-8"),
                )
            })
    };
    let name = field(0..100)?;
    let prefix = if &header[257..263] == b"ustar\0" {
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

/// The `path` and `size` records of a PAX extended header; a `linkpath` or a sparse file refuses
/// the layer, other records are ignored.
fn pax(data: &[u8], at: usize) -> Result<(Option<String>, Option<u64>), LayerError> {
    let bad = || {
        refuse(
            DistributionCode::MalformedLayer,
            format!("entry at byte {at}: a malformed PAX header"),
        )
    };
    let mut rest = data;
    let (mut path, mut size) = (None, None);
    while !rest.is_empty() {
        let space = rest.iter().position(|&b| b == b' ').ok_or_else(bad)?;
        let len: usize = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)?;
        if len <= space + 1 || len > rest.len() || rest[len - 1] != b'\n' {
            return Err(bad());
        }
        let record = std::str::from_utf8(&rest[space + 1..len - 1]).map_err(|_| bad())?;
        let (key, value) = record.split_once('=').ok_or_else(bad)?;
        match key {
            "path" => path = Some(value.to_owned()),
            "size" => size = Some(value.parse().map_err(|_| bad())?),
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
            _ => {}
        }
        rest = &rest[len..];
    }
    Ok((path, size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prepare::oci::tar::{TarFile, archive};

    /// A raw ustar entry of `kind` (for entries our writer never makes).
    fn raw(path: &str, kind: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out =
            crate::prepare::oci::tar::ustar_header(path, "", kind, 0o644, bytes.len() as u64)
                .to_vec();
        out.extend_from_slice(bytes);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
        out
    }

    fn layer_with(extra: Vec<u8>) -> Vec<u8> {
        let good = archive(&[TarFile {
            path: "pdf/SKILL.md".into(),
            bytes: b"---\nname: pdf\ndescription: d\n---\n",
        }]);
        let mut tar = good[..good.len() - 2 * BLOCK].to_vec();
        tar.extend(extra);
        tar.resize(tar.len() + 2 * BLOCK, 0);
        tar
    }

    fn wanted() -> BTreeSet<String> {
        ["pdf".to_owned()].into()
    }

    fn code(tar: &[u8]) -> DistributionCode {
        read_tar(tar, &wanted(), limits::CHAMVI)
            .expect_err("refused")
            .code
    }

    #[test]
    fn our_own_layers_read_back_to_the_bundles_they_hold() {
        let files = [
            TarFile {
                path: "pdf/SKILL.md".into(),
                bytes: b"---\nname: pdf\ndescription: d\n---\n",
            },
            TarFile {
                path: format!("pdf/{}/deep.md", "d".repeat(180)),
                bytes: b"deep\n",
            },
            TarFile {
                path: "docx/SKILL.md".into(),
                bytes: b"---\nname: docx\ndescription: d\n---\n",
            },
        ];
        let tar = archive(&files);
        let bundles = read_tar(&tar, &wanted(), limits::CHAMVI).expect("read");
        assert_eq!(bundles.keys().collect::<Vec<_>>(), ["pdf"]);
        let (set, problems) = &bundles["pdf"];
        assert!(!problems.has_errors(), "{problems:?}");
        assert_eq!(set.len(), 2);
        assert_eq!(
            set.get(&format!("{}/deep.md", "d".repeat(180))),
            Some(&b"deep\n"[..])
        );
    }

    #[test]
    fn links_devices_fifos_and_other_entry_types_refuse_the_layer_wherever_they_are() {
        assert_eq!(
            code(&layer_with(raw("other/link", b'2', b""))),
            DistributionCode::LinkInLayer
        );
        assert_eq!(
            code(&layer_with(raw("pdf/hard", b'1', b""))),
            DistributionCode::LinkInLayer
        );
        for kind in [b'3', b'4', b'6', b'7', b'L', b'g'] {
            assert_eq!(
                code(&layer_with(raw("pdf/dev", kind, b""))),
                DistributionCode::SpecialFileInLayer,
                "{}",
                kind as char
            );
        }
        let pax_link = b"24 linkpath=/etc/passwd\n";
        assert_eq!(
            code(&layer_with(raw("x", b'x', pax_link))),
            DistributionCode::LinkInLayer
        );
    }

    #[test]
    fn unsafe_paths_and_duplicates_refuse_the_layer() {
        for path in ["/etc/passwd", "pdf/../../x", "pdf/./x", "../x", "pdf//x"] {
            assert_eq!(
                code(&layer_with(raw(path, b'0', b"x"))),
                DistributionCode::UnsafePathInLayer,
                "{path}"
            );
        }
        assert_eq!(
            code(&layer_with(raw("stray.md", b'0', b"x"))),
            DistributionCode::UnsafePathInLayer
        );
        assert_eq!(
            code(&layer_with(raw("pdf/SKILL.md", b'0', b"again"))),
            DistributionCode::DuplicateInLayer
        );
        assert_eq!(
            code(&layer_with(raw("pdf/skill.md", b'0', b"case"))),
            DistributionCode::DuplicateInLayer
        );
        // A leading `./` is how many tools write paths: accepted.
        assert!(
            read_tar(
                &layer_with(raw("./pdf/notes.md", b'0', b"n\n")),
                &wanted(),
                limits::CHAMVI
            )
            .is_ok()
        );
    }

    #[test]
    fn malformed_headers_and_truncation_refuse_the_layer() {
        let mut bad_sum = layer_with(raw("pdf/a.md", b'0', b"a"));
        bad_sum[BLOCK * 3 + 148] ^= 1;
        assert_eq!(code(&bad_sum), DistributionCode::MalformedLayer);
        let good = layer_with(Vec::new());
        assert_eq!(
            code(&good[..good.len() - BLOCK * 2]),
            DistributionCode::MalformedLayer
        );
        let mut runs_past = raw("pdf/a.md", b'0', b"a");
        runs_past.truncate(BLOCK);
        let mut tar = layer_with(Vec::new());
        tar.truncate(tar.len() - 2 * BLOCK);
        tar.extend(runs_past);
        assert_eq!(code(&tar), DistributionCode::MalformedLayer);
        assert_eq!(
            unpack(&b"not gzip"[..], &wanted(), limits::CHAMVI)
                .expect_err("refused")
                .code,
            DistributionCode::MalformedLayer
        );
    }

    #[test]
    fn a_layer_that_inflates_past_the_bound_is_refused_without_inflating_it_all() {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..=(MAX_LAYER_TAR_BYTES >> 20) {
            gz.write_all(&zeros).unwrap();
        }
        let bomb = gz.finish().unwrap();
        assert!(bomb.len() < 1 << 20, "{} compressed bytes", bomb.len());
        let refused = unpack(bomb.as_slice(), &wanted(), limits::CHAMVI).expect_err("refused");
        assert_eq!(refused.code, DistributionCode::LayerTooLarge);
    }

    #[test]
    fn a_ustar_prefix_is_joined_to_the_name() {
        // 4 + 120 bytes of prefix, then the name: the writer splits it at the slash.
        let path = format!("pdf/{}/deep.md", "d".repeat(120));
        let files = [
            TarFile {
                path: "pdf/SKILL.md".into(),
                bytes: b"---\nname: pdf\ndescription: d\n---\n",
            },
            TarFile {
                path: path.clone(),
                bytes: b"deep\n",
            },
        ];
        let tar = archive(&files);
        assert!(
            tar.chunks(BLOCK)
                .any(|block| block.starts_with(b"deep.md\0")),
            "the file's header holds the name, its prefix the folders"
        );
        let bundles = read_tar(&tar, &wanted(), limits::CHAMVI).expect("read");
        assert_eq!(
            bundles["pdf"].0.get(&path["pdf/".len()..]),
            Some(&b"deep\n"[..])
        );
    }

    #[test]
    fn size_fields_are_plain_octal_digits() {
        assert_eq!(octal(b"00000000012\0"), Some(10));
        assert_eq!(octal(b"12 \0"), Some(10));
        for bad in [
            &b"+0000000012"[..],
            b"0000000009\0",
            b"\0\0\0",
            b"-1",
            b"0x10",
        ] {
            assert_eq!(octal(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_file_over_its_bound_is_refused_by_the_bundle_rules_without_being_kept() {
        let big = vec![b'a'; 200 * 1024];
        let tar = layer_with(raw("pdf/references/big.md", b'0', &big));
        let bundles = read_tar(&tar, &wanted(), limits::CHAMVI).expect("read");
        let (set, problems) = &bundles["pdf"];
        assert!(problems.has_errors());
        assert!(set.get("references/big.md").is_none());
    }
}
