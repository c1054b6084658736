//! The pinned fetch, on gix's protocol crates: one connection, one handshake, then one `fetch`
//! command for the commit and its trees (`filter blob:none`, when the server offers `filter`)
//! and, once the caller has walked those trees and chosen the blobs it needs, one more for
//! exactly those blobs by id. gix's high-level fetch cannot send a filter (its
//! `remote::fetch::Prepare` builds the protocol arguments itself), so this layer drives
//! [`gix::protocol::fetch()`] with its own [`Negotiate`] — which wants the given ids, asks for the
//! filter and never sends a `have` — and writes each pack with gix's own
//! [`Bundle::write_to_directory`], verified like any fetched pack (every object re-hashed). It
//! is no second Git implementation: no pack, object or wire format is parsed here, except the
//! twelve-byte header of each pack, to bound its object count before any object is
//! read.
//!
//! When the server does not offer `filter`, the same connection fetches the whole commit
//! instead (depth 1), and no ref listing is asked for at all.
//!
//! Every pack is read through [`super::pack::BoundedPack`], under the bounds of its request
//! ([`Limit`]): the commit's pack holds at most [`MAX_COMMIT_OBJECTS`] objects (one per entry
//! its tree may hold, the commit and its root tree) and no more bytes than its trees may need
//! ([`super::pack::TREES_PACK_BYTES`]) or, whole, than [`super::pack::MAX_PACK_BYTES`]; the
//! blobs' pack is bounded by what was asked for ([`PackBounds`]): no more objects than ids
//! wanted, no object larger than the largest file the bundles' limits profiles allow (from each
//! object's header, before it is inflated), and no more bytes than those files could take
//! together. Every entry of every pack is held to the size it declares. A pack gix refuses
//! although every byte of it arrived is a malformed answer ([`Failed::Malformed`]), never a
//! reason to ask again for more.

use std::cell::Cell;
use std::num::NonZeroU32;

use gix::odb::pack::Bundle;
use gix::protocol::fetch::{Arguments, Negotiate, Response, Shallow, Tags, negotiate};

use super::options::{MAX_OBJECT_BYTES, Stops, transport_options};
pub use super::pack::MAX_COMMIT_OBJECTS;
use super::pack::{BoundedPack, MAX_PACK_BYTES, PackBroken, PackLimit, TREES_PACK_BYTES};

/// The blobs to fetch after the trees, and the bounds of their pack.
#[derive(Debug, Clone, Default)]
pub struct BlobRequest {
    /// The blobs, each once.
    pub ids: Vec<gix::ObjectId>,
    /// The largest object, inflated, the pack may hold (at most [`MAX_OBJECT_BYTES`]).
    pub object_bytes: u64,
    /// The most bytes the wanted objects may hold together, inflated.
    pub total_bytes: u64,
}

/// How the objects of the commit arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrived {
    /// The commit and its trees, then the requested blobs (or none, when the server had sent
    /// them with the trees).
    Partial,
    /// The whole commit at once: the server offers no `filter`, or the caller did not ask for it.
    Whole,
}

/// Why a pinned fetch failed.
pub(super) enum Failed<E> {
    /// The commit (and its trees) could not be fetched.
    Fetch(gix::Error),
    /// The server answered the fetch of the commit with a pack that does not hold it.
    CommitAbsent,
    /// The caller's selection refused the commit.
    Select(E),
    /// The blobs could not be fetched by id.
    Blobs(gix::Error),
    /// The blobs' pack broke its bounds ([`PackBounds`]).
    OverBounds(String),
    /// The commit's pack announced more objects than [`MAX_COMMIT_OBJECTS`].
    CommitPackTooLarge {
        /// The objects it announced.
        objects: u32,
    },
    /// A pack ran past the bytes its request may need, or an entry past the size it declares.
    PackOverBound(PackBroken),
    /// The server's pack is malformed (what gix or the bounded reader said).
    Malformed(String),
    /// The server answered the request for the blobs without some of them.
    Missing {
        /// How many were not sent.
        count: usize,
        /// The first of them.
        first: gix::ObjectId,
    },
}

