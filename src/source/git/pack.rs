//! The bounds of a pack as it arrives, checked on its bytes before gix reads them.
//!
//! gix reads a pack entry by entry, and holds each entry's compressed bytes in memory until its
//! zlib stream ends, whatever size the entry's header declares: an entry that declares 1 KiB
//! followed by an endless stream of deflate blocks grew gix's memory with every byte the
//! server sent. So every pack of a pinned fetch passes through [`BoundedPack`], which follows
//! it with a [`PackFollower`] (pure: no I/O) and refuses it, before gix has read the bytes that
//! broke a bound, once
//!
//! - its header announces more objects than the request may bring ([`PackLimit::objects`]);
//! - it runs past the bytes the request may legitimately need ([`PackLimit::bytes`], from
//!   [`pack_bytes`]: [`TREES_PACK_BYTES`] for the commit and its trees,
//!   [`MAX_PACK_BYTES`] for a whole commit, the approved files' sizes for their blobs);
//! - one entry's compressed bytes run past what deflate can make of the size it declares
//!   ([`entry_bytes`]), or inflate to more than that size: each entry's stream is inflated
//!   alongside gix, into a small scratch buffer that is thrown away;
//! - it is malformed: not a pack, an entry of an unknown type, a stream that is not zlib, bytes
//!   after its trailing checksum, or an end before its last object.
//!
//! Only the framing is read here (the 12-byte header, each entry's type and size, its delta
//! base, where its zlib stream ends): gix still parses, resolves and verifies every object.

use std::cell::Cell;
use std::io::{BufRead, Read};

use super::tree::{MAX_TREE_BYTES, MAX_TREE_ENTRIES};

/// The most objects the pack of a commit fetched at depth 1 may announce: one per entry its
/// tree may hold ([`MAX_TREE_ENTRIES`]), the commit and its root tree.
pub const MAX_COMMIT_OBJECTS: u64 = MAX_TREE_ENTRIES as u64 + 2;

/// The bytes a pack of the commit and its trees is allowed for the commit object: a commit with
/// a long message and a signature takes a few KiB.
pub const COMMIT_BYTES: u64 = 1024 * 1024;

/// The most bytes the pack of the commit and its trees (`filter blob:none`) may take: that of
/// [`MAX_COMMIT_OBJECTS`] objects holding together the tree bytes the walk accepts
/// ([`MAX_TREE_BYTES`]) and [`COMMIT_BYTES`] — 165,222,688 bytes, about 158 MiB. A tree sent as
/// a delta declares the delta's size, which Git makes no larger than the tree itself.
pub const TREES_PACK_BYTES: u64 = pack_bytes(MAX_COMMIT_OBJECTS, MAX_TREE_BYTES + COMMIT_BYTES);

/// The most bytes the pack of a whole commit (a server without `filter`), or of every branch and
/// tag (a server that refuses a want by id), may take: 1 GiB, the size GitHub asks a whole
/// repository to stay under. Any object in it is still held to
/// [`super::options::MAX_OBJECT_BYTES`] and any entry to [`entry_bytes`].
pub const MAX_PACK_BYTES: u64 = 1024 * 1024 * 1024;

/// The bytes of a pack entry besides its compressed data, at most: its type and size (ten bytes
/// of varint hold any 64-bit size) and its delta base (a SHA-1 id, or at most ten bytes of
/// offset).
const ENTRY_FRAMING: u64 = 32;

/// The most compressed bytes the zlib stream of an entry declaring `declared` bytes may take:
/// `declared + declared / 64 + 64`. zlib's own worst case (`deflateBound`, incompressible data
/// sent as stored blocks) is `declared / 3277 + 13` more; the margin is five times that, for
/// other compressors.
pub const fn entry_bytes(declared: u64) -> u64 {
    declared.saturating_add(declared / 64).saturating_add(64)
}

