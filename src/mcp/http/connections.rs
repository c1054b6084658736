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
//! An address at its bound is not refused at once, as a burst of new connections each about to
//! present a token (a proxy opening many at a time) would be: a new connection waits up to
//! [`ADMISSION_WAIT`] for a place of its address (one that authenticates gives its place back),
//! then is closed; at most [`MAX_WAITING`] wait at once, and when all do, a newcomer takes the
//! waiting place of the oldest that has sent nothing. Once it has sent its first bytes, it
//! may also take the place of that address's unauthenticated connection idle longest, if one has
//! been idle (no request under way, none since its accept or its last answer) for
//! [`EVICTION_IDLE`]; that one is closed. A flood that sends nothing thus waits for its own
//! places, while a client that speaks recycles them. Connections over the total get the probe
//! headroom, at most [`PROBE_PLACES_PER_CLIENT`] of it per address: an unauthenticated flood from
//! one address holds its own places only, never an authenticated client's, and at most a quarter
//! of the probes'.

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

/// How long an unauthenticated connection must have been idle before a new connection from its
/// address, at its bound, may take its place.
pub const EVICTION_IDLE: Duration = Duration::from_secs(2);

/// How long a new connection from an address at its bound waits for a place.
pub const ADMISSION_WAIT: Duration = Duration::from_secs(5);

/// At most this many connections wait for a place at once, from every address together.
pub const MAX_WAITING: usize = 256;

/// How often a waiting connection looks again for an unauthenticated connection idle long enough.
const RECHECK: Duration = Duration::from_millis(50);

/// What a new connection may do.
#[derive(Debug)]
pub enum Admission {
    /// Everything.
    Full(Slot),
    /// Only the probes, once (the ordinary places are taken).
    Probe(Slot),
    /// Wait for a place of its address ([`Waiter::admitted`]).
    Wait(Waiter),
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
    /// Closed to make room; its place was given to another.
    Evicted,
}

/// What is shared between a connection's task and the counts: when it went idle, and the signal
/// that closes it.
#[derive(Debug)]
struct Activity {
    id: u64,
    /// Milliseconds since the counts' epoch when it last went idle; [`BUSY`] during a request.
    idle_since: AtomicU64,
    evict: Notify,
    authenticated: AtomicBool,
}

const BUSY: u64 = u64::MAX;

