//! In-process `load_skill` latency for one skill, the Rust side of `benches/python_call.py`
//! (which runs it in the same run as the Python loop and reports the difference):
//! `cargo bench --bench call_latency -- SKILL_DIR HASH CALLS`. Prints one JSON line with p50 and
//! p99 in nanoseconds for `CALLS` calls of the body, after a warm-up.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark's report is what it prints"
)]

use std::time::Instant;

use serde_json::json;
use skillfold::Runtime;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [dir, hash, calls] = args.as_slice() else {
        eprintln!("usage: call_latency SKILL_DIR HASH CALLS");
        std::process::exit(2);
    };
    let calls: usize = calls.parse().expect("CALLS is a count");
    let name = std::path::Path::new(dir)
        .file_name()
        .and_then(|n| n.to_str())
        .expect("a skill folder name")
        .to_owned();
    let built = Runtime::builder()
        .local(name.clone(), "1", dir, hash.clone())
        .build()
        .expect("a valid configuration");
    assert!(built.refused.is_empty(), "{:?}", built.refused);
    let catalogue = built.runtime.catalogue(None).expect("catalogue");
    let input = json!({ "name": name, "reference": null });
    for _ in 0..calls / 10 {
        catalogue.call("load_skill", &input).expect("served");
    }
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = Instant::now();
        let served = catalogue.call("load_skill", &input).expect("served");
        times.push(start.elapsed().as_nanos());
        std::hint::black_box(served);
    }
    times.sort_unstable();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    println!(
        "{}",
        json!({ "p50_ns": at(0.50), "p99_ns": at(0.99), "calls": calls })
    );
}
