use super::*;

/// A pack stream: the header announcing `count` objects, then `body` bytes.
fn pack(count: u32, body: usize) -> Vec<u8> {
    let mut bytes = b"PACK\0\0\0\x02".to_vec();
    bytes.extend_from_slice(&count.to_be_bytes());
    bytes.resize(12 + body, 0x5a);
    bytes
}

/// Reads `bytes` through [`BoundedPack`] in chunks of `chunk` (the buffer of the reader below):
/// what came through, and the refusal, if any.
fn read_bounded(
    bytes: &[u8],
    bounds: PackBounds,
    chunk: usize,
) -> (usize, Option<PackBoundBroken>) {
    let over = Cell::new(None);
    let mut inner = std::io::BufReader::with_capacity(chunk, bytes);
    let mut bounded = BoundedPack::new(&mut inner, Limit::Blobs(bounds), &over);
    let mut out = Vec::new();
    let result = bounded.read_to_end(&mut out);
    let why = over.take();
    assert_eq!(
        result.is_err(),
        why.is_some(),
        "an error is a recorded refusal"
    );
    (out.len(), why)
}

fn bounds(objects: u64, total_bytes: u64) -> PackBounds {
    PackBounds {
        objects,
        object_bytes: total_bytes,
        total_bytes,
    }
}

#[test]
fn a_pack_within_its_bounds_passes_whole() {
    for chunk in [1, 5, 12, 4096] {
        let bytes = pack(2, 1000);
        assert_eq!(
            read_bounded(&bytes, bounds(2, 1000), chunk),
            (bytes.len(), None)
        );
    }
}

#[test]
fn a_header_announcing_more_objects_than_asked_for_stops_the_pack_after_it() {
    for chunk in [1, 5, 12, 4096] {
        let (read, why) = read_bounded(&pack(3, 100), bounds(2, 1 << 20), chunk);
        assert_eq!(why, Some(PackBoundBroken::Objects(3)));
        // Nothing past what was buffered with the header reached the reader.
        assert!(
            read < 12 + chunk,
            "{read} bytes read with chunks of {chunk}"
        );
    }
}

#[test]
fn a_pack_longer_than_its_objects_can_take_is_cut_off() {
    let limits = bounds(1, 1000);
    let max = limits.pack_bytes() as usize;
    let (read, why) = read_bounded(&pack(1, 10 * max), limits, 64);
    assert_eq!(why, Some(PackBoundBroken::Bytes(max as u64)));
    assert!(read <= max + 64, "{read} bytes read, over {max}");
    // The bound itself is not refused.
    assert_eq!(read_bounded(&pack(1, max - 12), limits, 64).1, None);
}

/// The refusal of a reader that, as gix, reads the 12 bytes of the pack header and nothing more
/// before it looks at them, from a stream that brings the whole pack in one read.
fn header_read_whole(bytes: &[u8], limit: Limit) -> Option<PackBoundBroken> {
    let over = Cell::new(None);
    let mut inner = std::io::BufReader::with_capacity(8192, bytes);
    let mut bounded = BoundedPack::new(&mut inner, limit, &over);
    let mut header = [0; 12];
    let read = bounded.read_exact(&mut header);
    assert_eq!(read.is_err(), over.get().is_some());
    over.get()
}

#[test]
fn a_header_over_the_bound_is_refused_before_it_is_read_even_when_the_pack_comes_whole() {
    // Three or 42 objects for two blobs: the whole pack fits in one read of 8 KiB.
    for count in [3, 42] {
        assert_eq!(
            header_read_whole(&pack(count, 1000), Limit::Blobs(bounds(2, 1 << 20))),
            Some(PackBoundBroken::Objects(count))
        );
    }
    assert_eq!(
        header_read_whole(&pack(2, 1000), Limit::Blobs(bounds(2, 1 << 20))),
        None
    );
}

#[test]
fn a_commit_pack_announcing_more_objects_than_a_tree_may_hold_is_refused_by_its_count() {
    assert_eq!(
        header_read_whole(&pack(2_000_000, 100), Limit::Commit),
        Some(PackBoundBroken::Objects(2_000_000))
    );
    let most = u32::try_from(MAX_COMMIT_OBJECTS).expect("fits");
    assert_eq!(header_read_whole(&pack(most, 100), Limit::Commit), None);
    assert_eq!(
        header_read_whole(&pack(most + 1, 100), Limit::Commit),
        Some(PackBoundBroken::Objects(most + 1))
    );
}