/// The most bytes a pack of `objects` objects that declare `inflated` bytes together may take:
/// the 12-byte header, each entry's framing ([`ENTRY_FRAMING`]) and the margin of
/// [`entry_bytes`], and the 20-byte trailing checksum.
pub const fn pack_bytes(objects: u64, inflated: u64) -> u64 {
    let entries = objects.saturating_mul(ENTRY_FRAMING + entry_bytes(0));
    (12 + 20_u64)
        .saturating_add(entries)
        .saturating_add(entry_bytes(inflated))
}

/// What one pack may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackLimit {
    /// Objects, from its header.
    pub objects: u64,
    /// Bytes, as they arrive.
    pub bytes: u64,
}

/// Why a pack was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackBroken {
    /// Its header announced this many objects, more than [`PackLimit::objects`].
    Objects(u32),
    /// It ran past this many bytes ([`PackLimit::bytes`]).
    Bytes(u64),
    /// The entry of this index (from 0), declaring `declared` bytes, took more than
    /// [`entry_bytes`] of them compressed, or inflated to more than it declared.
    Entry {
        /// The entry's index.
        index: u64,
        /// The size its header declares.
        declared: u64,
    },
    /// It is not a well-formed pack (what is wrong).
    Malformed(&'static str),
}

impl std::fmt::Display for PackBroken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PackBroken::Objects(objects) => write!(f, "the pack announces {objects} objects"),
            PackBroken::Bytes(max) => write!(f, "the pack runs past {max} bytes"),
            PackBroken::Entry { index, declared } => write!(
                f,
                "object {n} of the pack declares {declared} bytes but its compressed data runs \
                 past {max} bytes or inflates to more",
                n = index + 1,
                max = entry_bytes(*declared)
            ),
            PackBroken::Malformed(why) => write!(f, "the pack is malformed: {why}"),
        }
    }
}

/// The length of an object id in a pack (SHA-1: this build fetches only SHA-1 repositories).
const ID_BYTES: usize = 20;

/// Where in the pack the next byte falls.
#[derive(Debug)]
enum Stage {
    /// The 12-byte header: the bytes seen.
    Header(usize),
    /// An entry's type and size: the size so far, the shift of the next bits, the type.
    EntryHead { size: u64, shift: u32, kind: u8 },
    /// An offset delta's base: bytes of it seen, and the size the entry declares.
    OffsetBase { seen: usize, declared: u64 },
    /// A reference delta's base: bytes of it left, and the size the entry declares.
    IdBase { left: usize, declared: u64 },
    /// An entry's zlib stream.
    Data { declared: u64 },
    /// The trailing checksum: bytes of it left.
    Trailer(usize),
    /// Past the trailer: nothing more may come.
    Done,
}

/// The beginning of an entry.
const ENTRY_HEAD: Stage = Stage::EntryHead {
    size: 0,
    shift: 0,
    kind: 0,
};

/// The scratch buffer each entry is inflated into (and thrown away).
const SCRATCH: usize = 32 * 1024;

/// A pack followed byte by byte under a [`PackLimit`] (see the module doc). Pure: no I/O.
pub struct PackFollower {
    limit: PackLimit,
    stage: Stage,
    header: [u8; 12],
    /// Objects the header announces, and entries begun.
    announced: u64,
    entries: u64,
    bytes: u64,
    inflate: flate2::Decompress,
    scratch: Box<[u8]>,
}

impl PackFollower {
    /// The follower of a new pack under `limit`.
    pub fn new(limit: PackLimit) -> PackFollower {
        PackFollower {
            limit,
            stage: Stage::Header(0),
            header: [0; 12],
            announced: 0,
            entries: 0,
            bytes: 0,
            inflate: flate2::Decompress::new(true),
            scratch: Box::default(),
        }
    }

    /// Follows the next `bytes` of the pack; `Err` as soon as a bound is broken.
    pub fn take(&mut self, mut bytes: &[u8]) -> Result<(), PackBroken> {
        self.bytes = self.bytes.saturating_add(bytes.len() as u64);
        if self.bytes > self.limit.bytes {
            return Err(PackBroken::Bytes(self.limit.bytes));
        }
        while !bytes.is_empty() {
            let used = self.step(bytes)?;
            bytes = &bytes[used..];
        }
        Ok(())
    }

