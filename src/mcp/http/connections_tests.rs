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

fn waiting(admission: Admission) -> Slot {
    match admission {
        Admission::Waiting(slot) => slot,
        other => panic!("not waiting: {other:?}"),
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
    // At the address's bound: served waiting.
    let third = waiting(connections.admit(A));
    assert_eq!(connections.open(), (2, 0, 0, 1));
    first.link().authenticated([1; 32]).unwrap();
    assert_eq!(connections.open(), (1, 1, 0, 1));
    drop(third);
    let fourth = slot(connections.admit(A));
    fourth.link().authenticated([1; 32]).unwrap();
    drop(first);
    assert_eq!(connections.open(), (1, 1, 0, 0));
}

#[test]
fn a_key_over_its_bound_is_refused_and_others_are_not() {
    let connections = connections(100, 100, 2);
    let held: Vec<Slot> = (0..3).map(|_| slot(connections.admit(A))).collect();
    held[0].link().authenticated([1; 32]).unwrap();
    held[1].link().authenticated([1; 32]).unwrap();
    assert_eq!(held[2].link().authenticated([1; 32]), Err(NoPlace::Key));
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

/// Behind a proxy: however many connections of its address are unauthenticated, a waiting
/// connection that presents a token gets its key's place at once, within the key's bound and
/// the total; it never takes an idle connection's place.
#[tokio::test]
async fn a_waiting_connection_with_a_token_is_placed_for_its_key_at_once() {
    let connections = connections(4, 1, 2);
    let silent = slot(connections.admit(A));
    let waiters: Vec<Slot> = (0..4).map(|_| waiting(connections.admit(A))).collect();
    assert_eq!(connections.open(), (1, 0, 0, 4));
    waiters[0].link().authenticated([1; 32]).unwrap();
    waiters[1].link().authenticated([1; 32]).unwrap();
    assert_eq!(
        waiters[2].link().authenticated([1; 32]),
        Err(NoPlace::Key),
        "the key's bound"
    );
    waiters[2].link().authenticated([2; 32]).unwrap();
    // Four ordinary places, all taken: a fifth waits for one.
    assert_eq!(
        waiters[3].link().authenticated([3; 32]),
        Err(NoPlace::Server)
    );
    assert_eq!(connections.open(), (1, 3, 0, 1));
    // Placed: never closed for a lack of time to wait; nor is a waiting one that has sent no
    // request yet (the header timeout bounds it).
    let (placed, silent_waiter) = (waiters[0].link(), waiters[3].link());
    let (closed, silent_closed) = tokio::join!(
        tokio::time::timeout(ADMISSION_WAIT * 2, placed.closed()),
        tokio::time::timeout(ADMISSION_WAIT * 2, silent_waiter.closed()),
    );
    assert!(closed.is_err(), "a placed connection was closed");
    assert!(
        silent_closed.is_err(),
        "a silent waiting connection was closed"
    );
    drop(silent);
}

#[tokio::test]
async fn a_waiter_without_a_token_gets_a_place_given_back_or_an_idle_ones() {
    let connections = connections(100, 2, 100);
    let idle = slot(connections.admit(A));
    let busy_slot = slot(connections.admit(A));
    let _busy = busy_slot.link().busy();
    // At the bound: the third waits, and gets the place the first gives back when it
    // authenticates.
    let third = waiting(connections.admit(A));
    let link = third.link();
    let waited = tokio::spawn(async move { link.placed().await });
    tokio::time::sleep(Duration::from_millis(10)).await;
    idle.link().authenticated([1; 32]).unwrap();
    waited.await.unwrap().unwrap();
    assert_eq!(connections.open(), (2, 1, 0, 0));
    // Once it has idled long enough, a waiter whose request shows no token takes its place.
    std::thread::sleep(EVICTION_IDLE);
    let evicted = third.link();
    let fourth = waiting(connections.admit(A));
    fourth.link().placed().await.unwrap();
    tokio::time::timeout(Duration::from_secs(1), evicted.closed())
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
    let mut waiters: Vec<Slot> = (0..MAX_WAITING)
        .map(|_| waiting(connections.admit(A)))
        .collect();
    assert_eq!(connections.open(), (1, 0, 0, MAX_WAITING));
    // Every waiting place taken: a newcomer takes the oldest silent waiter's, which is closed.
    let newcomer = waiting(connections.admit(A));
    assert_eq!(connections.open(), (1, 0, 0, MAX_WAITING));
    let oldest = waiters.remove(0);
    let at_once = tokio::time::timeout(Duration::ZERO, oldest.link().closed()).await;
    assert!(
        at_once.is_ok(),
        "the oldest silent waiter is closed at once"
    );
    // Once every waiter has sent a request, a newcomer is refused; another address is not.
    let requests: Vec<ActiveRequest> = waiters
        .iter()
        .chain([&newcomer])
        .map(|w| w.link().busy())
        .collect();
    assert!(matches!(connections.admit(A), Admission::Refused));
    assert!(matches!(connections.admit(B), Admission::Full(_)));
    // A waiter with its request under way is not closed when its time is up, and its request
    // gets no place of its address once that time is up.
    let last = waiters.pop().expect("a waiter");
    let link = last.link();
    assert_eq!(link.placed().await, Err(NoPlace::Client));
    drop(requests);
    // With no request under way, it is closed.
    tokio::time::timeout(Duration::from_secs(1), link.closed())
        .await
        .expect("closed once idle");
    drop((waiters, newcomer, oldest, last));
    assert_eq!(connections.open(), (1, 0, 0, 0));
}
