#!/usr/bin/env python3
"""Benchmark: whole-process `skillfold hash` over 16 maximum-size bundles against `sha256sum`
over the same files, measured side by side in one run (interleaved rounds, medians).

Each bundle is at the format's bounds: 64 regular files (SKILL.md included) adding up to exactly
1 MiB. `skillfold hash` gets the 16 directories in one invocation; `sha256sum` gets the 1,024
files in one invocation.

Usage: python3 benches/hash_vs_sha256sum.py [ROUNDS]   (builds the release binary first)
Target (issue 2): skillfold wall time <= 1.5 x sha256sum wall time.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLES, FILES, TOTAL = 16, 64, 1024 * 1024


def make_bundles(base):
    dirs, files = [], []
    for b in range(BUNDLES):
        name = f"bench-{b:02d}"
        d = os.path.join(base, name)
        os.makedirs(os.path.join(d, "references"))
        skill = f"---\nname: {name}\ndescription: Benchmark bundle {b} at the format's bounds.\n---\n# {name}\n"
        remaining = TOTAL - len(skill)
        each = remaining // (FILES - 1)
        paths = [os.path.join(d, "SKILL.md")]
        with open(paths[0], "w") as f:
            f.write(skill)
        for i in range(FILES - 1):
            size = each + (remaining % (FILES - 1) if i == 0 else 0)
            line = f"bundle {b} file {i} - lorem ipsum dolor sit amet\n"
            text = (line * (size // len(line) + 1))[:size]
            p = os.path.join(d, "references", f"r{i:02d}.md")
            with open(p, "w") as f:
                f.write(text)
            paths.append(p)
        dirs.append(d)
        files.extend(paths)
    return dirs, files


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def interleaved(ours_cmd, peer_cmd, rounds):
    """Wall times of both commands: 3 untimed warm-ups each (page cache, binaries), then
    `rounds` rounds whose order alternates. Returns (ours, peer) lists of seconds."""
    for _ in range(3):
        timed(ours_cmd)
        timed(peer_cmd)
    ours, peer = [], []
    for i in range(rounds):
        if i % 2:
            ours.append(timed(ours_cmd))
            peer.append(timed(peer_cmd))
        else:
            peer.append(timed(peer_cmd))
            ours.append(timed(ours_cmd))
    return ours, peer


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "release", "skillfold")
    with tempfile.TemporaryDirectory() as base:
        dirs, files = make_bundles(base)
        ours_cmd = [exe, "hash", *dirs]
        peer_cmd = ["sha256sum", *files]
        ours, peer = interleaved(ours_cmd, peer_cmd, rounds)
    o, p = statistics.median(ours), statistics.median(peer)
    print(f"bundles: {BUNDLES} x {FILES} files x {TOTAL} bytes, rounds: {rounds}")
    print(f"skillfold hash : median {o * 1000:7.2f} ms  (min {min(ours) * 1000:.2f})")
    print(f"sha256sum      : median {p * 1000:7.2f} ms  (min {min(peer) * 1000:.2f})")
    print(f"ratio skillfold/sha256sum: {o / p:.2f}x (target <= 1.50x)")


if __name__ == "__main__":
    main()
