//! The open connections of `serve --listen`, counted by who they are for: behind an ingress, a
//! mesh sidecar or a reverse proxy every client arrives from one address, so an address bounds
//! only the connections that have not (yet) shown who they are, and a credential bounds the rest.
//!
//! A connection is *unauthenticated* from its accept until a request on it presents a credential
//! an endpoint accepts (a static token, or an access token of `--oauth`); from then on, for the
//! rest of its life, it counts for that credential's key (the token's hash, or the access token's
//! issuer and subject), whatever later requests on it present (a proxy may pool it for others).
//! Unauthenticated connections are bounded per client address, those of one key per key, and all
//! of them together in total, with [`PROBE_HEADROOM`] more kept for probes. A connection whose
//! first authenticated request names a key at its bound gets 429 and is closed.
//!
//! An address at its bound does not refuse a new connection, which may be a client about to
//! present a token (a proxy opens many at a time, and a slow client may take a while to speak): it
//! is served *waiting*, holding no place, for up to [`ADMISSION_WAIT`] from its accept. A request
//! on it that presents an accepted credential gives it its key's place at once (within the key's
//! bound and the total), whatever its address holds; a request without one (or a probe's, or a
//! refusal's answer, which need no place) waits for a place of its address for the rest of that
//! time (one that authenticates gives its place back), else gets 503 and the connection is
//! closed; a waiting connection that has had a request but no place when its time is up, with no
//! request under way, is closed (one that has sent nothing is closed by the header timeout, as
//! any connection is). At most [`MAX_WAITING`] wait at once, and when all do, a newcomer takes
//! the waiting place of the oldest that has sent no request (that one is closed). A waiting
//! connection whose request shows no credential may also take the place of its address's
//! unauthenticated connection idle longest, if one has been idle (no request under way, none
//! since its accept or its last answer) for [`EVICTION_IDLE`]; that one is closed. A flood that
//! sends nothing thus waits for its own places, a client that speaks recycles them, and a client
//! with a token is never held back by its address. Connections over the total get the probe
//! headroom, at most [`PROBE_PLACES_PER_CLIENT`] of it per address: an unauthenticated flood
//! from one address holds its own places only, never an authenticated client's, and at most a
//! quarter of the probes'.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::metrics::Metrics;

/// Connections beyond `--max-connections` still admitted, each only to answer `GET /healthz`
/// and `GET /readyz` once and be closed: probes stay answerable while clients hold every
/// ordinary place.
pub const PROBE_HEADROOM: usize = 16;

/// At most this many of the probe headroom's places are held by one client address.
pub const PROBE_PLACES_PER_CLIENT: usize = 4;

/// How long a connection admitted for a probe may take to send its headers.
pub const PROBE_HEADER_TIMEOUT: Duration = Duration::from_secs(2);

/// How long an unauthenticated connection must have been idle before a waiting connection from
/// its address, whose request shows no credential, may take its place.
pub const EVICTION_IDLE: Duration = Duration::from_secs(2);

/// How long, from its accept, a connection from an address at its bound may wait for a place.
pub const ADMISSION_WAIT: Duration = Duration::from_secs(5);

/// At most this many connections wait for a place at once, from every address together.
pub const MAX_WAITING: usize = 256;

/// How often a waiting connection looks again for a place (an idle connection may have become
/// idle long enough to give way).
const RECHECK: Duration = Duration::from_millis(50);

/// How often a waiting connection whose time is up looks again whether it may be closed (a
/// request under way, or none yet).
const EXPIRY_RECHECK: Duration = Duration::from_millis(200);

/// What a new connection may do.
#[derive(Debug)]
pub enum Admission {
    /// Everything.
    Full(Slot),
    /// Only the probes, once (the ordinary places are taken).
    Probe(Slot),
    /// Be served while it waits for a place ([`Link::authenticated`], [`Link::placed`]); closed
    /// when [`Link::closed`] resolves.
    Waiting(Slot),
    /// Nothing: close it at once.
    Refused,
}

/// Who a connection counts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// No credential yet; counts for its address.
    Unauthenticated,
    /// Counts for this key.
    Key([u8; 32]),
    /// A place of the probe headroom.
    Probe,
    /// Served, but holding no place yet; counted as waiting.
    Waiting,
    /// Closed to make room (or out of time to wait); its place, if any, was given back.
    Evicted,
}

