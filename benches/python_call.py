#!/usr/bin/env python3
"""Benchmark: `load_skill` from Python against the same call in Rust, in one run.

Makes one skill whose body is 64 KiB, pins it with `skillfold hash`, then alternates rounds of
(a) `cargo bench --bench call_latency` — N in-process Rust calls of the body, p50/p99 — and
(b) N calls of `Catalogue.call("load_skill", …)` from Python through the `skillfold` package
(release build, installed into a throwaway venv under target/), timed around each call with
`time.perf_counter_ns`. The overhead reported is Python's figure minus Rust's, per round, and
its median over the rounds. Target: ≤ 10 µs overhead per call (p50).

Usage: python3 benches/python_call.py [CALLS] [ROUNDS]
Environment: CARGO_TARGET_DIR, BENCH_PYTHON (a Python with `skillfold` installed: skip the
venv and the build).
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepare_vs_git import ROOT, TARGET_DIR, release_binary  # noqa: E402

PYTHON_LOOP = r"""
import json, sys, time, skillfold
skill, digest, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
name = skill.rstrip("/").rsplit("/", 1)[-1]
catalogue = skillfold.Runtime.builder().local(name, "1", skill, digest).build().catalogue()
arguments = {"name": name, "reference": None}
for _ in range(calls // 10):
    catalogue.call("load_skill", arguments)
times = []
clock = time.perf_counter_ns
for _ in range(calls):
    start = clock()
    output, record = catalogue.call("load_skill", arguments)
    times.append(clock() - start)
times.sort()
at = lambda q: times[min(int(len(times) * q), len(times) - 1)]
print(json.dumps({"p50_ns": at(0.5), "p99_ns": at(0.99), "bytes": len(output["content"])}))
"""


def python_with_package():
    if os.environ.get("BENCH_PYTHON"):
        return os.environ["BENCH_PYTHON"]
    venv = os.path.join(TARGET_DIR, "bench-python-venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", ROOT], check=True,
                   env=dict(os.environ, CARGO_TARGET_DIR=TARGET_DIR))
    return python


def make_skill(parent):
    skill = os.path.join(parent, "big-body")
    os.makedirs(skill)
    line = "Follow the step that matches the input; record what you did and why.\n"
    body = "# Big body\n\n" + line * (65536 // len(line) - 1)
    with open(os.path.join(skill, "SKILL.md"), "w") as f:
        f.write("---\nname: big-body\ndescription: A skill with a 64 KiB body.\n---\n" + body[:65000])
    return skill


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    binary = release_binary()
    python = python_with_package()
    env = dict(os.environ, CARGO_TARGET_DIR=TARGET_DIR)
    with tempfile.TemporaryDirectory() as tmp:
        skill = make_skill(tmp)
        digest = json.loads(subprocess.run([binary, "hash", "--json", skill], check=True,
                                           capture_output=True, text=True).stdout)["hash"]
        subprocess.run(["cargo", "bench", "--locked", "--quiet", "--bench", "call_latency", "--no-run"],
                       cwd=ROOT, env=env, check=True, capture_output=True)
        rust, py = [], []
        for _ in range(rounds):
            out = subprocess.run(["cargo", "bench", "--locked", "--quiet", "--bench", "call_latency",
                                  "--", skill, digest, str(calls)],
                                 cwd=ROOT, env=env, check=True, capture_output=True, text=True)
            rust.append(json.loads(out.stdout.strip().splitlines()[-1]))
            out = subprocess.run([python, "-c", PYTHON_LOOP, skill, digest, str(calls)],
                                 check=True, capture_output=True, text=True)
            py.append(json.loads(out.stdout))
    us = lambda ns: ns / 1000
    for i, (r, p) in enumerate(zip(rust, py)):
        print(f"round {i + 1}: Rust p50 {us(r['p50_ns']):.2f} µs p99 {us(r['p99_ns']):.2f} µs | "
              f"Python p50 {us(p['p50_ns']):.2f} µs p99 {us(p['p99_ns']):.2f} µs | "
              f"overhead p50 {us(p['p50_ns'] - r['p50_ns']):.2f} µs")
    med = lambda rows, key: statistics.median(row[key] for row in rows)
    overhead = statistics.median(p["p50_ns"] - r["p50_ns"] for r, p in zip(rust, py))
    print(json.dumps({
        "body_bytes": py[0]["bytes"], "calls": calls, "rounds": rounds,
        "rust_p50_us": us(med(rust, "p50_ns")), "rust_p99_us": us(med(rust, "p99_ns")),
        "python_p50_us": us(med(py, "p50_ns")), "python_p99_us": us(med(py, "p99_ns")),
        "overhead_p50_us": us(overhead),
        "overhead_p99_us": us(med(py, "p99_ns") - med(rust, "p99_ns")),
        "target_overhead_us": 10,
    }))


if __name__ == "__main__":
    main()