#[derive(Debug, Default)]
struct Counts {
    /// Every ordinary connection (not the probe headroom's).
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
    waiters: Vec<Arc<Turn>>,
    classes: HashMap<u64, Class>,
    next_id: u64,
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

/// Why a connection's first authenticated request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyFull;

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
        let admission = match self.place(&mut counts, client, false) {
            Some(admission) => admission,
            None => {
                // Every waiting place taken: the oldest waiter that has sent nothing gives way
                // (a flood that sends nothing cannot keep the waiting room from clients).
                let room = counts.waiters.len() < MAX_WAITING || {
                    let silent = counts
                        .waiters
                        .iter()
                        .position(|t| !t.spoken.load(Ordering::Acquire));
                    silent
                        .map(|i| counts.waiters.remove(i).give_up.notify_one())
                        .is_some()
                };
                if room {
                    let turn = Arc::new(Turn {
                        id: counts.next_id,
                        spoken: AtomicBool::new(false),
                        give_up: Notify::new(),
                    });
                    counts.next_id += 1;
                    counts.waiters.push(Arc::clone(&turn));
                    Admission::Wait(Waiter {
                        connections: Arc::clone(self),
                        client,
                        turn,
                    })
                } else {
                    self.metrics.connection_refused("client");
                    Admission::Refused
                }
            }
        };
        self.publish(&counts);
        admission
    }

    /// A place for `client` now, or `None` when its address is at its bound (and, if
    /// `may_evict`, no unauthenticated connection of it has been idle long enough to give way).
    fn place(
        self: &Arc<Self>,
        counts: &mut Counts,
        client: IpAddr,
        may_evict: bool,
    ) -> Option<Admission> {
        let mine = counts.unauthenticated.get(&client).map_or(0, Vec::len);
        if mine >= self.max_per_client {
            if !may_evict {
                return None;
            }
            self.evict(counts, client)?;
        }
        if counts.total < self.max_total {
            counts.total += 1;
            counts.unauthenticated_total += 1;
            let id = self.register(counts, Class::Unauthenticated);
            let activity = Arc::new(Activity {
                id,
                idle_since: AtomicU64::new(self.now()),
                evict: Notify::new(),
                authenticated: AtomicBool::new(false),
            });
            counts
                .unauthenticated
                .entry(client)
                .or_default()
                .push(Arc::clone(&activity));
            return Some(Admission::Full(self.slot(client, activity)));
        }
        let probes = counts.probes.get(&client).copied().unwrap_or(0);
        if counts.probes_total < PROBE_HEADROOM && probes < PROBE_PLACES_PER_CLIENT {
            counts.probes_total += 1;
            *counts.probes.entry(client).or_insert(0) += 1;
            let id = self.register(counts, Class::Probe);
            let activity = Arc::new(Activity {
                id,
                idle_since: AtomicU64::new(BUSY),
                evict: Notify::new(),
                authenticated: AtomicBool::new(false),
            });
            return Some(Admission::Probe(self.slot(client, activity)));
        }
        self.metrics.connection_refused("server");
        Some(Admission::Refused)
    }

    fn register(&self, counts: &mut Counts, class: Class) -> u64 {
        let id = counts.next_id;
        counts.next_id += 1;
        counts.classes.insert(id, class);
        id
    }

    fn slot(self: &Arc<Self>, client: IpAddr, activity: Arc<Activity>) -> Slot {
        Slot {
            link: Link {
                connections: Arc::clone(self),
                client,
                activity,
            },
        }
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
        counts.classes.insert(victim.id, Class::Evicted);
        victim.evict.notify_one();
        self.metrics.connection_evicted();
        Some(())
    }

    fn release(&self, link: &Link) {
        let mut counts = self.counts();
        let class = counts.classes.remove(&link.activity.id);
        match class {
            Some(Class::Unauthenticated) => {
                Self::forget_unauthenticated(&mut counts, link);
                counts.total = counts.total.saturating_sub(1);
                self.freed.notify_waiters();
            }
            Some(Class::Key(key)) => {
                decrement(&mut counts.keys, &key);
                counts.authenticated_total = counts.authenticated_total.saturating_sub(1);
                counts.total = counts.total.saturating_sub(1);
            }
            Some(Class::Probe) => {
                decrement(&mut counts.probes, &link.client);
                counts.probes_total = counts.probes_total.saturating_sub(1);
            }
            Some(Class::Evicted) | None => {}
        }
        self.publish(&counts);
    }

    fn forget_unauthenticated(counts: &mut Counts, link: &Link) {
        if let Some(list) = counts.unauthenticated.get_mut(&link.client) {
            list.retain(|a| a.id != link.activity.id);
            if list.is_empty() {
                counts.unauthenticated.remove(&link.client);
            }
        }
        counts.unauthenticated_total = counts.unauthenticated_total.saturating_sub(1);
    }

    /// Moves `link` from its address's count to `key`'s, unless that key is at its bound.
    fn authenticate(&self, link: &Link, key: [u8; 32]) -> Result<(), KeyFull> {
        let mut counts = self.counts();
        if counts.classes.get(&link.activity.id) != Some(&Class::Unauthenticated) {
            return Ok(());
        }
        if counts.keys.get(&key).copied().unwrap_or(0) >= self.max_per_key {
            self.metrics.connection_refused("token");
            return Err(KeyFull);
        }
        Self::forget_unauthenticated(&mut counts, link);
        *counts.keys.entry(key).or_insert(0) += 1;
        counts.authenticated_total += 1;
        counts.classes.insert(link.activity.id, Class::Key(key));
        link.activity.authenticated.store(true, Ordering::Release);
        self.freed.notify_waiters();
        self.publish(&counts);
        Ok(())
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

/// A waiting connection's turn: whether it has sent bytes, and the signal that makes it give up
/// its waiting place to a newcomer.
#[derive(Debug)]
struct Turn {
    id: u64,
    spoken: AtomicBool,
    give_up: Notify,
}

/// A connection waiting for a place of its address; counted as waiting until dropped.
#[derive(Debug)]
pub struct Waiter {
    connections: Arc<Connections>,
    client: IpAddr,
    turn: Arc<Turn>,
}

impl Waiter {
    /// Waits up to [`ADMISSION_WAIT`] for a place for `stream`: [`Admission::Full`] or
    /// [`Admission::Probe`], or [`Admission::Refused`] when none came. Once `stream` has bytes
    /// to read, an idle unauthenticated connection of its address may give way to it.
    pub async fn admitted(self, stream: &tokio::net::TcpStream) -> Admission {
        let deadline = tokio::time::Instant::now() + ADMISSION_WAIT;
        let mut spoken = false;
        let mut first = [0u8; 1];
        loop {
            let freed = self.connections.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut counts = self.connections.counts();
                if let Some(admission) = self.connections.place(&mut counts, self.client, spoken) {
                    self.connections.publish(&counts);
                    return admission;
                }
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                self.connections.metrics.connection_refused("client");
                return Admission::Refused;
            }
            tokio::select! {
                () = freed => {}
                () = tokio::time::sleep((deadline - now).min(RECHECK)) => {}
                // A peek, not a read: the bytes stay for hyper. (Readiness alone may be false.)
                _ = stream.peek(&mut first), if !spoken => {
                    spoken = true;
                    self.turn.spoken.store(true, Ordering::Release);
                }
                () = self.turn.give_up.notified() => {
                    self.connections.metrics.connection_refused("client");
                    return Admission::Refused;
                }
            }
        }
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let mut counts = self.connections.counts();
        counts.waiters.retain(|t| t.id != self.turn.id);
        self.connections.publish(&counts);
    }
}

