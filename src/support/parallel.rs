//! A small bounded worker pool over a slice: results in input order, at most `workers` threads.
//! Each worker may own a state of its own ([`map_with`]): a handle that is `Send` but not `Sync`
//! (a gix repository, whose object caches are per handle) is cloned once per worker, not shared.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Applies `f` to every item on up to `workers` threads; results keep the order of `items`.
pub fn map<T: Sync, R: Send>(items: &[T], workers: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = workers.clamp(1, items.len().max(1));
    map_with(items, vec![(); workers], |(), item| f(item))
}

/// Applies `f` to every item on one thread per state of `states` (at most one per item), each
/// worker handing its own state to `f`; results keep the order of `items`. With one state (or
/// one item) everything runs on the calling thread.
pub fn map_with<T: Sync, S: Send, R: Send>(
    items: &[T],
    mut states: Vec<S>,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    states.truncate(items.len().max(1));
    if states.len() <= 1 {
        let Some(mut state) = states.pop() else {
            return Vec::new();
        };
        return items.iter().map(|item| f(&mut state, item)).collect();
    }
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<R>> = Vec::new();
    slots.resize_with(items.len(), || None);
    let slots = Mutex::new(slots);
    std::thread::scope(|scope| {
        for mut state in states {
            let (next, slots, f) = (&next, &slots, &f);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let result = f(&mut state, item);
                    slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                }
            });
        }
    });
    slots
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every index is taken by exactly one worker"))
        .collect()
}

/// The number of cores, at least 1.
pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order_with_many_workers() {
        let items: Vec<u32> = (0..100).collect();
        let out = super::map(&items, 8, |x| x * 2);
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert_eq!(super::map(&[] as &[u32], 4, |x| *x), Vec::<u32>::new());
    }

    // Each worker uses its own state and only its own: every item is counted once, by the one
    // state that took it, and the states never exceed the items.
    #[test]
    fn each_worker_owns_its_state() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let items: Vec<u32> = (0..50).collect();
        let taken = AtomicUsize::new(0);
        let out = super::map_with(&items, vec![0u32; 3], |seen, x| {
            *seen += 1;
            taken.fetch_add(1, Ordering::Relaxed);
            x + 1
        });
        assert_eq!(out, items.iter().map(|x| x + 1).collect::<Vec<_>>());
        assert_eq!(taken.load(Ordering::Relaxed), 50);
        let one = super::map_with(&[7u32], vec![String::new(); 4], |s, x| {
            s.push('x');
            (s.len(), *x)
        });
        assert_eq!(one, vec![(1, 7)]);
        assert!(super::map_with(&[] as &[u32], vec![(); 2], |(), x| *x).is_empty());
    }
}
