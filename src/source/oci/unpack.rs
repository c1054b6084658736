//! Reading an image layer that came from a registry — hostile input — into the file sets of the
//! bundles it holds, under the rules Git trees get. The layer is read as a stream, one entry at a
//! time: the gzip stream is inflated no further than a bound on the tar's size (a small layer
//! cannot inflate into a tar bomb), the files of bundles not wanted are checked and skipped without
//! being held, and a wanted file's bound is checked before its bytes are read.
//!
//! Only directories and regular files are admitted: a symbolic or hard link, a device, a FIFO, any
//! other entry type, an absolute path, a `.` or `..` segment, and the same path twice or in two
//! spellings that differ only in case refuse the whole layer, wherever they are — not only inside
//! the bundles being taken. Entries are `<name>/<path>`; the files of the wanted bundles go through
//! [`FileSetBuilder`] (the path grammar and the bounds of the source's limits profile, a file over
//! its bound never read into memory), the rest is only checked. A file whose mode has an execute
//! bit is marked executable (the image digest pins its mode as it pins its bytes); no other mode
//! bit is kept.
//!
//! What is published is what this reader saw, and a container runtime mounting the same image (Go's
//! `archive/tar`), GNU tar or Python's `tarfile` must see the same entries. So every header whose
//! reading differs between readers refuses the layer (`malformed_layer`), wherever it is:
//!
//! - a header that is neither POSIX ustar (`ustar\0` `00`) nor GNU (`ustar  \0`), or a GNU header
//!   with bytes where ustar keeps its name prefix (Python joins them to the name, Go does not);
//! - a name, prefix, link, user or group field with bytes after its terminating NUL, a link name
//!   on a file or a directory;
//! - a numeric field that is not plain octal digits (base-256, signs, a leading NUL: readers
//!   differ on all of them), a bad checksum;
//! - a directory whose size field is not zero (some readers skip its data, others read it as the
//!   next headers), a regular file whose name ends in `/` (old readers take it for a directory and
//!   read its data as headers);
//! - a PAX header followed by another PAX header, a global header or the end of the archive
//!   (readers disagree which entry its records apply to), a record other than `path`, `size`, the
//!   times, owners and extended attributes, a record twice, a NUL in a record, a `size` record that
//!   differs from the header's size field, a PAX header over [`MAX_PAX_BYTES`];
//! - GNU long names (`L`, `K`) and every other extension entry type (refused as special entries);
//! - a lone end block followed by anything, or any non-zero byte after the end blocks (readers
//!   that ignore zero blocks would find entries there);
//! - bytes after the end of the gzip stream: a second gzip member (which `gzip -d` and Go read on)
//!   or trailing data.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Read};

use crate::format::file_set::{FileSet, FileSetBuilder};
use crate::format::limits::{self, Limits};
use crate::format::problem::Problems;

use super::code::DistributionCode;
use super::layer_error::{LayerError, malformed, refuse};
use super::tar_header::{
    BLOCK, Pax, check_header, checked_path, executable, header_path, padding, pax,
};

/// The largest tar a layer may inflate to: the largest bundle the hard ceiling admits, plus a
/// header and a PAX record block for each entry it may hold, plus the end blocks (128 MiB).
pub const MAX_LAYER_TAR_BYTES: u64 = limits::CEILING.bundle_bytes()
    + (limits::CEILING.entries() as u64) * 2 * BLOCK as u64
    + 2 * BLOCK as u64;

/// The largest PAX extended header read (its records are held in memory).
pub const MAX_PAX_BYTES: u64 = 64 * 1024;

/// The bundles of one layer: each wanted name found, with its files and the problems the rules
/// found in them.
pub type Bundles = BTreeMap<String, (FileSet, Problems)>;

/// [`unpack_offering`] without the names (what the tests and the fuzz targets read).
#[cfg(any(test, fuzzing))]
pub fn unpack(
    layer: impl Read,
    wanted: &BTreeSet<String>,
    limits: Limits,
) -> Result<Bundles, LayerError> {
    unpack_offering(layer, wanted, limits).map(|(bundles, _)| bundles)
}

/// Reads the gzip-compressed tar `layer` as a stream, keeping the bundles named in `wanted`, and
/// returns them with the names of every folder of the layer that holds a `SKILL.md` file, kept
/// or not (the bundles the layer offers; their files are read past, never held). The layer
/// must be one gzip member and nothing after it.
///
/// A read error of `layer` itself refuses with the [`LayerError`] it carries (when the reader
/// wraps one with [`std::io::Error::other`]), or else as `registry_unavailable` (retryable): the
/// bytes did not arrive, which says nothing about the layer.
pub fn unpack_offering(
    layer: impl Read,
    wanted: &BTreeSet<String>,
    limits: Limits,
) -> Result<(Bundles, BTreeSet<String>), LayerError> {
    let mut offered = BTreeSet::new();
    let bundles = unpack_matching(layer, &|name| wanted.contains(name), limits, &mut |name| {
        offered.insert(name.to_owned());
    })?;
    Ok((bundles, offered))
}

/// Reads `layer` as [`unpack_offering`] does, keeping the bundles `wanted` keeps and telling `offers` the
/// folder of each `SKILL.md` file it meets.
fn unpack_matching(
    layer: impl Read,
    wanted: &dyn Fn(&str) -> bool,
    limits: Limits,
    offers: &mut dyn FnMut(&str),
) -> Result<Bundles, LayerError> {
    let mut compressed = std::io::BufReader::new(LayerReader(layer));
    let bundles = read_tar_matching(
        flate2::bufread::GzDecoder::new(&mut compressed),
        wanted,
        limits,
        offers,
    )?;
    // `read_tar` read the inflated stream to its end, so the gzip member and its checksum are
    // behind us: what the buffer or the layer still holds comes after it.
    match compressed.fill_buf() {
        Ok([]) => Ok(bundles),
        Ok(_) => Err(malformed(
            "bytes follow the end of the gzip stream (a second gzip member or trailing data)",
        )),
        Err(e) => Err(io_refusal(e, "the layer ends early")),
    }
}