/// One connection's place; given back when dropped.
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
    client: IpAddr,
    activity: Arc<Activity>,
}

impl Link {
    /// Marks a request under way until the guard is dropped (held by its answer's body).
    pub fn busy(&self) -> ActiveRequest {
        self.activity.idle_since.store(BUSY, Ordering::Release);
        ActiveRequest { link: self.clone() }
    }

    /// Whether it counts for a key already (it is never closed to make room then).
    pub fn is_authenticated(&self) -> bool {
        self.activity.authenticated.load(Ordering::Acquire)
    }

    /// A request on it presented a credential of `key`: from now on it counts for that key
    /// (the first key it presented, for its whole life), unless the key is at its bound.
    pub fn authenticated(&self, key: [u8; 32]) -> Result<(), KeyFull> {
        if self.is_authenticated() {
            return Ok(());
        }
        self.connections.authenticate(self, key)
    }

    /// Resolves when the connection was closed to make room for another.
    pub async fn evicted(&self) {
        self.activity.evict.notified().await;
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
mod tests {
    use super::*;

    fn connections(total: usize, per_client: usize, per_key: usize) -> Arc<Connections> {
        Connections::new(total, per_client, per_key, Arc::new(Metrics::new()))
    }

    fn slot(admission: Admission) -> Slot {
        match admission {
            Admission::Full(slot) => slot,
            other => panic!("not a full place: {other:?}"),
        }
    }

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));

    #[test]
    fn authenticated_connections_leave_their_address_count() {
        let connections = connections(100, 2, 100);
        let first = slot(connections.admit(A));
        let _busy = first.link().busy();
        let second = slot(connections.admit(A));
        let _also_busy = second.link().busy();
        // At the address's bound, with no idle connection to give way: wait.
        assert!(matches!(connections.admit(A), Admission::Wait(_)));
        first.link().authenticated([1; 32]).unwrap();
        assert_eq!(connections.open(), (1, 1, 0, 0));
        let third = slot(connections.admit(A));
        third.link().authenticated([1; 32]).unwrap();
        drop(first);
        assert_eq!(connections.open(), (1, 1, 0, 0));
    }

    #[test]
    fn a_key_over_its_bound_is_refused_and_others_are_not() {
        let connections = connections(100, 100, 2);
        let held: Vec<Slot> = (0..3).map(|_| slot(connections.admit(A))).collect();
        held[0].link().authenticated([1; 32]).unwrap();
        held[1].link().authenticated([1; 32]).unwrap();
        assert_eq!(held[2].link().authenticated([1; 32]), Err(KeyFull));
        held[2].link().authenticated([2; 32]).unwrap();
        // Counted for its first key, whatever it presents later.
        held[0].link().authenticated([2; 32]).unwrap();
        assert_eq!(connections.open(), (0, 3, 0, 0));
    }

    #[test]
    fn over_the_total_probes_get_their_own_places_a_few_per_address() {
        let connections = connections(2, 100, 100);
        let _held: Vec<Slot> = (0..2).map(|_| slot(connections.admit(A))).collect();
        let probes: Vec<Admission> = (0..PROBE_PLACES_PER_CLIENT)
            .map(|_| connections.admit(A))
            .collect();
        assert!(probes.iter().all(|p| matches!(p, Admission::Probe(_))));
        assert!(matches!(connections.admit(A), Admission::Refused));
        assert!(matches!(connections.admit(B), Admission::Probe(_)));
    }

