use std::io::Write as _;

use super::*;

/// An entry's type and size, as a pack writes them.
fn entry_head(kind: u8, mut size: u64) -> Vec<u8> {
    let mut first = (kind << 4) | (size & 0x0f) as u8;
    size >>= 4;
    let mut bytes = Vec::new();
    while size > 0 {
        bytes.push(first | 0x80);
        first = (size & 0x7f) as u8;
        size >>= 7;
    }
    bytes.push(first);
    bytes
}

/// `data` as a zlib stream.
fn zlib(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data).expect("compress");
    encoder.finish().expect("compress")
}

/// A pack header announcing `count` objects.
fn header(count: u32) -> Vec<u8> {
    let mut bytes = b"PACK\0\0\0\x02".to_vec();
    bytes.extend_from_slice(&count.to_be_bytes());
    bytes
}

/// A well-formed pack of blobs holding `blobs` (the trailer is not a real checksum: only gix
/// verifies it).
fn pack_of(blobs: &[&[u8]]) -> Vec<u8> {
    let mut bytes = header(blobs.len() as u32);
    for blob in blobs {
        bytes.extend(entry_head(3, blob.len() as u64));
        bytes.extend(zlib(blob));
    }
    bytes.extend([0x5a; 20]);
    bytes
}

/// A pack whose one blob declares `declared` bytes, then a zlib stream of `blocks` stored
/// (non-final) deflate blocks of `each` bytes each, without end: what a hostile server streams.
fn endless(declared: u64, blocks: usize, each: u16) -> Vec<u8> {
    let mut bytes = header(1);
    bytes.extend(entry_head(3, declared));
    bytes.extend([0x78, 0x01]);
    for _ in 0..blocks {
        bytes.push(0);
        bytes.extend(each.to_le_bytes());
        bytes.extend((!each).to_le_bytes());
        bytes.extend(std::iter::repeat_n(b'a', usize::from(each)));
    }
    bytes
}

fn limit(objects: u64, bytes: u64) -> PackLimit {
    PackLimit { objects, bytes }
}

/// What [`PackFollower`] makes of `bytes` fed in chunks of `chunk`, and at their end.
fn follow(bytes: &[u8], limit: PackLimit, chunk: usize) -> Result<(), PackBroken> {
    let mut follower = PackFollower::new(limit);
    bytes.chunks(chunk).try_for_each(|c| follower.take(c))?;
    follower.finish()
}

/// Reads `bytes` through [`BoundedPack`] in chunks of `chunk` (the buffer of the reader below):
/// what came through, and the refusal, if any.
fn read_bounded(bytes: &[u8], limit: PackLimit, chunk: usize) -> (usize, Option<PackBroken>) {
    let over = Cell::new(None);
    let failed = Cell::new(false);
    let mut inner = std::io::BufReader::with_capacity(chunk, bytes);
    let mut bounded = BoundedPack::new(&mut inner, limit, &over, &failed);
    let mut out = Vec::new();
    let result = bounded.read_to_end(&mut out);
    let why = over.take();
    assert_eq!(
        result.is_err(),
        why.is_some(),
        "an error is a recorded refusal"
    );
    assert!(!failed.get(), "the stream below never fails here");
    (out.len(), why)
}

#[test]
fn a_pack_within_its_bounds_passes_whole() {
    let big: Vec<u8> = (0..200_000u32)
        .flat_map(|i| (i * 7919).to_le_bytes())
        .collect();
    let bytes = pack_of(&[b"one", b"", &big, b"two"]);
    for chunk in [1, 5, 12, 4096, 1 << 20] {
        assert_eq!(follow(&bytes, limit(4, bytes.len() as u64), chunk), Ok(()));
        assert_eq!(
            read_bounded(&bytes, limit(4, bytes.len() as u64), chunk),
            (bytes.len(), None)
        );
    }
}

#[test]
fn delta_entries_are_followed_past_their_base() {
    let mut bytes = header(2);
    // An offset delta (two bytes of offset), then a reference delta (a 20-byte id).
    bytes.extend(entry_head(6, 5));
    bytes.extend([0x81, 0x05]);
    bytes.extend(zlib(b"delta"));
    bytes.extend(entry_head(7, 3));
    bytes.extend([0x11; 20]);
    bytes.extend(zlib(b"abc"));
    bytes.extend([0; 20]);
    for chunk in [1, 3, 4096] {
        assert_eq!(follow(&bytes, limit(2, 1 << 20), chunk), Ok(()));
    }
}

#[test]
fn a_header_announcing_more_objects_than_asked_for_stops_the_pack_after_it() {
    let bytes = pack_of(&[b"a", b"b", b"c"]);
    for chunk in [1, 5, 12, 4096] {
        let (read, why) = read_bounded(&bytes, limit(2, 1 << 20), chunk);
        assert_eq!(why, Some(PackBroken::Objects(3)));
        // Nothing past what was buffered with the header reached the reader.
        assert!(
            read < 12 + chunk,
            "{read} bytes read with chunks of {chunk}"
        );
    }
}

#[test]
fn a_pack_longer_than_its_bound_is_cut_off_at_the_bound() {
    let blobs: Vec<Vec<u8>> = (0..100u32).map(|i| i.to_be_bytes().repeat(300)).collect();
    let blobs: Vec<&[u8]> = blobs.iter().map(Vec::as_slice).collect();
    let bytes = pack_of(&blobs);
    let max = bytes.len() as u64 / 3;
    let (read, why) = read_bounded(&bytes, limit(100, max), 64);
    assert_eq!(why, Some(PackBroken::Bytes(max)));
    assert!(read as u64 <= max, "{read} bytes read, over {max}");
    // The bound itself is not refused.
    let whole = bytes.len() as u64;
    assert_eq!(read_bounded(&bytes, limit(100, whole), 64).1, None);
}