/// What is shared between a connection's task and the counts: when it went idle, and the signal
/// that closes it.
#[derive(Debug)]
struct Activity {
    id: u64,
    client: IpAddr,
    /// When it was accepted (a waiting connection's time runs from then).
    accepted: tokio::time::Instant,
    /// Milliseconds since the counts' epoch when it last went idle; [`BUSY`] during a request.
    idle_since: AtomicU64,
    evict: Notify,
    authenticated: AtomicBool,
    /// It holds a place (it is not waiting).
    placed: AtomicBool,
    /// A request has come on it.
    spoken: AtomicBool,
}

const BUSY: u64 = u64::MAX;

#[derive(Debug, Default)]
struct Counts {
    /// Every ordinary connection (not the probe headroom's, not the waiting).
    total: usize,
    /// The unauthenticated connections of each address, oldest first.
    unauthenticated: HashMap<IpAddr, Vec<Arc<Activity>>>,
    unauthenticated_total: usize,
    /// The connections of each key.
    keys: HashMap<[u8; 32], usize>,
    authenticated_total: usize,
    /// The probe headroom's places, per address.
    probes: HashMap<IpAddr, usize>,
    probes_total: usize,
    /// The connections waiting for a place, oldest first.
    waiters: Vec<Arc<Activity>>,
    classes: HashMap<u64, Class>,
    next_id: u64,
}

/// What room there is for a connection from one address.
enum Room {
    /// An ordinary place.
    Ordinary,
    /// A place of the probe headroom.
    Probe,
    /// None: every place and the probes' are taken.
    None,
    /// None of its address's: it waits.
    Wait,
}

/// The open connections, counted.
#[derive(Debug)]
pub struct Connections {
    max_total: usize,
    max_per_client: usize,
    max_per_key: usize,
    epoch: Instant,
    counts: Mutex<Counts>,
    /// Told when an unauthenticated place is given back.
    freed: Notify,
    metrics: Arc<Metrics>,
}

/// Why a waiting connection, or an unauthenticated one presenting a credential, got no place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoPlace {
    /// Its key is at its bound (`--max-connections-per-token`).
    Key,
    /// Every ordinary place is taken (`--max-connections`).
    Server,
    /// Its address is at its bound (`--max-connections-per-client`) and stayed so while it
    /// could wait.
    Client,
}

impl Connections {
    /// At most `max_total` connections, `max_per_client` unauthenticated ones from one address,
    /// `max_per_key` of one key; counted in `metrics`.
    pub fn new(
        max_total: usize,
        max_per_client: usize,
        max_per_key: usize,
        metrics: Arc<Metrics>,
    ) -> Arc<Connections> {
        Arc::new(Connections {
            max_total,
            max_per_client,
            max_per_key,
            epoch: Instant::now(),
            counts: Mutex::new(Counts::default()),
            freed: Notify::new(),
            metrics,
        })
    }

    fn counts(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(BUSY - 1)
    }

    /// Admits a connection from `client`: a place, a wait for one, or nothing.
    pub fn admit(self: &Arc<Self>, client: IpAddr) -> Admission {
        let mut counts = self.counts();
        let activity = self.activity(&mut counts, client);
        let admission = match self.room(&mut counts, client, false) {
            Room::Ordinary => {
                self.take_ordinary(&mut counts, &activity);
                Admission::Full(self.slot(activity))
            }
            Room::Probe => {
                self.take_probe(&mut counts, &activity);
                Admission::Probe(self.slot(activity))
            }
            Room::None => {
                counts.classes.remove(&activity.id);
                self.metrics.connection_refused("server");
                Admission::Refused
            }
            Room::Wait => {
                // Every waiting place taken: the oldest waiter that has sent no request gives
                // way (a flood that sends nothing cannot keep the waiting room from clients).
                let room = counts.waiters.len() < MAX_WAITING || {
                    let silent = counts
                        .waiters
                        .iter()
                        .position(|a| !a.spoken.load(Ordering::Acquire));
                    silent
                        .map(|i| {
                            let displaced = counts.waiters.remove(i);
                            self.close(&mut counts, &displaced);
                        })
                        .is_some()
                };
                if room {
                    counts.classes.insert(activity.id, Class::Waiting);
                    activity.placed.store(false, Ordering::Release);
                    counts.waiters.push(Arc::clone(&activity));
                    Admission::Waiting(self.slot(activity))
                } else {
                    counts.classes.remove(&activity.id);
                    self.metrics.connection_refused("client");
                    Admission::Refused
                }
            }
        };
        self.publish(&counts);
        admission
    }