    /// A connected pair: the server's end and the client's.
    async fn pair() -> (tokio::net::TcpStream, tokio::net::TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        (listener.accept().await.unwrap().0, client)
    }

    #[tokio::test]
    async fn a_waiter_gets_a_place_given_back_or_once_it_speaks_an_idle_ones() {
        use tokio::io::AsyncWriteExt as _;
        let connections = connections(100, 2, 100);
        let idle = slot(connections.admit(A));
        let busy_slot = slot(connections.admit(A));
        let _busy = busy_slot.link().busy();
        // At the bound: the third waits, and gets the place the first gives back when it
        // authenticates.
        let Admission::Wait(waiter) = connections.admit(A) else {
            panic!("no wait")
        };
        let link = idle.link();
        let (server_end, _client_end) = pair().await;
        let waited = tokio::spawn(async move { waiter.admitted(&server_end).await });
        tokio::time::sleep(Duration::from_millis(10)).await;
        link.authenticated([1; 32]).unwrap();
        let third = slot(waited.await.unwrap());
        assert_eq!(connections.open(), (2, 1, 0, 0));
        // The newcomer idles long enough to give way, but only to a connection that speaks: a
        // silent one waits, then gives up.
        std::thread::sleep(EVICTION_IDLE);
        let evicted = third.link();
        let Admission::Wait(silent) = connections.admit(A) else {
            panic!("no wait")
        };
        let (silent_end, _silent_client) = pair().await;
        assert!(matches!(
            silent.admitted(&silent_end).await,
            Admission::Refused
        ));
        let Admission::Wait(speaking) = connections.admit(A) else {
            panic!("no wait")
        };
        let (speaking_end, mut speaking_client) = pair().await;
        speaking_client.write_all(b"GET /").await.unwrap();
        let fourth = slot(speaking.admitted(&speaking_end).await);
        tokio::time::timeout(Duration::from_secs(1), evicted.evicted())
            .await
            .expect("closed");
        drop(third);
        assert_eq!(connections.open(), (2, 1, 0, 0));
        drop(fourth);
        drop(busy_slot);
        drop(idle);
        assert_eq!(connections.open(), (0, 0, 0, 0));
    }

    #[tokio::test]
    async fn waiting_is_bounded_and_a_silent_waiter_gives_way_to_a_newcomer() {
        let connections = connections(100, 1, 100);
        let held = slot(connections.admit(A));
        let _busy = held.link().busy();
        let wait = |admission: Admission| match admission {
            Admission::Wait(waiter) => waiter,
            other => panic!("no wait: {other:?}"),
        };
        let mut waiters: Vec<Waiter> = (0..MAX_WAITING)
            .map(|_| wait(connections.admit(A)))
            .collect();
        assert_eq!(connections.open(), (1, 0, 0, MAX_WAITING));
        // Every waiting place taken: a newcomer takes the oldest silent waiter's, which gives
        // up at once.
        let newcomer = wait(connections.admit(A));
        assert_eq!(connections.open(), (1, 0, 0, MAX_WAITING));
        let oldest = waiters.remove(0);
        let (end, _client) = pair().await;
        // Refused on its first poll: it does not wait for its time to run out.
        let at_once = tokio::time::timeout(Duration::ZERO, oldest.admitted(&end)).await;
        assert!(matches!(at_once, Ok(Admission::Refused)), "{at_once:?}");
        // Once every waiter has spoken, a newcomer is refused; another address is not.
        for waiter in waiters.iter().chain([&newcomer]) {
            waiter.turn.spoken.store(true, Ordering::Release);
        }
        assert!(matches!(connections.admit(A), Admission::Refused));
        assert!(matches!(connections.admit(B), Admission::Full(_)));
        // A waiter nobody displaces gives up after ADMISSION_WAIT.
        let last = waiters.pop().expect("a waiter");
        drop(waiters);
        drop(newcomer);
        let (end, _client) = pair().await;
        let admitted = last.admitted(&end);
        tokio::pin!(admitted);
        // It waits (not refused at its first poll), then is refused when its time runs out.
        let first = tokio::time::timeout(Duration::ZERO, &mut admitted).await;
        assert!(first.is_err(), "{first:?}");
        assert!(matches!(admitted.await, Admission::Refused));
        assert_eq!(connections.open(), (1, 0, 0, 0));
    }
}