/// The layer's own reader, its errors marked as not the layer's fault.
struct LayerReader<R>(R);

/// A read error of the layer's reader, as opposed to an error found in its bytes.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct LayerReadError(std::io::Error);

impl<R: Read> Read for LayerReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::Interrupted {
                e
            } else {
                std::io::Error::other(LayerReadError(e))
            }
        })
    }
}

/// The refusal for a read error met while reading `what`.
fn io_refusal(e: std::io::Error, what: &str) -> LayerError {
    if e.get_ref()
        .is_some_and(|inner| inner.is::<LayerReadError>())
    {
        let inner = e
            .into_inner()
            .and_then(|inner| inner.downcast::<LayerReadError>().ok())
            .map(|source| source.0)
            .expect("checked above");
        if let Some(layer) = inner.get_ref().and_then(|i| i.downcast_ref::<LayerError>()) {
            return layer.clone();
        }
        return refuse(
            DistributionCode::RegistryUnavailable,
            format!("reading the layer failed: {inner}"),
        );
    }
    if let Some(layer) = e.get_ref().and_then(|i| i.downcast_ref::<LayerError>()) {
        return layer.clone();
    }
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        return malformed(what);
    }
    malformed(format!("not a valid gzip stream: {e}"))
}

/// The inflated tar, read forward, never past [`MAX_LAYER_TAR_BYTES`].
struct Stream<R> {
    inner: R,
    /// Bytes read so far: the offset of what comes next.
    at: u64,
}

impl<R: Read> Stream<R> {
    /// Refuses before reading when `n` more bytes would take the tar past its bound.
    fn reserve(&self, n: u64) -> Result<(), LayerError> {
        if self.at.saturating_add(n) > MAX_LAYER_TAR_BYTES {
            return Err(refuse(
                DistributionCode::LayerTooLarge,
                format!("the layer inflates to more than {MAX_LAYER_TAR_BYTES} bytes"),
            ));
        }
        Ok(())
    }

    /// Fills `buf`; the tar ending first is `short`.
    fn fill(&mut self, buf: &mut [u8], short: &str) -> Result<(), LayerError> {
        self.reserve(buf.len() as u64)?;
        self.inner
            .read_exact(buf)
            .map_err(|e| io_refusal(e, short))?;
        self.at += buf.len() as u64;
        Ok(())
    }

    /// The next `n` bytes, `n` already checked against the bound that applies to them.
    fn take(&mut self, n: u64, short: &str) -> Result<Vec<u8>, LayerError> {
        self.reserve(n)?;
        let mut bytes = vec![0; usize::try_from(n).map_err(|_| malformed(short))?];
        self.fill(&mut bytes, short)?;
        Ok(bytes)
    }

    /// Reads past `n` bytes without keeping them.
    fn skip(&mut self, n: u64, short: &str) -> Result<(), LayerError> {
        self.reserve(n)?;
        let skipped = std::io::copy(&mut (&mut self.inner).take(n), &mut std::io::sink())
            .map_err(|e| io_refusal(e, short))?;
        self.at += skipped;
        if skipped < n {
            return Err(malformed(short));
        }
        Ok(())
    }

    /// Reads to the end of the stream: nothing but zero bytes may follow the end blocks.
    fn only_zeros_to_the_end(&mut self) -> Result<(), LayerError> {
        let mut buf = [0u8; 8 * 1024];
        loop {
            let n = match self.inner.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_refusal(e, "the tar ends early")),
            };
            if let Some(i) = buf[..n].iter().position(|&b| b != 0) {
                return Err(malformed(format!(
                    "non-zero data at byte {} after the end blocks (readers that skip zero blocks \
                     would read it as entries)",
                    self.at + i as u64
                )));
            }
            self.at += n as u64;
            self.reserve(0)?;
        }
    }
}

/// The entries of an uncompressed tar, read as a stream to its end, keeping the bundles named in
/// `wanted` (what the tests and the fuzz targets read).
#[cfg(any(test, fuzzing))]
pub fn read_tar(
    tar: impl Read,
    wanted: &BTreeSet<String>,
    limits: Limits,
) -> Result<Bundles, LayerError> {
    read_tar_matching(tar, &|name| wanted.contains(name), limits, &mut |_| {})
}

/// The entries of an uncompressed tar, read as a stream to its end, keeping the bundles `wanted`
/// keeps; see the module documentation. Each header block is, in this order: the end of the
/// archive, or a PAX header for the entry after it, or an entry — a file or a directory every
/// reader reads alike, at a path met once — whose data is kept, checked or read past.
fn read_tar_matching(
    tar: impl Read,
    wanted: &dyn Fn(&str) -> bool,
    limits: Limits,
    offers: &mut dyn FnMut(&str),
) -> Result<Bundles, LayerError> {
    let mut stream = Stream { inner: tar, at: 0 };
    let mut paths = LayerPaths::default();
    let mut kept = KeptBundles {
        wanted,
        limits,
        offers,
        builders: BTreeMap::new(),
    };
    let mut pending: Option<Pax> = None;
    loop {
        let at = stream.at;
        let mut header = [0u8; BLOCK];
        stream.fill(&mut header, "the tar ends without its end blocks")?;
        if header.iter().all(|&b| b == 0) {
            end_of_archive(&mut stream, pending.as_ref(), at)?;
            break;
        }
        let declared = declared_size(&stream, &header, at)?;
        let data_short = format!("entry at byte {at}: its data runs past the end of the tar");
        if header[156] == b'x' {
            let pax = pax_header(&mut stream, pending.as_ref(), declared, at, &data_short)?;
            pending = Some(pax);
            continue;
        }
        let entry = LayerEntry::read(&header, pending.take(), declared, at)?;
        let path = paths.admit(&entry)?;
        kept.read_data(&mut stream, &entry, &path, &data_short)?;
        stream.skip(padding(declared), &data_short)?;
    }
    Ok(kept.finish())
}

