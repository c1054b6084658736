//! Script runner benchmark (issue 6): `cargo bench --bench runner`.
//!
//! The overhead of `skill_run_script` (all checks, hashing, the bootstrap, stdin, process group,
//! pipes, cleanup) over running the same interpreter directly with `python3 -I -c 'pass'`,
//! measured interleaved in one run. Target: at most 5 ms at the median.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark's report is what it prints"
)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use skillfold::Runtime;

fn main() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("bench");
    fs_err::create_dir_all(dir.join("scripts")).expect("mkdir");
    fs_err::write(
        dir.join("SKILL.md"),
        "---\nname: bench\ndescription: Runner benchmark.\n---\n",
    )
    .expect("write");
    fs_err::write(dir.join("scripts/noop.py"), "pass\n").expect("write");
    let digest = skillfold::Bundle::read_dir(&dir).expect("valid").digest();
    let python = real_python();
    let sha = {
        use sha2::Digest as _;
        sha2::Sha256::digest(b"pass\n")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let config = tmp.path().join("skillfold.yaml");
    fs_err::write(
        &config,
        format!(
            "skills:\n  - local: {{ name: bench, version: '1', directory: {}, hash: {digest} }}\nscripts:\n  python: {python}\n  allowlist:\n    - {{ skill: bench, script: scripts/noop.py, sha256: {sha} }}\n",
            dir.display()
        ),
    )
    .expect("write");
    let catalogue = Runtime::open(&config)
        .expect("open")
        .runtime
        .catalogue(None)
        .expect("catalogue");
    let input = json!({"skill": "bench", "script": "scripts/noop.py", "args": []});

    let (mut ours, mut direct) = (Vec::new(), Vec::new());
    for round in 0..65 {
        let start = Instant::now();
        catalogue.call("skill_run_script", &input).expect("ran");
        let a = start.elapsed();
        let start = Instant::now();
        let status = Command::new(&python)
            .args(["-I", "-c", "pass"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .expect("python");
        assert!(status.success());
        let b = start.elapsed();
        if round >= 5 {
            ours.push(a);
            direct.push(b);
        }
    }
    let (o, d) = (median(&mut ours), median(&mut direct));
    println!("skill_run_script (no-op helper): median {:.2} ms", ms(o));
    println!("python3 -I -c 'pass' directly:   median {:.2} ms", ms(d));
    println!(
        "overhead at the median: {:.2} ms (target <= 5 ms)",
        ms(o) - ms(d)
    );
}

fn real_python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