// A hostile server's pack: one object declaring 1 KiB, then deflate blocks without end. gix
// held every byte of them (1,000 MiB sent, 1,015 MiB of RSS); the follower refuses the entry
// once it inflates past the size it declares, or its compressed bytes run past what deflate
// makes of it (empty blocks inflate to nothing), whatever the pack's own bound.
#[test]
fn an_object_streaming_past_its_declared_size_is_refused_near_it() {
    let declared = 1024;
    let at_most = entry_bytes(declared) as usize;
    for (each, blocks) in [(1000, 100_000), (0, 1_000_000)] {
        let bytes = endless(declared, blocks, each);
        for chunk in [1, 64, 64 * 1024] {
            let (read, why) = read_bounded(&bytes, limit(1, MAX_PACK_BYTES), chunk);
            assert_eq!(why, Some(PackBroken::Entry { index: 0, declared }));
            assert!(
                read <= 12 + 2 + at_most + chunk,
                "{read} bytes read with chunks of {chunk}, blocks of {each}"
            );
        }
    }
    // The same stream ended where it declares (a final block, its checksum) passes; with a
    // wrong checksum it is malformed.
    let mut exact = endless(declared, 1, 1024);
    exact[12 + 2 + 2] = 1;
    let mut wrong = exact.clone();
    exact.extend(adler32(&[b'a'; 1024]).to_be_bytes());
    exact.extend([0; 20]);
    assert_eq!(follow(&exact, limit(1, 1 << 20), 7), Ok(()));
    wrong.extend(1024_u32.to_be_bytes());
    assert_eq!(
        follow(&wrong, limit(1, 1 << 20), 7),
        Err(PackBroken::Malformed(
            "an object's data is not a zlib stream"
        ))
    );
}

/// The Adler-32 checksum that ends a zlib stream of `data`.
fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for byte in data {
        a = (a + u32::from(*byte)) % 65521;
        b = (b + a) % 65521;
    }
    b << 16 | a
}

#[test]
fn a_pack_that_lies_about_its_count_or_its_form_is_malformed() {
    let two = pack_of(&[b"a", b"b"]);
    // It announces three objects and ends after two (the trailer read as a third).
    let mut more = two.clone();
    more[11] = 3;
    assert!(matches!(
        follow(&more, limit(10, 1 << 20), 5),
        Err(PackBroken::Malformed(_))
    ));
    // It announces one object and sends two.
    let mut fewer = two.clone();
    fewer[11] = 1;
    assert!(matches!(
        follow(&fewer, limit(10, 1 << 20), 5),
        Err(PackBroken::Malformed(_))
    ));
    // It ends early.
    assert_eq!(
        follow(&two[..two.len() - 1], limit(10, 1 << 20), 5),
        Err(PackBroken::Malformed(
            "it ends before its last object and trailing checksum"
        ))
    );
    // Not a pack; an object of type 5.
    assert!(matches!(
        follow(b"PAKC\0\0\0\x02\0\0\0\x01", limit(10, 100), 1),
        Err(PackBroken::Malformed(_))
    ));
    let mut unknown = header(1);
    unknown.extend(entry_head(5, 1));
    assert_eq!(
        follow(&unknown, limit(10, 100), 1),
        Err(PackBroken::Malformed("an object of an unknown type"))
    );
    // The reader records the end of a short pack as malformed too.
    assert!(matches!(
        read_bounded(&two[..20], limit(2, 1 << 20), 8).1,
        Some(PackBroken::Malformed(_))
    ));
}

/// The refusal of a reader that, as gix, reads the 12 bytes of the pack header and nothing more
/// before it looks at them, from a stream that brings the whole pack in one read.
fn header_read_whole(bytes: &[u8], limit: PackLimit) -> Option<PackBroken> {
    let over = Cell::new(None);
    let failed = Cell::new(false);
    let mut inner = std::io::BufReader::with_capacity(8192, bytes);
    let mut bounded = BoundedPack::new(&mut inner, limit, &over, &failed);
    let mut header = [0; 12];
    let read = bounded.read_exact(&mut header);
    assert_eq!(read.is_err(), over.get().is_some());
    over.get()
}

#[test]
fn a_header_over_the_bound_is_refused_before_it_is_read_even_when_the_pack_comes_whole() {
    // Three or 42 objects for two blobs: the whole pack fits in one read of 8 KiB.
    for count in [3, 42] {
        let blobs = vec![&b"x"[..]; count as usize];
        assert_eq!(
            header_read_whole(&pack_of(&blobs), limit(2, 1 << 20)),
            Some(PackBroken::Objects(count))
        );
    }
    assert_eq!(
        header_read_whole(&pack_of(&[b"a", b"b"]), limit(2, 1 << 20)),
        None
    );
}

#[test]
fn a_commit_pack_announcing_more_objects_than_a_tree_may_hold_is_refused_by_its_count() {
    let commit = limit(MAX_COMMIT_OBJECTS, TREES_PACK_BYTES);
    assert_eq!(
        header_read_whole(&header(2_000_000), commit),
        Some(PackBroken::Objects(2_000_000))
    );
    let most = u32::try_from(MAX_COMMIT_OBJECTS).expect("fits");
    assert_eq!(header_read_whole(&header(most), commit), None);
    assert_eq!(
        header_read_whole(&header(most + 1), commit),
        Some(PackBroken::Objects(most + 1))
    );
}

#[test]
fn the_bounds_are_what_the_docs_say() {
    assert_eq!(TREES_PACK_BYTES, 165_222_688);
    assert_eq!(MAX_PACK_BYTES, 1 << 30);
    assert_eq!(entry_bytes(1024), 1104);
}