/// Fetches commit `id` from `url` into `repo` at depth 1 over one connection: without blobs
/// when `partial` and the server offers `filter`, then (after `select` has chosen them from the
/// trees) exactly the blobs it asks for, those the first pack did not already hold. `select` is
/// called once the trees are in `repo`, whatever was fetched, and told whether the blobs are
/// still to come.
pub(super) fn fetch_pinned<E>(
    repo: &gix::Repository,
    url: &str,
    id: gix::ObjectId,
    stops: &Stops<'_>,
    root: &gix::progress::prodash::tree::Root,
    partial: bool,
    select: &mut dyn FnMut(&gix::Repository, gix::ObjectId, bool) -> Result<BlobRequest, E>,
) -> Result<Arrived, Failed<E>> {
    handshaken(repo, url, stops, root, |transport, handshake| {
        fetch_commit(
            repo,
            (transport, handshake),
            id,
            (stops, root),
            partial,
            select,
        )
    })
}

/// Connects `repo` to `url` under `stops` and runs the handshake (authenticating as the
/// repository's configuration says), then hands the transport and the handshake to `use_it`.
fn handshaken<T, E>(
    repo: &gix::Repository,
    url: &str,
    stops: &Stops<'_>,
    root: &gix::progress::prodash::tree::Root,
    use_it: impl FnOnce(
        &mut super::transport::Transport,
        &mut gix::protocol::Handshake,
    ) -> Result<T, Failed<E>>,
) -> Result<T, Failed<E>> {
    use gix::protocol::transport::client::TransportWithoutIO as _;

    let remote = repo
        .remote_at(url)
        .map_err(|e| Failed::Fetch(gix::Error::from_error(e)))?
        .with_fetch_tags(gix::remote::fetch::Tags::None);
    let mut connection =
        super::transport::connect(&remote, stops.until, &stops.refused).map_err(Failed::Fetch)?;
    if let Some(options) = transport_options(repo, url, stops.until).map_err(Failed::Fetch)? {
        connection
            .transport_mut()
            .configure(&*options)
            .map_err(|e| Failed::Fetch(gix::Error::from_error(e)))?;
    }
    let mut authenticate = connection.configured_credentials_for_current_url();
    let mut handshake = gix::protocol::handshake(
        connection.transport_mut(),
        gix::protocol::transport::Service::UploadPack,
        &mut authenticate,
        Vec::new(),
        &mut root.add_child("handshake"),
    )
    .map_err(Failed::Fetch)?;
    use_it(connection.transport_mut(), &mut handshake)
}