    /// A new connection's activity, registered (as unauthenticated until placed otherwise).
    fn activity(&self, counts: &mut Counts, client: IpAddr) -> Arc<Activity> {
        let id = counts.next_id;
        counts.next_id += 1;
        counts.classes.insert(id, Class::Unauthenticated);
        Arc::new(Activity {
            id,
            client,
            accepted: tokio::time::Instant::now(),
            idle_since: AtomicU64::new(self.now()),
            evict: Notify::new(),
            authenticated: AtomicBool::new(false),
            placed: AtomicBool::new(true),
            spoken: AtomicBool::new(false),
        })
    }

    /// The room for one more unauthenticated connection of `client` now. At its address's bound,
    /// with `may_evict`, the address's unauthenticated connection idle longest gives way if it
    /// has been idle long enough.
    fn room(&self, counts: &mut Counts, client: IpAddr, may_evict: bool) -> Room {
        let mine = counts.unauthenticated.get(&client).map_or(0, Vec::len);
        if mine >= self.max_per_client && !(may_evict && self.evict(counts, client).is_some()) {
            return Room::Wait;
        }
        if counts.total < self.max_total {
            return Room::Ordinary;
        }
        let probes = counts.probes.get(&client).copied().unwrap_or(0);
        if counts.probes_total < PROBE_HEADROOM && probes < PROBE_PLACES_PER_CLIENT {
            return Room::Probe;
        }
        Room::None
    }

    /// `activity` takes an ordinary place of its address.
    fn take_ordinary(&self, counts: &mut Counts, activity: &Arc<Activity>) {
        counts.total += 1;
        counts.unauthenticated_total += 1;
        counts.classes.insert(activity.id, Class::Unauthenticated);
        counts
            .unauthenticated
            .entry(activity.client)
            .or_default()
            .push(Arc::clone(activity));
        activity.placed.store(true, Ordering::Release);
    }

    /// `activity` takes a place of the probe headroom.
    fn take_probe(&self, counts: &mut Counts, activity: &Arc<Activity>) {
        counts.probes_total += 1;
        *counts.probes.entry(activity.client).or_insert(0) += 1;
        counts.classes.insert(activity.id, Class::Probe);
        activity.idle_since.store(BUSY, Ordering::Release);
    }

    fn slot(self: &Arc<Self>, activity: Arc<Activity>) -> Slot {
        Slot {
            link: Link {
                connections: Arc::clone(self),
                activity,
            },
        }
    }

    /// Marks `activity` closed to make room and tells its task; its places must be given back
    /// by the caller.
    fn close(&self, counts: &mut Counts, activity: &Activity) {
        counts.classes.insert(activity.id, Class::Evicted);
        activity.evict.notify_one();
    }