/// The end of the archive at byte `at`, its first zero block read: a second zero block, then
/// nothing but zero bytes; a PAX header still `pending` is followed by no entry.
fn end_of_archive<R: Read>(
    stream: &mut Stream<R>,
    pending: Option<&Pax>,
    at: u64,
) -> Result<(), LayerError> {
    if let Some(pax) = pending {
        return Err(malformed(format!(
            "the PAX header at byte {} is followed by no entry",
            pax.at
        )));
    }
    let mut second = [0u8; BLOCK];
    stream.fill(&mut second, "the tar ends after one end block")?;
    if second.iter().any(|&b| b != 0) {
        return Err(malformed(format!(
            "a lone zero block at byte {at}: readers that stop there do not see the \
             entries after it"
        )));
    }
    stream.only_zeros_to_the_end()
}

/// The data size the (checked) `header` at byte `at` declares, refused when its data and padding
/// would take the tar past its bound.
fn declared_size<R: Read>(
    stream: &Stream<R>,
    header: &[u8; BLOCK],
    at: u64,
) -> Result<u64, LayerError> {
    let declared = check_header(header, at)?;
    if stream
        .reserve(declared.saturating_add(padding(declared)))
        .is_err()
    {
        return Err(malformed(format!(
            "entry at byte {at} declares {declared} bytes of data, more than a layer's tar \
             may hold ({MAX_LAYER_TAR_BYTES} bytes)"
        )));
    }
    Ok(declared)
}

/// The records of the PAX header at byte `at` (its `declared` bytes of data read), for the entry
/// after it: refused after another PAX header still `pending`, or over [`MAX_PAX_BYTES`].
fn pax_header<R: Read>(
    stream: &mut Stream<R>,
    pending: Option<&Pax>,
    declared: u64,
    at: u64,
    data_short: &str,
) -> Result<Pax, LayerError> {
    if let Some(pax) = pending {
        return Err(malformed(format!(
            "entry at byte {at}: a PAX header after the PAX header at byte {} (readers \
             disagree which entry its records apply to)",
            pax.at
        )));
    }
    if declared > MAX_PAX_BYTES {
        return Err(malformed(format!(
            "entry at byte {at}: a PAX header of {declared} bytes, over {MAX_PAX_BYTES}"
        )));
    }
    let data = stream.take(declared, data_short)?;
    stream.skip(padding(declared), data_short)?;
    pax(&data, at)
}

/// A file or a directory of the layer, as every reader reads its header.
struct LayerEntry {
    at: u64,
    is_dir: bool,
    /// Its data size.
    declared: u64,
    /// Whether its mode has an execute bit (kept for a file of a wanted bundle).
    executable: bool,
    /// Its name: the PAX path when one was given, else the header's.
    raw: String,
    /// The name, escaped for messages.
    shown: String,
}

impl LayerEntry {
    /// The entry of `header` at byte `at`, declaring `declared` bytes, after the records `pax` of
    /// the PAX header before it, if any: refused when it is a link or a special file, or when
    /// readers would read its header differently.
    fn read(
        header: &[u8; BLOCK],
        pax: Option<Pax>,
        declared: u64,
        at: u64,
    ) -> Result<LayerEntry, LayerError> {
        let header_name = header_path(header, at)?;
        let raw = match pax.as_ref().and_then(|p| p.path.clone()) {
            Some(path) => path,
            None => header_name.clone(),
        };
        let shown = crate::support::escape::text(&raw).to_string();
        let kind = header[156];
        only_files_and_directories(kind, &shown)?;
        let entry = LayerEntry {
            at,
            is_dir: kind == b'5',
            declared,
            executable: executable(header),
            raw,
            shown,
        };
        entry.read_alike(header, pax.as_ref(), &header_name)?;
        Ok(entry)
    }

    /// Refuses what readers disagree on in a file's or directory's `header` (its own name
    /// `header_name`, after the records `pax`): a link name, a PAX size other than the header's,
    /// a directory with data, a regular file whose name ends in `/`.
    fn read_alike(
        &self,
        header: &[u8; BLOCK],
        pax: Option<&Pax>,
        header_name: &str,
    ) -> Result<(), LayerError> {
        let (shown, at, declared, is_dir) = (&self.shown, self.at, self.declared, self.is_dir);
        if header[157..257].iter().any(|&b| b != 0) {
            return Err(malformed(format!(
                "`{shown}` (entry at byte {at}) is a file or directory with a link name"
            )));
        }
        if let Some(size) = pax.and_then(|p| p.size)
            && size != declared
        {
            return Err(malformed(format!(
                "`{shown}` (entry at byte {at}): its PAX size {size} and its header's size \
                 {declared} differ"
            )));
        }
        if is_dir && declared != 0 {
            return Err(malformed(format!(
                "`{shown}` (entry at byte {at}) is a directory with {declared} bytes of data \
                 (readers disagree whether they are entries)"
            )));
        }
        // Python's `tarfile` takes an old-style file whose own header name ends in `/` for a
        // directory even when a PAX path follows; every reader, the effective name.
        if !is_dir && (self.raw.ends_with('/') || (header[156] == 0 && header_name.ends_with('/')))
        {
            return Err(malformed(format!(
                "`{shown}` (entry at byte {at}) is a regular file whose name ends in `/` (old \
                 readers take it for a directory and its data for entries)"
            )));
        }
        Ok(())
    }
}