/// The fetch of [`fetch_pinned`] once the handshake is done.
fn fetch_commit<E>(
    repo: &gix::Repository,
    (transport, handshake): (
        &mut super::transport::Transport,
        &mut gix::protocol::Handshake,
    ),
    id: gix::ObjectId,
    (stops, root): (&Stops<'_>, &gix::progress::prodash::tree::Root),
    partial: bool,
    select: &mut dyn FnMut(&gix::Repository, gix::ObjectId, bool) -> Result<BlobRequest, E>,
) -> Result<Arrived, Failed<E>> {
    let filter = partial && offers_filter(handshake);
    let depth = Shallow::DepthAtRemote(NonZeroU32::MIN);
    let commit = Pack {
        wants: &[id],
        shallow: &depth,
        filter: filter.then_some("blob:none"),
        limit: if filter { Limit::Trees } else { Limit::Whole },
    };
    commit
        .fetch(repo, &mut *transport, handshake, stops, root)
        .map_err(|e| match e {
            PackError::Fetch(e) => Failed::Fetch(e),
            PackError::OverBounds(why) => Failed::OverBounds(why),
            PackError::TooManyObjects(objects) => Failed::CommitPackTooLarge { objects },
            PackError::TooLarge(why) => Failed::PackOverBound(why),
            PackError::Malformed(why) => Failed::Malformed(why),
        })?;
    // Not a commit that is not one (the tree walk would say so): a server, cache or proxy that
    // answered with the objects of another request.
    if !repo.has_object(id) {
        return Err(Failed::CommitAbsent);
    }
    let request = select(repo, id, filter).map_err(Failed::Select)?;
    if !filter {
        return Ok(Arrived::Whole);
    }
    // A server may send blobs with the trees (a filter is only a request): those are here, in
    // the pack the tree walk has already loaded — so looked up without a rescan of the objects
    // directory, which every miss would otherwise cost (17 % of a cold prepare of 2,900 blobs).
    let missing: Vec<gix::ObjectId> = request
        .ids
        .iter()
        .copied()
        .filter(|blob| !repo.objects.exists_without_refresh(blob))
        .collect();
    if missing.is_empty() {
        return Ok(Arrived::Partial);
    }
    let bounds = PackBounds {
        objects: missing.len() as u64,
        object_bytes: request.object_bytes.min(MAX_OBJECT_BYTES),
        total_bytes: request.total_bytes,
    };
    let blobs = Pack {
        wants: &missing,
        shallow: &Shallow::NoChange,
        filter: None,
        limit: Limit::Blobs(bounds),
    };
    blobs
        .fetch(repo, &mut *transport, handshake, stops, root)
        .map_err(|e| match e {
            PackError::Fetch(e) => Failed::Blobs(e),
            PackError::OverBounds(why) => Failed::OverBounds(why),
            PackError::TooManyObjects(objects) => Failed::OverBounds(format!(
                "the server answered a request for {} blob(s) with a pack of {objects} objects",
                bounds.objects
            )),
            PackError::TooLarge(why) => Failed::PackOverBound(why),
            PackError::Malformed(why) => Failed::Malformed(why),
        })?;
    let mut absent = missing.iter().filter(|blob| !repo.has_object(blob));
    if let Some(first) = absent.next() {
        return Err(Failed::Missing {
            count: 1 + absent.count(),
            first: *first,
        });
    }
    Ok(Arrived::Partial)
}

/// Every branch and tag of `url`, with their history, into `repo`, for a server that refused
/// the commit by id: their ids from the handshake (protocol v0/v1) or from a ref listing (v2),
/// then one `fetch` of those ids, its pack bounded in bytes as a whole commit's is
/// ([`Limit::History`]).
pub(super) fn fetch_history(
    repo: &gix::Repository,
    url: &str,
    stops: &Stops<'_>,
    root: &gix::progress::prodash::tree::Root,
) -> Result<(), Failed<std::convert::Infallible>> {
    handshaken(repo, url, stops, root, |transport, handshake| {
        let refs = match handshake.refs.take() {
            Some(refs) => refs,
            None => gix::protocol::LsRefsCommand::new(None, &handshake.capabilities, agent())
                .invoke_blocking(&mut *transport, &mut root.add_child("list refs"), false)
                .map_err(Failed::Fetch)?,
        };
        let mut wants: Vec<gix::ObjectId> = refs
            .iter()
            .filter_map(|r| {
                let (name, target, _) = r.unpack();
                let branch_or_tag =
                    name.starts_with(b"refs/heads/") || name.starts_with(b"refs/tags/");
                branch_or_tag
                    .then(|| target.map(ToOwned::to_owned))
                    .flatten()
            })
            .collect();
        wants.sort_unstable();
        wants.dedup();
        let history = Pack {
            wants: &wants,
            shallow: &Shallow::NoChange,
            filter: None,
            limit: Limit::History,
        };
        history
            .fetch(repo, &mut *transport, handshake, stops, root)
            .map_err(|e| match e {
                PackError::Fetch(e) => Failed::Fetch(e),
                PackError::OverBounds(why) => Failed::OverBounds(why),
                PackError::TooManyObjects(objects) => Failed::CommitPackTooLarge { objects },
                PackError::TooLarge(why) => Failed::PackOverBound(why),
                PackError::Malformed(why) => Failed::Malformed(why),
            })
    })
}

/// How skillfold names itself to a server.
fn agent() -> gix::protocol::command::Feature {
    ("agent", Some(gix::protocol::agent(gix::env::agent())))
}

/// Whether the server's `fetch` command accepts a `filter`.
fn offers_filter(handshake: &gix::protocol::Handshake) -> bool {
    gix::protocol::Command::Fetch
        .default_features(handshake.server_protocol_version, &handshake.capabilities)
        .iter()
        .any(|(name, _)| *name == "filter")
}

/// What a pack answering a request for blobs may hold.
#[derive(Debug, Clone, Copy)]
pub struct PackBounds {
    /// Objects, from the pack header.
    pub objects: u64,
    /// Bytes of any one object, inflated, from its header (gix's allocation limit).
    pub object_bytes: u64,
    /// Bytes of all objects inflated; the pack's own bytes are bounded by what deflate can
    /// make of them ([`PackBounds::pack_bytes`]).
    pub total_bytes: u64,
}

/// What gix's index of a pack keeps per object (its allocation limit bounds that table too).
const INDEX_BYTES_PER_OBJECT: u64 = 256;

impl PackBounds {
    /// gix's allocation limit for this pack: one object's inflated bytes, or the index table of
    /// `objects` entries if that is larger — the limit bounds both, so a limit of one object's
    /// size alone refused every request of more than ~2,000 blobs. Each object's own size is
    /// still held to `object_bytes` by the file checks of the bundles it belongs to, and the
    /// pack's by `total_bytes`.
    fn alloc_limit(self) -> u64 {
        self.object_bytes
            .max(self.objects.saturating_mul(INDEX_BYTES_PER_OBJECT))
    }
}

impl PackBounds {
    /// The most bytes a pack of these objects takes on the wire
    /// ([`super::pack::pack_bytes`]: deflate's worst case with a margin, each entry's framing,
    /// the pack's header and trailing checksum).
    fn pack_bytes(&self) -> u64 {
        super::pack::pack_bytes(self.objects, self.total_bytes)
    }
}

/// What the pack answering one `fetch` command may hold.
#[derive(Debug, Clone, Copy)]
enum Limit {
    /// The commit and its trees at depth 1 (`filter blob:none`): at most
    /// [`MAX_COMMIT_OBJECTS`] objects, none over [`MAX_OBJECT_BYTES`], and
    /// [`TREES_PACK_BYTES`].
    Trees,
    /// The whole commit at depth 1: at most [`MAX_COMMIT_OBJECTS`] objects, none over
    /// [`MAX_OBJECT_BYTES`], and [`MAX_PACK_BYTES`].
    Whole,
    /// The blobs asked for.
    Blobs(PackBounds),
    /// Every branch and tag with their history: any number of objects, none over
    /// [`MAX_OBJECT_BYTES`], and [`MAX_PACK_BYTES`].
    History,
}

impl Limit {
    /// The objects and bytes the pack may hold.
    fn pack(self) -> PackLimit {
        match self {
            Limit::Trees => PackLimit {
                objects: MAX_COMMIT_OBJECTS,
                bytes: TREES_PACK_BYTES,
            },
            Limit::Whole => PackLimit {
                objects: MAX_COMMIT_OBJECTS,
                bytes: MAX_PACK_BYTES,
            },
            Limit::Blobs(bounds) => PackLimit {
                objects: bounds.objects,
                bytes: bounds.pack_bytes(),
            },
            Limit::History => PackLimit {
                objects: u64::from(u32::MAX),
                bytes: MAX_PACK_BYTES,
            },
        }
    }

    /// gix's allocation limit for the pack.
    fn alloc_limit(self) -> u64 {
        match self {
            Limit::Trees | Limit::Whole | Limit::History => MAX_OBJECT_BYTES,
            Limit::Blobs(bounds) => bounds.alloc_limit(),
        }
    }
}

/// One `fetch` command.
struct Pack<'a> {
    wants: &'a [gix::ObjectId],
    shallow: &'a Shallow,
    filter: Option<&'a str>,
    limit: Limit,
}