    /// Whether the pack may end here: its trailer has come.
    pub fn finish(&self) -> Result<(), PackBroken> {
        match self.stage {
            Stage::Done => Ok(()),
            _ => Err(PackBroken::Malformed(
                "it ends before its last object and trailing checksum",
            )),
        }
    }

    /// Follows the first bytes of `bytes`; how many it used.
    fn step(&mut self, bytes: &[u8]) -> Result<usize, PackBroken> {
        let byte = bytes[0];
        self.stage = match self.stage {
            Stage::Header(seen) => {
                self.header[seen] = byte;
                if seen + 1 < self.header.len() {
                    Stage::Header(seen + 1)
                } else {
                    self.begin()?
                }
            }
            Stage::EntryHead { size, shift, kind } => {
                let (bits, first) = if shift == 0 {
                    (u64::from(byte & 0x0f), true)
                } else {
                    (u64::from(byte & 0x7f), false)
                };
                let kind = if first { (byte >> 4) & 0x07 } else { kind };
                if shift > 60 {
                    return Err(PackBroken::Malformed(
                        "an object's size does not fit 64 bits",
                    ));
                }
                let size = size | bits << shift;
                let shift = shift + if first { 4 } else { 7 };
                if byte & 0x80 != 0 {
                    Stage::EntryHead { size, shift, kind }
                } else {
                    self.entry(kind, size)?
                }
            }
            Stage::OffsetBase { seen, declared } => {
                if seen >= 10 {
                    return Err(PackBroken::Malformed("a delta's base offset is too long"));
                }
                if byte & 0x80 != 0 {
                    Stage::OffsetBase {
                        seen: seen + 1,
                        declared,
                    }
                } else {
                    self.data(declared)
                }
            }
            Stage::IdBase { left, declared } if left > 1 => Stage::IdBase {
                left: left - 1,
                declared,
            },
            Stage::IdBase { declared, .. } => self.data(declared),
            Stage::Data { declared } => return self.inflate(bytes, declared),
            Stage::Trailer(left) => {
                let used = left.min(bytes.len());
                self.stage = if left == used {
                    Stage::Done
                } else {
                    Stage::Trailer(left - used)
                };
                return Ok(used);
            }
            Stage::Done => {
                return Err(PackBroken::Malformed(
                    "bytes follow its trailing checksum (its header announced fewer objects)",
                ));
            }
        };
        Ok(1)
    }

    /// The header has come: checks it, and where the pack goes next.
    fn begin(&mut self) -> Result<Stage, PackBroken> {
        let [p, a, c, k, v @ .., n0, n1, n2, n3] = self.header;
        if [p, a, c, k] != *b"PACK" || !matches!(u32::from_be_bytes(v), 2 | 3) {
            return Err(PackBroken::Malformed(
                "it does not begin with a pack header",
            ));
        }
        let count = u32::from_be_bytes([n0, n1, n2, n3]);
        if u64::from(count) > self.limit.objects {
            return Err(PackBroken::Objects(count));
        }
        self.announced = u64::from(count);
        Ok(self.next_entry())
    }

    /// The next entry, or the trailer after the last.
    fn next_entry(&mut self) -> Stage {
        if self.entries < self.announced {
            ENTRY_HEAD
        } else {
            Stage::Trailer(ID_BYTES)
        }
    }

    /// An entry of `kind` declaring `size` bytes begins (its delta base, or its data, next).
    fn entry(&mut self, kind: u8, declared: u64) -> Result<Stage, PackBroken> {
        self.entries += 1;
        match kind {
            1..=4 => Ok(self.data(declared)),
            6 => Ok(Stage::OffsetBase { seen: 0, declared }),
            7 => Ok(Stage::IdBase {
                left: ID_BYTES,
                declared,
            }),
            _ => Err(PackBroken::Malformed("an object of an unknown type")),
        }
    }

    /// The zlib stream of the entry begun last, which declares `declared` bytes.
    fn data(&mut self, declared: u64) -> Stage {
        self.inflate.reset(true);
        Stage::Data { declared }
    }