/// Refuses an entry of type `kind` that is not a regular file or a directory: links
/// (`link_in_layer`), devices, FIFOs and every other type (`special_file_in_layer`).
fn only_files_and_directories(kind: u8, shown: &str) -> Result<(), LayerError> {
    match kind {
        b'0' | 0 | b'5' => Ok(()),
        b'1' | b'2' => Err(refuse(
            DistributionCode::LinkInLayer,
            format!(
                "`{shown}` is a {} link; links are never unpacked",
                if kind == b'1' { "hard" } else { "symbolic" }
            ),
        )),
        b'3' | b'4' | b'6' => Err(refuse(
            DistributionCode::SpecialFileInLayer,
            format!("`{shown}` is a device or FIFO; only files and directories are unpacked"),
        )),
        other => Err(refuse(
            DistributionCode::SpecialFileInLayer,
            format!(
                "`{shown}` has entry type {:?}; only files and directories are unpacked",
                other as char
            ),
        )),
    }
}

/// The paths of the layer met so far.
#[derive(Default)]
struct LayerPaths {
    seen: BTreeSet<String>,
    /// Each path by its lowercase spelling.
    folded: BTreeMap<String, String>,
}

impl LayerPaths {
    /// The checked path of `entry`, refused when it was met before, in this or another case.
    fn admit(&mut self, entry: &LayerEntry) -> Result<String, LayerError> {
        let shown = &entry.shown;
        let path = checked_path(&entry.raw, shown)?;
        if !self.seen.insert(path.clone()) {
            return Err(refuse(
                DistributionCode::DuplicateInLayer,
                format!("`{shown}` appears twice"),
            ));
        }
        if let Some(other) = self.folded.insert(path.to_lowercase(), path.clone()) {
            return Err(refuse(
                DistributionCode::DuplicateInLayer,
                format!(
                    "`{shown}` and `{}` differ only in case",
                    crate::support::escape::text(&other)
                ),
            ));
        }
        Ok(path)
    }
}

/// The bundles read so far: the file sets of those `wanted` keeps, and who is told of every
/// bundle the layer offers.
struct KeptBundles<'a> {
    wanted: &'a dyn Fn(&str) -> bool,
    limits: Limits,
    offers: &'a mut dyn FnMut(&str),
    builders: BTreeMap<String, FileSetBuilder>,
}