enum PackError {
    Fetch(gix::Error),
    /// The pack broke the bounds of [`Limit::Blobs`] (why): worth asking for the whole commit.
    OverBounds(String),
    /// The pack's header announced more objects than [`Limit::pack`] allows (how many).
    TooManyObjects(u32),
    /// The commit's pack ran past its bytes, or any pack's entry past the size it declares.
    TooLarge(PackBroken),
    /// The pack is malformed (why).
    Malformed(String),
}

impl Pack<'_> {
    /// Sends the command on `transport` and writes the pack the server answers into `repo`'s
    /// object database.
    fn fetch<T: gix::protocol::transport::client::blocking_io::Transport>(
        &self,
        repo: &gix::Repository,
        transport: &mut T,
        handshake: &mut gix::protocol::Handshake,
        stops: &Stops<'_>,
        root: &gix::progress::prodash::tree::Root,
    ) -> Result<(), PackError> {
        let shallow_file = repo.shallow_file().map_err(PackError::Fetch)?;
        let pack_dir = repo.objects.store_ref().path().join("pack");
        let options = gix::odb::pack::bundle::write::Options {
            alloc_limit_bytes: Some(
                usize::try_from(self.limit.alloc_limit()).unwrap_or(usize::MAX),
            ),
            ..Default::default()
        };
        let over: Cell<Option<PackBroken>> = Cell::new(None);
        // Whether the stream below the pack failed, and whether gix refused the pack.
        let (inner_failed, pack_failed) = (Cell::new(false), Cell::new(false));
        let mut wants = Wants {
            ids: self.wants,
            filter: self.filter,
        };
        let result = gix::protocol::fetch(
            &mut wants,
            |pack, progress, interrupt| {
                let mut bounded = BoundedPack::new(pack, self.limit.pack(), &over, &inner_failed);
                Bundle::write_to_directory(
                    &mut bounded,
                    Some(&pack_dir),
                    progress,
                    interrupt,
                    Some(repo.objects.clone()),
                    repo.object_hash(),
                    options,
                )
                .map(|_| true)
                .inspect_err(|_| pack_failed.set(true))
            },
            root.add_child("fetch"),
            stops.stop,
            gix::protocol::fetch::Context {
                handshake,
                transport,
                user_agent: agent(),
                trace_packetlines: false,
            },
            gix::protocol::fetch::Options {
                shallow_file,
                // The scratch repository is skillfold's own: the process umask, as for every
                // file it writes.
                shared_repository_permissions: Default::default(),
                shallow: self.shallow,
                tags: Tags::None,
                reject_shallow_remote: false,
            },
        );
        // An error the server reported on its side-band ends the fetch, whatever came with it.
        if super::options::note_server_error(root, stops) {
            return Err(PackError::Fetch(gix::Error::from_error(
                std::io::Error::other("the server reported an error"),
            )));
        }
        let blobs = match self.limit {
            Limit::Blobs(bounds) => Some(bounds),
            Limit::Trees | Limit::Whole | Limit::History => None,
        };
        match (over.take(), blobs) {
            (Some(PackBroken::Objects(objects)), _) => {
                return Err(PackError::TooManyObjects(objects));
            }
            (Some(PackBroken::Bytes(max)), Some(bounds)) => {
                return Err(PackError::OverBounds(format!(
                    "the pack of {} requested blob(s) runs past {max} bytes, more than the \
                     bundles' limits allow them together",
                    bounds.objects
                )));
            }
            (Some(why @ (PackBroken::Bytes(_) | PackBroken::Entry { .. })), _) => {
                return Err(PackError::TooLarge(why));
            }
            (Some(why @ PackBroken::Malformed(_)), _) => {
                return Err(PackError::Malformed(why.to_string()));
            }
            (None, _) => {}
        }
        match (result, blobs) {
            (Err(e), Some(bounds)) if e.is_resource_exhausted() => {
                Err(PackError::OverBounds(format!(
                    "an object of the pack is larger than {} bytes, the largest file the bundles' \
                     limits allow",
                    bounds.object_bytes
                )))
            }
            // Every byte arrived and gix refused the pack: a malformed answer (an object over
            // the bound of any object is refused as such, by the caller).
            (Err(e), _)
                if pack_failed.get()
                    && !inner_failed.get()
                    && !e.is_resource_exhausted()
                    && !e.is_cancelled()
                    && !stops.interrupted() =>
            {
                Err(PackError::Malformed(super::fetch_error::chain(&e)))
            }
            (result, _) => result.map(|_| ()).map_err(PackError::Fetch),
        }
    }
}