    /// Closes `client`'s unauthenticated connection idle longest, if one has been idle for
    /// [`EVICTION_IDLE`]; its places are free at once.
    fn evict(&self, counts: &mut Counts, client: IpAddr) -> Option<()> {
        let now = self.now();
        let least = u64::try_from(EVICTION_IDLE.as_millis()).unwrap_or(BUSY);
        let list = counts.unauthenticated.get_mut(&client)?;
        let (index, _) = list
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let since = a.idle_since.load(Ordering::Acquire);
                (since != BUSY && now.saturating_sub(since) >= least).then_some((i, since))
            })
            .min_by_key(|(_, since)| *since)?;
        let victim = list.remove(index);
        if list.is_empty() {
            counts.unauthenticated.remove(&client);
        }
        counts.unauthenticated_total -= 1;
        counts.total -= 1;
        self.close(counts, &victim);
        self.metrics.connection_evicted();
        Some(())
    }

    fn release(&self, link: &Link) {
        let mut counts = self.counts();
        let class = counts.classes.remove(&link.activity.id);
        match class {
            Some(Class::Unauthenticated) => {
                Self::forget_unauthenticated(&mut counts, &link.activity);
                counts.total = counts.total.saturating_sub(1);
                self.freed.notify_waiters();
            }
            Some(Class::Key(key)) => {
                decrement(&mut counts.keys, &key);
                counts.authenticated_total = counts.authenticated_total.saturating_sub(1);
                counts.total = counts.total.saturating_sub(1);
            }
            Some(Class::Probe) => {
                decrement(&mut counts.probes, &link.activity.client);
                counts.probes_total = counts.probes_total.saturating_sub(1);
            }
            Some(Class::Waiting) => Self::forget_waiter(&mut counts, &link.activity),
            Some(Class::Evicted) | None => {}
        }
        self.publish(&counts);
    }

    fn forget_unauthenticated(counts: &mut Counts, activity: &Activity) {
        if let Some(list) = counts.unauthenticated.get_mut(&activity.client) {
            list.retain(|a| a.id != activity.id);
            if list.is_empty() {
                counts.unauthenticated.remove(&activity.client);
            }
        }
        counts.unauthenticated_total = counts.unauthenticated_total.saturating_sub(1);
    }

    fn forget_waiter(counts: &mut Counts, activity: &Activity) {
        counts.waiters.retain(|a| a.id != activity.id);
    }

    /// Moves `link` from its address's count (or the waiting) to `key`'s, unless that key is at
    /// its bound (or, waiting, every ordinary place is taken).
    fn authenticate(&self, link: &Link, key: [u8; 32]) -> Result<(), NoPlace> {
        let mut counts = self.counts();
        let activity = &link.activity;
        let class = counts.classes.get(&activity.id).copied();
        if !matches!(class, Some(Class::Unauthenticated | Class::Waiting)) {
            return Ok(());
        }
        if counts.keys.get(&key).copied().unwrap_or(0) >= self.max_per_key {
            self.metrics.connection_refused("token");
            return Err(NoPlace::Key);
        }
        if class == Some(Class::Waiting) {
            if counts.total >= self.max_total {
                self.metrics.connection_refused("server");
                return Err(NoPlace::Server);
            }
            Self::forget_waiter(&mut counts, activity);
            counts.total += 1;
            activity.placed.store(true, Ordering::Release);
        } else {
            Self::forget_unauthenticated(&mut counts, activity);
            self.freed.notify_waiters();
        }
        *counts.keys.entry(key).or_insert(0) += 1;
        counts.authenticated_total += 1;
        counts.classes.insert(activity.id, Class::Key(key));
        activity.authenticated.store(true, Ordering::Release);
        self.publish(&counts);
        Ok(())
    }

    /// Gives waiting `link` a place of its address: at once if there is one (or an idle one gives
    /// way), else when one is given back, until its time to wait is up.
    async fn place(&self, link: &Link) -> Result<(), NoPlace> {
        let activity = &link.activity;
        let deadline = activity.accepted + ADMISSION_WAIT;
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut counts = self.counts();
                if counts.classes.get(&activity.id) != Some(&Class::Waiting) {
                    return Ok(());
                }
                match self.room(&mut counts, activity.client, true) {
                    Room::Ordinary => {
                        Self::forget_waiter(&mut counts, activity);
                        self.take_ordinary(&mut counts, activity);
                        self.publish(&counts);
                        return Ok(());
                    }
                    Room::Probe | Room::None => {
                        self.metrics.connection_refused("server");
                        return Err(NoPlace::Server);
                    }
                    Room::Wait => {}
                }
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                self.metrics.connection_refused("client");
                return Err(NoPlace::Client);
            }
            tokio::select! {
                () = freed => {}
                () = tokio::time::sleep((deadline - now).min(RECHECK)) => {}
            }
        }
    }

    /// Resolves once waiting `link`'s time to wait is up, a request has come on it, none is under
    /// way and no place was found (it is then closed); never for a connection that has a place.
    /// One that has sent no request is left to the header timeout, as a placed one is: a client
    /// slow to speak (a busy host driving many sessions) is not closed sooner for its address.
    async fn expire(&self, link: &Link) {
        let activity = &link.activity;
        if !activity.placed.load(Ordering::Acquire) {
            tokio::time::sleep_until(activity.accepted + ADMISSION_WAIT).await;
        }
        // A place, once taken, is never given back for a wait.
        while !activity.placed.load(Ordering::Acquire) {
            {
                let mut counts = self.counts();
                match counts.classes.get(&activity.id) {
                    Some(Class::Waiting) => {
                        if activity.spoken.load(Ordering::Acquire)
                            && activity.idle_since.load(Ordering::Acquire) != BUSY
                        {
                            Self::forget_waiter(&mut counts, activity);
                            self.close(&mut counts, activity);
                            self.metrics.connection_refused("client");
                            self.publish(&counts);
                            return;
                        }
                    }
                    // Closed to make room already: told through its `evict`.
                    _ => break,
                }
            }
            tokio::time::sleep(EXPIRY_RECHECK).await;
        }
        std::future::pending::<()>().await;
    }

    fn publish(&self, counts: &Counts) {
        self.metrics.connections(
            counts.unauthenticated_total,
            counts.authenticated_total,
            counts.probes_total,
            counts.waiters.len(),
        );
    }

    /// The connections open (unauthenticated, authenticated, probes, waiting).
    #[cfg(test)]
    fn open(&self) -> (usize, usize, usize, usize) {
        let counts = self.counts();
        (
            counts.unauthenticated_total,
            counts.authenticated_total,
            counts.probes_total,
            counts.waiters.len(),
        )
    }
}