impl KeptBundles<'_> {
    /// Reads the data of `entry` at `path`: a `SKILL.md` offers its bundle; the entry of a wanted
    /// bundle goes into its file set (a file over its bound read past, counted), any other is read
    /// past; a file outside any bundle folder refuses the layer.
    fn read_data<R: Read>(
        &mut self,
        stream: &mut Stream<R>,
        entry: &LayerEntry,
        path: &str,
        data_short: &str,
    ) -> Result<(), LayerError> {
        let (is_dir, declared) = (entry.is_dir, entry.declared);
        if !is_dir
            && let Some((bundle, file)) = path.split_once('/')
            && file == crate::format::limits::SKILL_MD
        {
            (self.offers)(bundle);
        }
        if let Some((bundle, rest)) = path.split_once('/')
            && (self.wanted)(bundle)
        {
            let limits = self.limits;
            let builder = self
                .builders
                .entry(bundle.to_owned())
                .or_insert_with(|| FileSetBuilder::with_limits(limits));
            if is_dir {
                builder.count_entry();
            } else if declared > builder.limits().max_file_bytes(rest) {
                builder.insert_oversized(rest, declared);
                stream.skip(declared, data_short)?;
            } else {
                let bytes = stream.take(declared, data_short)?;
                builder.insert(rest, bytes);
                if entry.executable {
                    builder.mark_executable(rest);
                }
            }
        } else if !path.contains('/') && !is_dir {
            return Err(refuse(
                DistributionCode::UnsafePathInLayer,
                format!("`{}` is a file outside any bundle folder", entry.shown),
            ));
        } else {
            stream.skip(declared, data_short)?;
        }
        Ok(())
    }

    /// The bundles kept, each with its files and the problems found in them.
    fn finish(self) -> Bundles {
        self.builders
            .into_iter()
            .map(|(name, builder)| (name, builder.finish()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::oci::tar::{TarFile, archive};
    use crate::source::oci::tar_header::{GNU, USTAR};

    /// A raw ustar entry of `kind` (for entries our writer never makes).
    fn raw(path: &str, kind: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out =
            crate::source::oci::tar::ustar_header(path, "", kind, 0o644, bytes.len() as u64)
                .to_vec();
        out.extend_from_slice(bytes);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
        out
    }

    fn layer_with(extra: Vec<u8>) -> Vec<u8> {
        let good = archive(&[TarFile {
            path: "pdf/SKILL.md".into(),
            bytes: b"---\nname: pdf\ndescription: d\n---\n",
            executable: false,
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
                executable: false,
            },
            TarFile {
                path: format!("pdf/{}/deep.md", "d".repeat(180)),
                bytes: b"deep\n",
                executable: false,
            },
            TarFile {
                path: "docx/SKILL.md".into(),
                bytes: b"---\nname: docx\ndescription: d\n---\n",
                executable: false,
            },
        ];
        let tar = archive(&files);
        let bundles = read_tar(&tar[..], &wanted(), limits::CHAMVI).expect("read");
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
    fn a_file_with_an_execute_bit_is_marked_executable() {
        let file = |path: &str, mode: u32| {
            let bytes = b"echo hi\n";
            let header = crate::source::oci::tar::ustar_header(path, "", b'0', mode, 8);
            let mut out = header.to_vec();
            out.extend_from_slice(bytes);
            out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
            out
        };
        let mut extra = file("pdf/run.sh", 0o755);
        extra.extend(file("pdf/group.sh", 0o654));
        extra.extend(file("pdf/plain.md", 0o644));
        let tar = layer_with(extra);
        let bundles = read_tar(&tar[..], &wanted(), limits::CHAMVI).expect("read");
        let (set, problems) = &bundles["pdf"];
        assert!(!problems.has_errors(), "{problems:?}");
        assert!(set.is_executable("run.sh") && set.is_executable("group.sh"));
        assert!(!set.is_executable("plain.md") && !set.is_executable("SKILL.md"));
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
                &layer_with(raw("./pdf/notes.md", b'0', b"n\n"))[..],
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
        let refused = unpack(&bomb[..], &wanted(), limits::CHAMVI).expect_err("refused");
        assert_eq!(refused.code, DistributionCode::LayerTooLarge);
    }

    #[test]
    fn a_long_path_whose_truncated_header_name_ends_in_a_slash_reads_back() {
        // 100 bytes up to a `/`, then a name too long for ustar: a PAX path, the header holding
        // the first 100 bytes.
        let path = format!("pdf/{}/{}", "d".repeat(95), "f".repeat(120));
        let tar = archive(&[
            TarFile {
                path: "pdf/SKILL.md".into(),
                bytes: b"---\nname: pdf\ndescription: d\n---\n",
                executable: false,
            },
            TarFile {
                path: path.clone(),
                bytes: b"long\n",
                executable: false,
            },
        ]);
        let read = read_tar(&tar[..], &wanted(), limits::CHAMVI).expect("read");
        assert_eq!(
            read["pdf"].0.get(&path["pdf/".len()..]),
            Some(&b"long\n"[..])
        );
        let (python, _) = oracle_listings(&tar);
        assert!(
            python.lines().any(|l| l == format!("{path} b'0'")),
            "{python}"
        );
    }

    #[test]
    fn a_ustar_prefix_is_joined_to_the_name() {
        // 4 + 120 bytes of prefix, then the name: the writer splits it at the slash.
        let path = format!("pdf/{}/deep.md", "d".repeat(120));
        let files = [
            TarFile {
                path: "pdf/SKILL.md".into(),
                bytes: b"---\nname: pdf\ndescription: d\n---\n",
                executable: false,
            },
            TarFile {
                path: path.clone(),
                bytes: b"deep\n",
                executable: false,
            },
        ];
        let tar = archive(&files);
        assert!(
            tar.chunks(BLOCK)
                .any(|block| block.starts_with(b"deep.md\0")),
            "the file's header holds the name, its prefix the folders"
        );
        let bundles = read_tar(&tar[..], &wanted(), limits::CHAMVI).expect("read");
        assert_eq!(
            bundles["pdf"].0.get(&path["pdf/".len()..]),
            Some(&b"deep\n"[..])
        );
    }

    /// A header block from scratch: `name` in the name field, entry type `kind`, `size`, the
    /// POSIX ustar magic; `edit` changes any byte before the checksum is filled in.
    fn header(name: &[u8], kind: u8, size: u64, edit: impl FnOnce(&mut [u8; BLOCK])) -> Vec<u8> {
        let mut h = [0u8; BLOCK];
        h[..name.len()].copy_from_slice(name);
        h[100..108].copy_from_slice(b"0000644\0");
        h[108..116].copy_from_slice(b"0000000\0");
        h[116..124].copy_from_slice(b"0000000\0");
        h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
        h[136..148].copy_from_slice(b"00000000000\0");
        h[156] = kind;
        h[257..265].copy_from_slice(USTAR);
        edit(&mut h);
        seal(&mut h);
        h.to_vec()
    }

    /// Fills in the checksum of a header whose bytes were edited.
    fn seal(h: &mut [u8; BLOCK]) {
        h[148..156].fill(b' ');
        let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    }

    /// A PAX extended header holding `records`.
    fn pax_header(records: &[u8], size: Option<u64>) -> Vec<u8> {
        let mut out = header(
            b"@PaxHeader",
            b'x',
            size.unwrap_or(records.len() as u64),
            |_| {},
        );
        out.extend_from_slice(records);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
        out
    }

    fn symlink() -> Vec<u8> {
        header(b"pdf/evil", b'2', 0, |h| {
            h[157..168].copy_from_slice(b"/etc/passwd");
        })
    }

    /// `len key=value\n`, its length counting itself.
    fn record(key: &str, value: &str) -> Vec<u8> {
        let body = key.len() + value.len() + 3;
        let len = (1..)
            .map(|digits| body + digits)
            .find(|n| n.to_string().len() + body == *n)
            .unwrap();
        format!("{len} {key}={value}\n").into_bytes()
    }

    /// (a) A directory whose size field says 512: its "data" is a symlink header.
    fn directory_hiding_a_symlink() -> Vec<u8> {
        let mut tar = header(b"pdf/d/", b'5', 512, |_| {});
        tar.extend(symlink());
        layer_with(tar)
    }

    /// (b) A PAX `size=512` record, then a second PAX header of no data: a reader applying the
    /// size to that second header takes the symlink header after it for its records.
    fn pax_size_hiding_a_symlink() -> Vec<u8> {
        // The symlink header must read as one 512-byte PAX record to the reader it hides from.
        let hidden = header(b"512 x=pdf/evil", b'2', 0, |h| {
            h[157..168].copy_from_slice(b"/etc/passwd");
            h[511] = b'\n';
        });
        let mut tar = pax_header(&record("size", "512"), None);
        tar.extend(pax_header(b"", Some(0)));
        tar.extend(hidden);
        tar.extend(header(b"pdf/after.md", b'0', 0, |_| {}));
        layer_with(tar)
    }

    /// (c) An old-style (`\0` type) file whose name ends in `/`: old readers take it for a
    /// directory and its data, a symlink header, for the next entry.
    fn old_style_slash_hiding_a_symlink() -> Vec<u8> {
        let mut tar = header(b"pdf/d/", 0, 512, |_| {});
        tar.extend(symlink());
        layer_with(tar)
    }

    #[test]
    fn a_symlink_hidden_from_one_reader_is_refused_by_this_one() {
        for (case, tar) in [
            ("directory with data", directory_hiding_a_symlink()),
            ("PAX size on a PAX header", pax_size_hiding_a_symlink()),
            (
                "old-style file ending in /",
                old_style_slash_hiding_a_symlink(),
            ),
        ] {
            assert_eq!(code(&tar), DistributionCode::MalformedLayer, "{case}");
        }
    }

    /// The entry names and types Python's `tarfile` and GNU tar list for `tar`.
    fn oracle_listings(tar: &[u8]) -> (String, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("layer.tar");
        fs_err::write(&path, tar).unwrap();
        let python = std::process::Command::new("python3")
            .arg("-c")
            .arg(
                "import sys, tarfile\n\
                 for m in tarfile.open(sys.argv[1]):\n    print(m.name, m.type)",
            )
            .arg(&path)
            .output()
            .expect("python3 runs");
        let gnu = std::process::Command::new("tar")
            .arg("-tvf")
            .arg(&path)
            .output()
            .expect("tar runs");
        (
            String::from_utf8_lossy(&python.stdout).into_owned(),
            String::from_utf8_lossy(&gnu.stdout).into_owned(),
        )
    }

    #[test]
    fn the_hidden_symlinks_are_real_to_python_tarfile_and_gnu_tar() {
        let symlink_in = |listing: &str| listing.lines().any(|l| l.contains("evil"));
        for (case, tar, gnu_sees_it) in [
            ("directory with data", directory_hiding_a_symlink(), true),
            (
                "PAX size on a PAX header",
                pax_size_hiding_a_symlink(),
                true,
            ),
            (
                "old-style file ending in /",
                old_style_slash_hiding_a_symlink(),
                false,
            ),
        ] {
            let (python, gnu) = oracle_listings(&tar);
            assert!(symlink_in(&python), "{case}: python lists\n{python}");
            if gnu_sees_it {
                assert!(symlink_in(&gnu), "{case}: GNU tar lists\n{gnu}");
            }
            assert!(
                read_tar(&tar[..], &wanted(), limits::CHAMVI).is_err(),
                "{case}"
            );
        }
    }

    #[test]
    fn headers_other_readers_read_differently_are_refused() {
        let file = |name: &[u8], edit: fn(&mut [u8; BLOCK])| {
            let mut entry = header(name, b'0', 1, edit);
            entry.extend_from_slice(&[b'a'; BLOCK]);
            layer_with(entry)
        };
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("a regular file ending in /", file(b"pdf/x/", |_| {})),
            (
                "bytes after the name's NUL",
                file(b"pdf/a.md\0evil", |_| {}),
            ),
            (
                "bytes after the prefix's NUL",
                file(b"a.md", |h| {
                    h[345..352].copy_from_slice(b"pdf\0zzz");
                }),
            ),
            (
                "a link name on a file",
                file(b"pdf/a.md", |h| {
                    h[157..160].copy_from_slice(b"abc");
                }),
            ),
            (
                "a base-256 size",
                file(b"pdf/a.md", |h| {
                    h[124..136].fill(0);
                    h[124] = 0x80;
                    h[135] = 1;
                }),
            ),
            (
                "a size after a NUL",
                file(b"pdf/a.md", |h| {
                    h[124..136].copy_from_slice(b"\x000000000001\0");
                }),
            ),
            (
                "a signed size",
                file(b"pdf/a.md", |h| {
                    h[124..136].copy_from_slice(b"+0000000001\0");
                }),
            ),
            (
                "a bad time field",
                file(b"pdf/a.md", |h| {
                    h[136..148].copy_from_slice(b"0000000000x\0");
                }),
            ),
            ("no magic (V7)", file(b"pdf/a.md", |h| h[257..265].fill(0))),
            (
                "ustar magic, GNU version",
                file(b"pdf/a.md", |h| {
                    h[263..265].copy_from_slice(b" \0");
                }),
            ),
            (
                "a GNU header with a prefix",
                file(b"a.md", |h| {
                    h[257..265].copy_from_slice(GNU);
                    h[345..348].copy_from_slice(b"pdf");
                }),
            ),
        ];
        for (case, tar) in cases {
            assert_eq!(code(&tar), DistributionCode::MalformedLayer, "{case}");
        }
        // A GNU header without a prefix is read alike by every reader.
        let mut gnu = header(b"pdf/gnu.md", b'0', 1, |h| h[257..265].copy_from_slice(GNU));
        gnu.extend_from_slice(&[b'g'; BLOCK]);
        let bundles = read_tar(&layer_with(gnu)[..], &wanted(), limits::CHAMVI).expect("read");
        assert_eq!(bundles["pdf"].0.get("gnu.md"), Some(&b"g"[..]));
    }

    #[test]
    fn pax_headers_other_readers_apply_differently_are_refused() {
        let entry = |records: &[u8], size: u64| {
            let mut tar = pax_header(records, None);
            tar.extend(header(b"pdf/a.md", b'0', size, |_| {}));
            tar.extend_from_slice(&[b'a'; BLOCK]);
            layer_with(tar)
        };
        let mut then_global = pax_header(b"14 path=pdf/b\n", None);
        then_global.extend(header(b"@PaxGlobal", b'g', 0, |_| {}));
        let mut then_end = layer_with(Vec::new());
        then_end.truncate(then_end.len() - 2 * BLOCK);
        then_end.extend(pax_header(b"14 path=pdf/b\n", None));
        then_end.resize(then_end.len() + 2 * BLOCK, 0);
        let cases: Vec<(&str, Vec<u8>, DistributionCode)> = vec![
            (
                "a PAX size that differs",
                entry(b"10 size=2\n", 1),
                DistributionCode::MalformedLayer,
            ),
            (
                "a record twice",
                entry(b"14 path=pdf/b\n14 path=pdf/c\n", 1),
                DistributionCode::MalformedLayer,
            ),
            (
                "a NUL in the path",
                entry(b"14 path=pdf\0b\n", 1),
                DistributionCode::MalformedLayer,
            ),
            (
                "an unknown record",
                entry(b"18 hdrcharset=BIN\n", 1),
                DistributionCode::MalformedLayer,
            ),
            (
                "a signed length",
                entry(b"+15 path=pdf/b\n", 1),
                DistributionCode::MalformedLayer,
            ),
            (
                "a signed size",
                entry(b"11 size=+1\n", 1),
                DistributionCode::MalformedLayer,
            ),
            (
                "a GNU sparse file",
                entry(b"21 GNU.sparse.size=1\n", 1),
                DistributionCode::SpecialFileInLayer,
            ),
            (
                "a PAX header then no entry",
                then_end,
                DistributionCode::MalformedLayer,
            ),
            (
                "a PAX header then a global one",
                layer_with(then_global),
                DistributionCode::SpecialFileInLayer,
            ),
        ];
        for (case, tar, expected) in cases {
            assert_eq!(code(&tar), expected, "{case}");
        }
        let mut too_big = layer_with(Vec::new());
        too_big.truncate(too_big.len() - 2 * BLOCK);
        too_big.extend(header(b"@PaxHeader", b'x', MAX_PAX_BYTES + 1, |_| {}));
        assert_eq!(code(&too_big), DistributionCode::MalformedLayer);
        // The records every writer puts there are taken: times, owners, extended attributes.
        let fine = entry(
            b"10 size=1\n13 mtime=1.5\n14 path=pdf/b\n25 SCHILY.xattr.user.a=b\n",
            1,
        );
        let bundles = read_tar(&fine[..], &wanted(), limits::CHAMVI).expect("read");
        assert_eq!(bundles["pdf"].0.get("b"), Some(&b"a"[..]));
    }

    #[test]
    fn gnu_long_names_and_other_extension_entries_are_refused() {
        for kind in [b'L', b'K', b'N', b'M', b'S', b'V', b'D', b'A', b'X'] {
            let mut entry = header(b"././@LongLink", kind, 9, |_| {});
            entry.extend_from_slice(b"pdf/long\0");
            entry.resize(2 * BLOCK, 0);
            assert_eq!(
                code(&layer_with(entry)),
                DistributionCode::SpecialFileInLayer,
                "{}",
                kind as char
            );
        }
    }

    #[test]
    fn anything_after_the_end_blocks_but_zeros_is_refused() {
        let good = layer_with(Vec::new());
        // Record padding (zeros) after the end blocks, as GNU tar writes it, is fine.
        let mut padded = good.clone();
        padded.resize(padded.len() + 20 * BLOCK, 0);
        assert!(read_tar(&padded[..], &wanted(), limits::CHAMVI).is_ok());
        let mut after = good.clone();
        after.extend(header(b"pdf/evil", b'2', 0, |_| {}));
        assert_eq!(code(&after), DistributionCode::MalformedLayer);
        let mut one_byte = good.clone();
        one_byte.extend_from_slice(&[0, 0, 7]);
        assert_eq!(code(&one_byte), DistributionCode::MalformedLayer);
        // One zero block, then an entry: readers that stop at the first zero block miss it.
        let mut lone = good[..good.len() - BLOCK].to_vec();
        lone.extend(symlink());
        lone.resize(lone.len() + 2 * BLOCK, 0);
        assert_eq!(code(&lone), DistributionCode::MalformedLayer);
        let mut only_one = good.clone();
        only_one.truncate(good.len() - BLOCK);
        assert_eq!(code(&only_one), DistributionCode::MalformedLayer);
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn bytes_after_the_gzip_stream_are_refused() {
        let tar = layer_with(Vec::new());
        let one = gzip(&tar);
        assert!(unpack(&one[..], &wanted(), limits::CHAMVI).is_ok());
        let mut second_member = one.clone();
        second_member.extend(gzip(&[0u8; BLOCK]));
        let mut garbage = one.clone();
        garbage.extend_from_slice(b"trailing");
        let mut zero = one.clone();
        zero.push(0);
        for (case, layer) in [
            ("second member", second_member),
            ("garbage", garbage),
            ("a zero byte", zero),
        ] {
            assert_eq!(
                unpack(&layer[..], &wanted(), limits::CHAMVI)
                    .expect_err(case)
                    .code,
                DistributionCode::MalformedLayer,
                "{case}"
            );
        }
        let mut bad_crc = one.clone();
        let at = bad_crc.len() - 8;
        bad_crc[at] ^= 1;
        assert_eq!(
            unpack(&bad_crc[..], &wanted(), limits::CHAMVI)
                .expect_err("crc")
                .code,
            DistributionCode::MalformedLayer
        );
        assert_eq!(
            unpack(&one[..one.len() - 4], &wanted(), limits::CHAMVI)
                .expect_err("cut")
                .code,
            DistributionCode::MalformedLayer
        );
    }

    /// A reader giving one byte per call, then failing with `fail` if given.
    struct Trickle<'a> {
        bytes: &'a [u8],
        fail: Option<fn() -> std::io::Error>,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.bytes.split_first() {
                Some((&b, rest)) if !buf.is_empty() => {
                    buf[0] = b;
                    self.bytes = rest;
                    Ok(1)
                }
                _ => match self.fail {
                    Some(fail) => Err(fail()),
                    None => Ok(0),
                },
            }
        }
    }

    #[test]
    fn the_layer_is_read_as_a_stream_and_its_reader_failing_is_not_the_layers_fault() {
        let tar = archive(&[
            TarFile {
                path: "pdf/SKILL.md".into(),
                bytes: b"---\nname: pdf\ndescription: d\n---\n",
                executable: false,
            },
            TarFile {
                path: "docx/big.md".into(),
                bytes: &[b'b'; 300 * 1024],
                executable: false,
            },
        ]);
        let layer = gzip(&tar);
        let read = unpack(
            Trickle {
                bytes: &layer,
                fail: None,
            },
            &wanted(),
            limits::CHAMVI,
        )
        .expect("read");
        assert_eq!(read["pdf"].0.len(), 1);
        let cut = &layer[..layer.len() / 2];
        let failed = unpack(
            Trickle {
                bytes: cut,
                fail: Some(|| std::io::Error::other("reset by peer")),
            },
            &wanted(),
            limits::CHAMVI,
        )
        .expect_err("refused");
        assert_eq!(failed.code, DistributionCode::RegistryUnavailable);
        assert!(
            failed.message.contains("reset by peer"),
            "{}",
            failed.message
        );
        let bounded = unpack(
            Trickle {
                bytes: cut,
                fail: Some(|| {
                    std::io::Error::other(refuse(
                        DistributionCode::ImageTooLarge,
                        "over the pull bound",
                    ))
                }),
            },
            &wanted(),
            limits::CHAMVI,
        )
        .expect_err("refused");
        assert_eq!(bounded.code, DistributionCode::ImageTooLarge);
    }

    #[test]
    fn an_entry_declaring_more_than_the_bound_is_refused_before_its_data_is_read() {
        for name in [&b"docx/huge.md"[..], b"pdf/huge.md"] {
            let mut entry = header(name, b'0', MAX_LAYER_TAR_BYTES, |_| {});
            entry.extend_from_slice(&[b'h'; BLOCK]);
            let refused =
                read_tar(&layer_with(entry)[..], &wanted(), limits::CHAMVI).expect_err("refused");
            assert_eq!(refused.code, DistributionCode::MalformedLayer);
            assert!(
                refused.message.contains("more than a layer's tar may hold"),
                "{}",
                refused.message
            );
        }
    }

    #[test]
    fn layers_that_gnu_tar_and_python_write_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        let long = format!("references/{}/{}.md", "l".repeat(120), "f".repeat(80));
        for (path, text) in [
            ("pdf/SKILL.md", "---\nname: pdf\ndescription: d\n---\n"),
            ("pdf/scripts/fill.py", "print(1)\n"),
            (&format!("pdf/{long}")[..], "deep\n"),
            ("docx/SKILL.md", "---\nname: docx\ndescription: d\n---\n"),
        ] {
            let path = tree.join(path);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, text).unwrap();
        }
        let mut made = Vec::new();
        for format in ["gnu", "posix", "ustar"] {
            let out = dir.path().join(format!("gnu-{format}.tar"));
            let status = std::process::Command::new("tar")
                .arg(format!("--format={format}"))
                .args(["--sort=name", "-C"])
                .arg(&tree)
                .arg("-cf")
                .arg(&out)
                .args(["pdf", "docx"])
                .status()
                .expect("tar runs");
            // ustar cannot hold the long path: GNU tar says so and writes the rest.
            assert!(status.success() || format == "ustar", "{format}");
            made.push((format!("GNU tar {format}"), out, format != "ustar"));
        }
        // GNU's own format without a long name: nothing but ustar-like headers.
        let short = dir.path().join("gnu-short.tar");
        let status = std::process::Command::new("tar")
            .args(["--format=gnu", "-C"])
            .arg(&tree)
            .arg("-cf")
            .arg(&short)
            .args(["pdf/SKILL.md", "pdf/scripts", "docx"])
            .status()
            .expect("tar runs");
        assert!(status.success());
        made.push(("GNU tar gnu, short names".into(), short, false));
        for format in ["PAX_FORMAT", "GNU_FORMAT"] {
            let out = dir.path().join(format!("python-{format}.tar"));
            let status = std::process::Command::new("python3")
                .arg("-c")
                .arg(format!(
                    "import sys, tarfile\n\
                     with tarfile.open(sys.argv[1], 'w', format=tarfile.{format}) as t:\n    \
                     t.add(sys.argv[2] + '/pdf', 'pdf')\n    t.add(sys.argv[2] + '/docx', 'docx')"
                ))
                .arg(&out)
                .arg(&tree)
                .status()
                .expect("python3 runs");
            assert!(status.success(), "{format}");
            made.push((format!("Python {format}"), out, true));
        }
        for (case, path, has_long) in made {
            let tar = fs_err::read(&path).unwrap();
            let bundles = match read_tar(&tar[..], &wanted(), limits::CHAMVI) {
                Ok(bundles) => bundles,
                // GNU's own format spells a long name as an `L` entry, refused like any
                // extension entry type.
                Err(e)
                    if e.code == DistributionCode::SpecialFileInLayer
                        && tar.windows(13).any(|w| w == b"././@LongLink") =>
                {
                    assert!(has_long, "{case}");
                    continue;
                }
                Err(e) => panic!("{case}: {}", e.message),
            };
            let (set, problems) = &bundles["pdf"];
            assert!(!problems.has_errors(), "{case}: {problems:?}");
            assert_eq!(
                set.get("scripts/fill.py"),
                Some(&b"print(1)\n"[..]),
                "{case}"
            );
            if has_long {
                assert_eq!(set.get(&long), Some(&b"deep\n"[..]), "{case}");
            }
        }
    }

    #[test]
    fn a_file_over_its_bound_is_refused_by_the_bundle_rules_without_being_kept() {
        let big = vec![b'a'; 200 * 1024];
        let tar = layer_with(raw("pdf/references/big.md", b'0', &big));
        let bundles = read_tar(&tar[..], &wanted(), limits::CHAMVI).expect("read");
        let (set, problems) = &bundles["pdf"];
        assert!(problems.has_errors());
        assert!(set.get("references/big.md").is_none());
    }
}
