//! Runtime benchmark (issue 5): `cargo bench --bench runtime`.
//!
//! Builds a Git repository holding 16 bundles at the format's bounds (64 files, 1 MiB each),
//! prepares it into a corpus (`skillfold prepare`), then measures, in one run:
//!
//! 1. the time to build an agent's catalogue from the prepared corpus (read every byte with
//!    the safe reader, verify every pin) against `sha256sum` over the same 1,024 files;
//! 2. in-process `load_skill` call latency (random skill, body or reference): p50 and p99;
//! 3. the peak RSS of a process holding the 16 snapshots (this binary re-executed with `--hold`).
//!
//! Targets: catalogue build ≤ 1.5× sha256sum; p99 ≤ 20 µs; peak RSS ≤ 40 MiB.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark's report is what it prints"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use skillfold::Runtime;

const BUNDLES: usize = 16;
const FILES: usize = 64;
const TOTAL: usize = 1024 * 1024;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--hold") {
        hold(Path::new(&args[i + 1]));
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = build_corpus(tmp.path());

    // 1. Catalogue build vs sha256sum over the same files.
    let files = corpus_files(&tmp.path().join("corpus/current"));
    let mut ours = Vec::new();
    let mut peer = Vec::new();
    for round in 0..13 {
        let start = Instant::now();
        let runtime = open(&config);
        let catalogue = runtime.catalogue(None).expect("catalogue");
        assert_eq!(catalogue.skills().count(), BUNDLES);
        let ours_t = start.elapsed();
        let start = Instant::now();
        let status = Command::new("sha256sum")
            .args(&files)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("sha256sum");
        assert!(status.success());
        let peer_t = start.elapsed();
        if round >= 3 {
            ours.push(ours_t);
            peer.push(peer_t);
        }
    }
    let (o, p) = (median(&mut ours), median(&mut peer));
    println!(
        "catalogue build (16 x 64 files x 1 MiB, verified): median {:.2} ms",
        ms(o)
    );
    println!(
        "sha256sum over the same 1,024 files:               median {:.2} ms",
        ms(p)
    );
    println!(
        "ratio: {:.2}x (target <= 1.50x)",
        o.as_secs_f64() / p.as_secs_f64()
    );

    // 2. load_skill latency.
    let runtime = open(&config);
    let catalogue = runtime.catalogue(None).expect("catalogue");
    let inputs: Vec<serde_json::Value> = catalogue
        .skills()
        .flat_map(|s| {
            let name = s.pin().name.to_string();
            std::iter::once(json!({"name": name, "reference": null})).chain(
                s.references()
                    .iter()
                    .take(8)
                    .map(move |r| json!({"name": name, "reference": r})),
            )
        })
        .collect();
    let mut samples = Vec::with_capacity(20_000);
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for i in 0..22_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let input = &inputs[(state % inputs.len() as u64) as usize];
        let start = Instant::now();
        let out = catalogue.call("load_skill", input).expect("served");
        let t = start.elapsed();
        std::hint::black_box(out);
        if i >= 2_000 {
            samples.push(t);
        }
    }
    samples.sort();
    let pct = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    println!(
        "load_skill latency over {} calls (bodies and 16 KiB references): p50 {:.1} us, p99 {:.1} us (target p99 <= 20 us)",
        samples.len(),
        us(pct(0.50)),
        us(pct(0.99))
    );

    // 3. Peak RSS of a process holding the snapshots.
    let exe = std::env::current_exe().expect("exe");
    let out = Command::new(exe)
        .arg("--hold")
        .arg(&config)
        .output()
        .expect("hold");
    print!("{}", String::from_utf8_lossy(&out.stdout));
}

/// Loads the corpus, keeps the catalogue, and prints the process's peak RSS.
fn hold(config: &Path) {
    let runtime = open(config);
    let catalogue = runtime.catalogue(None).expect("catalogue");
    assert_eq!(catalogue.skills().count(), BUNDLES);
    let status = fs_err::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .unwrap_or("VmHWM: ?");
    let kib: f64 = hwm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    println!(
        "peak RSS of a process holding 16 maximum-size snapshots: {:.1} MiB (target <= 40 MiB)",
        kib / 1024.0
    );
    std::hint::black_box(&catalogue);
}

/// The runtime of the descriptor at `config`, as a host opens it.
fn open(config: &Path) -> Runtime {
    Runtime::open(config).expect("open").runtime
}

fn git(cwd: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(cwd)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// 16 bundles at the bounds in a repository, prepared into `root/corpus`; returns the descriptor.
fn build_corpus(root: &Path) -> PathBuf {
    let work = root.join("work");
    let mut pins = String::new();
    for b in 0..BUNDLES {
        let name = format!("bench-{b:02}");
        let dir = work.join("skills").join(&name);
        fs_err::create_dir_all(dir.join("references")).expect("mkdir");
        let skill = format!(
            "---\nname: {name}\ndescription: Benchmark bundle {b} at the bounds.\n---\n# {name}\n"
        );
        fs_err::write(dir.join("SKILL.md"), &skill).expect("write");
        let rest = TOTAL - skill.len();
        let each = rest / (FILES - 1);
        for i in 0..FILES - 1 {
            let size = each + if i == 0 { rest % (FILES - 1) } else { 0 };
            let line = format!("bundle {b} file {i}: lorem ipsum dolor sit amet\n");
            let text: String = line
                .repeat(size / line.len() + 1)
                .chars()
                .take(size)
                .collect();
            fs_err::write(dir.join("references").join(format!("r{i:02}.md")), text).expect("write");
        }
        let digest = skillfold::Bundle::read_dir(&dir).expect("valid").digest();
        pins.push_str(&format!(
            "        - {{ name: {name}, version: '1', hash: {digest} }}\n"
        ));
    }
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "bench"]);
    let commit = git(&work, &["rev-parse", "HEAD"]);
    let config = root.join("skillfold.yaml");
    fs_err::write(
        &config,
        format!(
            "skills:\n  - git:\n      source: {}\n      revision: {commit}\n      directory: corpus\n      root: skills\n      approved:\n{pins}",
            work.display()
        ),
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(["prepare", "--concurrency", "1", "-c"])
        .arg(&config)
        .output()
        .expect("skillfold prepare");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    config
}

fn corpus_files(current: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![current.canonicalize().expect("current")];
    while let Some(dir) = todo.pop() {
        for entry in fs_err::read_dir(&dir).expect("dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    assert_eq!(out.len(), BUNDLES * FILES);
    out
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