fn decrement<K: std::hash::Hash + Eq>(map: &mut HashMap<K, usize>, key: &K) {
    if let Some(n) = map.get_mut(key) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            map.remove(key);
        }
    }
}

/// One connection's place (or its waiting); given back when dropped.
#[derive(Debug)]
pub struct Slot {
    link: Link,
}

impl Slot {
    /// The handle its requests carry.
    pub fn link(&self) -> Link {
        self.link.clone()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.link.connections.release(&self.link);
    }
}

/// A connection as its requests see it: whether it is idle, whom it counts for, and whether it
/// was closed to make room.
#[derive(Debug, Clone)]
pub struct Link {
    connections: Arc<Connections>,
    activity: Arc<Activity>,
}

impl Link {
    /// Marks a request under way until the guard is dropped (held by its answer's body).
    pub fn busy(&self) -> ActiveRequest {
        self.activity.idle_since.store(BUSY, Ordering::Release);
        self.activity.spoken.store(true, Ordering::Release);
        ActiveRequest { link: self.clone() }
    }

    /// Whether it counts for a key already (it is never closed to make room then).
    pub fn is_authenticated(&self) -> bool {
        self.activity.authenticated.load(Ordering::Acquire)
    }

    /// A request on it presented a credential of `key`: from now on it counts for that key
    /// (the first key it presented, for its whole life), unless the key is at its bound (or,
    /// while it waits, every ordinary place is taken).
    pub fn authenticated(&self, key: [u8; 32]) -> Result<(), NoPlace> {
        if self.is_authenticated() {
            return Ok(());
        }
        self.connections.authenticate(self, key)
    }

    /// A request on it presented no credential: it needs a place of its address. At once if it
    /// holds a place; while it waits, once one comes (or its time is up: [`NoPlace`]).
    pub async fn placed(&self) -> Result<(), NoPlace> {
        if self.activity.placed.load(Ordering::Acquire) {
            return Ok(());
        }
        self.connections.place(self).await
    }

    /// Resolves when the connection must be closed: to make room for another, or waiting, once
    /// its time to wait is up without a place.
    pub async fn closed(&self) {
        tokio::select! {
            () = self.activity.evict.notified() => {}
            () = self.connections.expire(self) => {}
        }
    }
}

/// A request under way on a connection; the connection is idle again once dropped.
#[derive(Debug)]
pub struct ActiveRequest {
    link: Link,
}

impl Drop for ActiveRequest {
    fn drop(&mut self) {
        let now = self.link.connections.now();
        self.link.activity.idle_since.store(now, Ordering::Release);
    }
}

#[cfg(test)]
#[path = "connections_tests.rs"]
mod tests;