    /// Inflates the next `bytes` of the current entry's stream (declaring `declared` bytes);
    /// how many it used (all of them, or up to the end of the stream). Whatever the stream
    /// makes of them is inflated before it returns, a scratch buffer at a time.
    fn inflate(&mut self, bytes: &[u8], declared: u64) -> Result<usize, PackBroken> {
        if self.scratch.is_empty() {
            self.scratch = vec![0; SCRATCH].into_boxed_slice();
        }
        let broken = PackBroken::Entry {
            index: self.entries - 1,
            declared,
        };
        let mut used = 0;
        loop {
            let (before_in, before_out) = (self.inflate.total_in(), self.inflate.total_out());
            let status = self
                .inflate
                .decompress(
                    &bytes[used..],
                    &mut self.scratch,
                    flate2::FlushDecompress::None,
                )
                .map_err(|_| PackBroken::Malformed("an object's data is not a zlib stream"))?;
            let took = (self.inflate.total_in() - before_in) as usize;
            let made = self.inflate.total_out() - before_out;
            used += took;
            if self.inflate.total_in() > entry_bytes(declared)
                || self.inflate.total_out() > declared
            {
                return Err(broken);
            }
            if status == flate2::Status::StreamEnd {
                if self.inflate.total_out() != declared {
                    return Err(PackBroken::Malformed(
                        "an object inflates to another size than it declares",
                    ));
                }
                self.stage = self.next_entry();
                return Ok(used);
            }
            let filled = made == self.scratch.len() as u64;
            if used == bytes.len() && !filled {
                // All input taken and nothing more to make: the stream goes on in the next bytes.
                return Ok(used);
            }
            if took == 0 && made == 0 {
                return Err(PackBroken::Malformed("an object's zlib stream stalls"));
            }
        }
    }
}

/// A pack stream that stops with an error, recorded in `over`, as soon as its [`PackFollower`]
/// refuses it — seen in the bytes it is about to hand on, so that gix never reads a header or
/// an object past a bound (however much of the pack one read brings: a whole small pack fits in
/// one). It also records whether the stream below it failed (`inner_failed`): a pack gix
/// refuses although every byte of it arrived is a malformed answer, not a failed transfer.
pub(super) struct BoundedPack<'a> {
    inner: &'a mut dyn BufRead,
    follower: PackFollower,
    /// Bytes handed on (consumed) and bytes given to the follower.
    seen: u64,
    fed: u64,
    over: &'a Cell<Option<PackBroken>>,
    inner_failed: &'a Cell<bool>,
}

impl<'a> BoundedPack<'a> {
    pub(super) fn new(
        inner: &'a mut dyn BufRead,
        limit: PackLimit,
        over: &'a Cell<Option<PackBroken>>,
        inner_failed: &'a Cell<bool>,
    ) -> Self {
        BoundedPack {
            inner,
            follower: PackFollower::new(limit),
            seen: 0,
            fed: 0,
            over,
            inner_failed,
        }
    }

    fn refuse(&self, over: PackBroken) -> std::io::Error {
        self.over.set(Some(over));
        std::io::Error::other(over.to_string())
    }
}

impl Read for BoundedPack<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        super::answer::read_buffered(self, out)
    }
}

impl BufRead for BoundedPack<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if let Some(over) = self.over.get() {
            return Err(self.refuse(over));
        }
        let available = match self.inner.fill_buf() {
            Ok(available) => available,
            Err(e) => {
                self.inner_failed.set(true);
                return Err(e);
            }
        };
        // The bytes not yet followed (the same bytes come again if the last were not consumed).
        let new = (self.fed - self.seen) as usize;
        let verdict = if available.is_empty() {
            self.follower.finish()
        } else {
            let fresh = &available[new.min(available.len())..];
            self.fed += fresh.len() as u64;
            self.follower.take(fresh)
        };
        if let Err(over) = verdict {
            return Err(self.refuse(over));
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount);
        self.seen += amount as u64;
    }
}

#[cfg(test)]
#[path = "pack_tests.rs"]
mod tests;