/// The negotiation of a pinned fetch: the ids wanted, the filter, and no `have` (the repository
/// is new, or holds only what an earlier command of the same fetch brought).
struct Wants<'a> {
    ids: &'a [gix::ObjectId],
    filter: Option<&'a str>,
}

impl Negotiate for Wants<'_> {
    fn mark_complete_and_common_ref(&mut self) -> gix::Result<negotiate::Action> {
        Ok(negotiate::Action::MustNegotiate {
            remote_ref_target_known: Vec::new(),
        })
    }

    fn add_wants(&mut self, arguments: &mut Arguments, _known: &[bool]) -> bool {
        for id in self.ids {
            arguments.want(id);
        }
        // Only offered filters are asked for (`Arguments::filter` ignores the others).
        if let Some(filter) = self.filter
            && arguments.can_use_filter()
        {
            arguments.filter(filter);
        }
        !self.ids.is_empty()
    }

    fn one_round(
        &mut self,
        _state: &mut negotiate::one_round::State,
        _arguments: &mut Arguments,
        _previous: Option<&Response>,
    ) -> gix::Result<(negotiate::Round, bool)> {
        // Nothing to negotiate: the first round says `done`.
        Ok((
            negotiate::Round {
                haves_sent: 0,
                in_vain: 0,
                haves_to_send: 0,
                previous_response_had_at_least_one_in_common: false,
            },
            true,
        ))
    }
}
